package ui

import (
	"context"
	"time"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// Service is what the window asks of the app: exactly the calls the screens make, so a screen
// can be built against a small fake in a test, and the app behind the window could be a remote
// one. *app.App implements it; Run, which also starts and stops the engine, takes the App itself.
type Service interface {
	// Jobs: read, follow and act on them.
	List(ctx context.Context, f app.ListFilter) ([]job.Job, error)
	Search(ctx context.Context, f app.SearchFilter) ([]job.Job, error)
	Get(ctx context.Context, id int64) (job.Job, error)
	Counts(ctx context.Context) (map[job.Status]int, error)
	History(ctx context.Context, id int64) ([]job.Event, error)
	Subscribe(buffer int) (<-chan job.Event, func())
	Cancel(ctx context.Context, id int64) error
	Retry(ctx context.Context, id int64) (job.Job, error)
	CanRedrive(ctx context.Context, j job.Job) bool
	Redrive(ctx context.Context, id int64) (job.Job, error)
	MapRuns(ctx context.Context, id int64) ([]app.MapRun, error)

	// Submitting work.
	Submit(ctx context.Context, paths []string, o app.SubmitOptions) ([]job.Job, error)
	SubmitGoal(ctx context.Context, g app.GoalRequest) (job.Job, error)
	PlanCSV(path string) (app.CSVPlan, error)
	SubmitCSVWithSchema(ctx context.Context, path string, s app.SavedSchema, o app.SubmitOptions) (job.Job, error)
	SavedSchemas() ([]app.SavedSchema, error)
	SaveSchema(s app.SavedSchema) (string, error)
	DeleteSchema(name string) error

	// Results.
	CSVErrors(ctx context.Context, id int64, offset, limit int) (app.CSVErrorPage, error)
	Document(ctx context.Context, id int64) (app.DocumentView, error)
	GoalOfJob(ctx context.Context, id int64) (app.GoalView, error)
	ExportResult(ctx context.Context, id int64, format, out string) error

	// Settings, metrics and the cloud.
	DataDir() string
	Settings() app.Settings
	SaveSettings(s app.Settings) error
	Metrics(ctx context.Context, since time.Time) (app.MetricsReport, error)
	CloudConfig() (app.CloudConfig, error)
	CloudStatus(ctx context.Context, overrides ...map[string]string) (app.CloudStatus, error)
	CloudDetail(ctx context.Context, id int64) (app.CloudDetail, error)
	CloudConsole(ctx context.Context) (*app.CloudConsole, error)
}

var _ Service = (*app.App)(nil)
