package app

import (
	"context"

	"jobdesk/app/csvfamily"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
)

// The CSV schemas (layouts) a person saved from the window, as the service API offers them to
// the window and the command line; app/csvfamily keeps them (schemas.go there), in the data
// folder's schemas/ folder.

// SchemaDir is the folder under the data folder that holds saved CSV schemas.
const SchemaDir = csvfamily.SchemaDir

// SavedSchema is one saved CSV schema: the schema and how a job that uses it runs.
type SavedSchema = csvfamily.SavedSchema

// CSVPlan is how a CSV file dropped on the window will run.
type CSVPlan = csvfamily.Plan

// SchemaFile returns the file a schema named name is saved in.
func (a *App) SchemaFile(name string) string { return csvfamily.SchemaFile(a.DataDir(), name) }

// SaveSchema checks s (its schema must compile and its tolerance be in range) and writes it to
// schemas/NAME.json, replacing a schema of the same name. It returns the file written.
func (a *App) SaveSchema(s SavedSchema) (string, error) { return csvfamily.SaveSchema(a.DataDir(), s) }

// LoadSavedSchema reads a schema file (a saved one, or any --schema file).
func LoadSavedSchema(file string) (SavedSchema, error) { return csvfamily.LoadSavedSchema(file) }

// SavedSchemas returns the saved schemas by name. A file that no longer reads is skipped.
func (a *App) SavedSchemas() ([]SavedSchema, error) { return csvfamily.SavedSchemas(a.DataDir()) }

// DeleteSchema removes the saved schema name.
func (a *App) DeleteSchema(name string) error { return csvfamily.DeleteSchema(a.DataDir(), name) }

// PlanCSV decides how the CSV file at path runs (csvfamily.PlanFile): with the saved schema
// its header fits, with the default user-log schema, or not yet, with the sniffer's proposal.
func (a *App) PlanCSV(path string) (CSVPlan, error) { return csvfamily.PlanFile(a.DataDir(), path) }

// CSVExtra is the run options (SubmitOptions.Extra) that make a CSV job use saved schema s.
func (a *App) CSVExtra(s SavedSchema) map[string]string {
	return csvfamily.RunOptions(a.DataDir(), s)
}

// SubmitCSVWithSchema submits the CSV file at path with saved schema s (and the other run
// options in extra, which the schema's own take precedence over).
func (a *App) SubmitCSVWithSchema(ctx context.Context, path string, s SavedSchema, o SubmitOptions) (job.Job, error) {
	extra := map[string]string{}
	for k, v := range o.Extra {
		extra[k] = v
	}
	for k, v := range a.CSVExtra(s) {
		extra[k] = v
	}
	o.Extra, o.Type = extra, csvjob.Type
	jobs, err := a.Submit(ctx, []string{path}, o)
	if err != nil || len(jobs) == 0 {
		return job.Job{}, err
	}
	return jobs[0], nil
}
