// Package csvfamily wires seed 004's CSV jobs into the app. A dropped .csv/.tsv (or delimited
// text) becomes one job of type "csv" that validates the file, reflects its users into the
// csv_users table with the seed's tolerance for bad rows, and writes an errors CSV and an XLSX
// report. The job runs the shipped csv-processing workflow, whose Tasks call the csv-processor
// function (engine/csvjob) with its state in this database (engine/csvjob/csvsqlite).
package csvfamily

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"jobdesk/app/family"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Family is the CSV family of one App: the csv-processor of the device (state in the App's
// database, files on this machine, results under the data folder).
type Family struct {
	host *family.Host
	proc *csvjob.Processor
}

var (
	_ family.Family         = (*Family)(nil)
	_ family.FunctionSource = (*Family)(nil)
	_ family.Exporter       = (*Family)(nil)
	_ family.Flagged        = (*Family)(nil)
)

func (*Family) Name() string                   { return "csv" }
func (*Family) Migrations() []store.Migrations { return []store.Migrations{csvsqlite.Migrations} }
func (*Family) Types() []string                { return []string{csvjob.Type} }

// Detect takes CSV and TSV files, and text whose rows are delimited alike.
func (*Family) Detect(path string, head []byte) string {
	if csvjob.Detect(path, head) {
		return csvjob.Type
	}
	return ""
}

// Open builds the csv-processor bound to the App's database, blob store and data folder.
func (f *Family) Open(h *family.Host) error {
	f.host = h
	f.proc = csvjob.NewProcessor(csvsqlite.New(h.DB), h.Blobs, h.DataDir)
	return nil
}

// Processor is the family's csv-processor: the handlers of the functions its workflow calls.
// Replacing its Store or Blob before the engine starts changes what every CSV job uses.
func (f *Family) Processor() *csvjob.Processor { return f.proc }

// Functions are the csv-processor's Lambda functions, which the csv-processing workflow calls.
func (f *Family) Functions() []functions.Function { return f.proc.Functions() }

// RunFlags are the CSV options of `jobdesk run`.
func (*Family) RunFlags() []family.RunFlag {
	return []family.RunFlag{
		{Name: "schema", Usage: "csv: a JSON job schema (default: the seed's user-log schema; jobdesk csv sniff FILE proposes one)"},
		{Name: "tolerate-percent", Usage: "csv: fail when more than this % of rows are rejected (default 5)"},
		{Name: "tolerate-count", Usage: "csv: fail when more than this many rows are rejected (default 50)"},
		{Name: "audit-all", Usage: "csv: record every row in the audit log, not only the rejected ones", Bool: true},
		{Name: "encoding", Usage: "csv: force the encoding (utf-8, shift_jis, euc-jp, utf-16le, utf-16be)"},
		{Name: "delimiter", Usage: `csv: force the delimiter ("," "\t" ";" "|")`},
	}
}

// csvTimeout bounds one attempt of a whole CSV job (a 4 GiB file takes well under a minute).
const csvTimeout = 30 * time.Minute

// Register registers the "csv" job. It mostly waits on its workflow execution, so it is an
// orchestrator: it takes no worker slot from the chunks it waits for.
func (f *Family) Register(w *queue.Worker) {
	w.Handle(csvjob.Type, f.jobHandler(), queue.TypeOptions{Timeout: csvTimeout, Orchestrator: true, Concurrency: 16})
}

// jobHandler runs one CSV job on the device (csvjob.RunJob): the workflow reads the file where
// it is, on the App's flow engine, and an import refused for too many rejected rows records its
// failed result (EventFailedResult).
//
// The job, not the execution, is what people see: it keeps the type "csv" (so export, retry and
// the exit codes know it is a CSV job) and the execution runs as its child.
func (f *Family) jobHandler() job.Handler {
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return csvjob.RunJob(ctx, csvjob.Runtime{
			Runtime:   orchestrator.Runtime{Executions: f.host.Flow.Executions(), Job: f.host.Queue.Get},
			Processor: f.proc,
			Failed:    f.recordFailedResult,
		}, raw, r)
	}
}

// options turns the run flags into the job's options. A bad value is a usage error (E014).
func options(extra map[string]string) (csvjob.Options, error) {
	var o csvjob.Options
	if f := extra["schema"]; f != "" {
		s, err := csvjob.LoadSchema(f)
		if err != nil {
			return o, err
		}
		o.Schema = s
	}
	if v := extra["tolerate-percent"]; v != "" {
		p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
		if err != nil || p < 0 || p > 100 {
			return o, job.Errorf(job.E014, "--tolerate-percent %q must be a number from 0 to 100", v).
				WithJa("--tolerate-percent には 0 から 100 までの数を指定してください。")
		}
		o.TolerancePercent = &p
	}
	if v := extra["tolerate-count"]; v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return o, job.Errorf(job.E014, "--tolerate-count %q must be a whole number of 0 or more", v).
				WithJa("--tolerate-count には 0 以上の整数を指定してください。")
		}
		o.ToleranceCount = &n
	}
	o.AuditAll = extra["audit-all"] == "true"
	o.Encoding = extra["encoding"]
	o.Delimiter = extra["delimiter"]
	return o, o.Check()
}

// Submit submits one CSV file. When a job for the same bytes (SHA-256) and options exists
// and did not fail, that job is returned instead of a new one, unless o.Force (Host.SubmitOnce):
// the command line prints it, the window asks before running the file again.
func (f *Family) Submit(ctx context.Context, path, typ string, o family.SubmitOptions) (job.Job, error) {
	opts, err := options(o.Extra)
	if err != nil {
		return job.Job{}, err
	}
	sha, err := family.FileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	in, err := json.Marshal(csvjob.JobInput{Path: path, SHA256: sha, Options: opts})
	if err != nil {
		return job.Job{}, job.Wrap(job.E016, err, "cannot encode the CSV job")
	}
	return f.host.SubmitOnce(ctx, sha, opts, queue.Params{Type: typ, Name: filepath.Base(path), Input: in, Priority: o.Priority, Target: o.Target}, o.Force)
}

// Export writes a finished CSV job's result file: the XLSX report or the errors CSV.
func (f *Family) Export(ctx context.Context, j job.Job, format, out string) error {
	if format == "" {
		format = csvsqlite.FormatXLSX
	}
	if err := csvsqlite.New(f.host.DB).Export(ctx, strconv.FormatInt(j.ID, 10), strings.ToLower(format), out); err != nil {
		return err
	}
	return nil
}

// Workflow is the shipped workflow a CSV job runs (csvjob.Workflow).
var Workflow = csvjob.Workflow

// EventFailedResult is the history entry that carries the result of an import refused for too
// many rejected rows (its detail: a Result, Status FAILED): the job itself ends FAILED with no
// result, but its errors file and report exist.
const EventFailedResult = "RejectedRowsRecorded"

// failedResult is r, refused, without the figures of rows and users taken in: nothing was
// (the table was not changed), so only what was read, what was rejected and the files remain.
func failedResult(r Result) (json.RawMessage, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"successCount", "users", "usersChanged", "usersFile", "table", "columns"} {
		delete(m, k)
	}
	return json.Marshal(m)
}

// Result is a CSV job's result (csvjob.JobResult): the Summary and the execution.
type Result = csvjob.JobResult

// recordFailedResult records an import refused for too many rejected rows, which wrote its
// errors file and report, with the job's failure, so the window and `jobdesk show` can show the
// rows.
func (f *Family) recordFailedResult(ctx context.Context, jobID int64, _ string, x orchestrator.Execution) error {
	if sum := f.proc.FailedSummary(ctx, x.Name); sum != nil {
		if res, err := failedResult(Result{Summary: *sum, ExecutionARN: x.ARN}); err == nil {
			_ = f.host.Queue.AddEvent(ctx, jobID, EventFailedResult, sum.Message, string(res))
		}
	}
	return nil
}
