package csvfamily

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"jobdesk/app/family"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
)

// This file keeps the CSV schemas (layouts) a person saved from the window: one JSON file per schema in
// the data folder's schemas/ folder (schemas/NAME.json). A file is a csvjob.Schema exactly as
// `jobdesk csv sniff --json` prints it and `run --schema FILE` reads it, with optional keys for
// what the window's schema dialog also sets (tolerance, a forced encoding or delimiter); the
// schema reader ignores those keys, so the same file works on the command line unchanged.

// SchemaDir is the folder under the data folder that holds saved CSV schemas.
const SchemaDir = "schemas"

// SavedSchema is one saved CSV schema: the schema and how a job that uses it runs.
type SavedSchema struct {
	csvjob.Schema
	// TolerancePercent and ToleranceCount override the tolerance of bad rows (nil: the default).
	TolerancePercent *float64 `json:"tolerate_percent,omitempty"`
	ToleranceCount   *int     `json:"tolerate_count,omitempty"`
	// Encoding and Delimiter force the dialect ("": detected per file).
	Encoding  string `json:"encoding,omitempty"`
	Delimiter string `json:"delimiter,omitempty"`
}

// SchemaFile returns the file a schema named name is saved in, in data folder dataDir.
func SchemaFile(dataDir, name string) string {
	return filepath.Join(dataDir, SchemaDir, schemaFileName(name)+".json")
}

// schemaFileName turns a schema's name into a file name: path separators and characters no
// file system accepts become "_"; Japanese stays.
func schemaFileName(name string) string {
	name = strings.TrimSpace(name)
	var b strings.Builder
	for _, r := range name {
		switch {
		case strings.ContainsRune(`/\:*?"<>|`, r), r < 0x20:
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.Trim(b.String(), ". ")
	if s == "" {
		s = "schema"
	}
	return s
}

// SaveSchema checks s (its schema must compile and its tolerance be in range) and writes it to
// schemas/NAME.json in data folder dataDir, replacing a schema of the same name. It returns the
// file written.
func SaveSchema(dataDir string, s SavedSchema) (string, error) {
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" {
		return "", job.Errorf(job.E014, "the schema needs a name").WithJa("スキーマに名前を付けてください。")
	}
	if err := s.Schema.Compile(); err != nil {
		return "", err
	}
	if p := s.TolerancePercent; p != nil && (*p < 0 || *p > 100) {
		return "", job.Errorf(job.E014, "the tolerance must be a percentage from 0 to 100").
			WithJa("許容率は 0 から 100 までの数で指定してください。")
	}
	if n := s.ToleranceCount; n != nil && *n < 0 {
		return "", job.Errorf(job.E014, "the tolerated count must be 0 or more").WithJa("許容件数は 0 以上で指定してください。")
	}
	o := csvjob.Options{Encoding: s.Encoding, Delimiter: s.Delimiter}
	if err := o.Check(); err != nil {
		return "", err
	}
	b, err := family.IndentedJSON(s)
	if err != nil {
		return "", err
	}
	file := SchemaFile(dataDir, s.Name)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", job.Wrap(job.E009, err, "the schema could not be saved").WithJa("スキーマを保存できませんでした。")
	}
	if err := family.WriteFileAtomic(file, b); err != nil {
		return "", err
	}
	return file, nil
}

// LoadSavedSchema reads a schema file (a saved one, or any --schema file).
func LoadSavedSchema(file string) (SavedSchema, error) {
	var s SavedSchema
	b, err := os.ReadFile(file)
	if err != nil {
		return s, job.Wrap(job.E014, err, fmt.Sprintf("the schema file %s cannot be read", file)).
			WithJa(fmt.Sprintf("スキーマファイル %s を読み取れません。", file))
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, job.Wrap(job.E014, err, "the schema is not valid JSON").WithJa("スキーマが正しいJSONではありません。")
	}
	if err := s.Schema.Compile(); err != nil {
		return s, err
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), ".json")
	}
	return s, nil
}

// SavedSchemas returns the schemas saved in data folder dataDir, by name. A file that no longer
// reads is skipped.
func SavedSchemas(dataDir string) ([]SavedSchema, error) {
	files, err := filepath.Glob(filepath.Join(dataDir, SchemaDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []SavedSchema
	for _, f := range files {
		if s, err := LoadSavedSchema(f); err == nil {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DeleteSchema removes the schema name saved in data folder dataDir.
func DeleteSchema(dataDir, name string) error {
	if err := os.Remove(SchemaFile(dataDir, name)); err != nil && !os.IsNotExist(err) {
		return job.Wrap(job.E009, err, "the schema could not be removed").WithJa("スキーマを削除できませんでした。")
	}
	return nil
}

// Plan is how a CSV file dropped on the window will run.
type Plan struct {
	// Schema is the saved schema whose columns the file's header has (nil: the specifications'
	// user-log schema fits, or Proposal is set).
	Schema *SavedSchema
	// Proposal is the sniffer's reading of a file that no schema fits: the dialog starts from it.
	Proposal *csvjob.SniffResult
}

// NeedsSchema reports whether no schema fits and a person must confirm one first.
func (p Plan) NeedsSchema() bool { return p.Proposal != nil }

// PlanFile decides how the CSV file at path runs: with the schema saved in data folder dataDir
// whose columns are exactly
// the file's header (or, failing that, whose required columns the header has), with the
// default user-log schema when it fits, or not yet, with the sniffer's proposal for a dialog. A
// file the sniffer cannot read (binary, empty) gets an empty plan: submitting it reports why.
func PlanFile(dataDir, path string) (Plan, error) {
	res, err := csvjob.Sniff(path)
	if err != nil {
		return Plan{}, nil
	}
	header := res.Schema.Names()
	if fits(csvjob.DefaultSchema(), header, true) {
		return Plan{}, nil
	}
	saved, err := SavedSchemas(dataDir)
	if err != nil {
		return Plan{}, err
	}
	for _, exact := range []bool{true, false} {
		for i := range saved {
			if fits(&saved[i].Schema, header, !exact) {
				return Plan{Schema: &saved[i]}, nil
			}
		}
	}
	return Plan{Proposal: res}, nil
}

// fits reports whether a header suits schema s: with requiredOnly, every required column is
// present (as a run checks it); without, the header names exactly s's columns, in any order.
func fits(s *csvjob.Schema, header []string, requiredOnly bool) bool {
	have := map[string]bool{}
	for _, h := range header {
		have[strings.TrimSpace(h)] = true
	}
	if !requiredOnly && len(have) != len(s.Columns) {
		return false
	}
	for _, c := range s.Columns {
		if !have[c.Name] && (c.Required || !requiredOnly) {
			return false
		}
	}
	return true
}

// RunOptions is the run options (SubmitOptions.Extra) that make a CSV job use schema s saved in
// data folder dataDir.
func RunOptions(dataDir string, s SavedSchema) map[string]string {
	extra := map[string]string{"schema": SchemaFile(dataDir, s.Name)}
	if s.TolerancePercent != nil {
		extra["tolerate-percent"] = strconv.FormatFloat(*s.TolerancePercent, 'f', -1, 64)
	}
	if s.ToleranceCount != nil {
		extra["tolerate-count"] = strconv.Itoa(*s.ToleranceCount)
	}
	if s.Encoding != "" {
		extra["encoding"] = s.Encoding
	}
	if s.Delimiter != "" {
		extra["delimiter"] = s.Delimiter
	}
	return extra
}

// SavedLayoutOptions is the run options of a CSV file at path submitted without a schema: extra
// with the layout saved in data folder dataDir whose columns the file's header has (PlanFile)
// when there is one, as the window runs it after its new-layout dialog, so `jobdesk run FILE`
// of such a file uses the layout instead of failing E006 against the user-log one. Options
// given in extra win over the layout's; a schema given in extra (run --schema) is used as it is.
func SavedLayoutOptions(dataDir, path string, extra map[string]string) map[string]string {
	if extra["schema"] != "" {
		return extra
	}
	plan, err := PlanFile(dataDir, path)
	if err != nil || plan.Schema == nil {
		return extra
	}
	out := RunOptions(dataDir, *plan.Schema)
	for k, v := range extra {
		if v != "" {
			out[k] = v
		}
	}
	return out
}
