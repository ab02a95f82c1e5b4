package csvjob

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// FunctionName is the seed's Lambda function: the Resource every Task of the CSV workflow names.
const FunctionName = "csv-processor"

// Type is the queue job type of a whole CSV job (one execution of the workflow).
const Type = "csv"

// Table is the table the default schema fills (on the device; see Store.ApplyResult).
const Table = "csv_users"

// WorkflowFile is the workflow's file name under assets/workflows.
const WorkflowFile = "csv-processing.asl.json"

// Event types of the csv-processor function (seed 004).
const (
	EventValidation  = "CSV_VALIDATION"
	EventChunk       = "CSV_CHUNK_PROCESSING"
	EventAudit       = "AUDIT_LOGGING"
	EventAggregation = "RESULT_AGGREGATION"
	EventError       = "ERROR_HANDLING"
)

// Error types of ERROR_HANDLING (seed 004).
const (
	ValidationFailure    = "VALIDATION_FAILURE"
	MapProcessingFailure = "MAP_PROCESSING_FAILURE"
	SystemFailure        = "SYSTEM_FAILURE"
)

// ErrToleranceExceeded is the Step Functions error name for too many rejected rows.
const ErrToleranceExceeded = "States.ExceedToleratedFailureThreshold"

// Request is the input of the csv-processor function: one struct for every event type (the
// seed's eventType names the step asked for), as the workflow's Task Parameters build it. It is
// a request to the function, not an event that happened.
type Request struct {
	EventType   string `json:"eventType"`
	Bucket      string `json:"bucket,omitempty"`
	Key         string `json:"key,omitempty"`
	ExecutionID string `json:"executionId"`
	// ExecutionInput is the execution's input; its "options" object (Options) configures the job.
	ExecutionInput json.RawMessage `json:"executionInput,omitempty"`
	// Options configure the job directly (callers that do not pass ExecutionInput).
	Options *Options `json:"options,omitempty"`

	// CSV_CHUNK_PROCESSING: the chunks of one ItemBatcher batch (Items) or a single Item.
	Items     []Chunk `json:"items,omitempty"`
	Item      *Chunk  `json:"item,omitempty"`
	ItemIndex int     `json:"itemIndex,omitempty"`

	// AUDIT_LOGGING
	LogType       string          `json:"logType,omitempty"`
	ProcessResult json.RawMessage `json:"processResult,omitempty"`
	Timestamp     string          `json:"timestamp,omitempty"`

	// ERROR_HANDLING (and AUDIT_LOGGING of failures): the Catch's {"Error","Cause"}
	ErrorType string          `json:"errorType,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`

	// RESULT_AGGREGATION
	MapResults json.RawMessage `json:"mapResults,omitempty"`
}

// Processor is the csv-processor function bound to the state it keeps between events (Store)
// and the blob store its inputs and results go through. The same value serves the desktop
// engine and the cloud worker: only the Store and the blob store differ.
type Processor struct {
	// Store keeps staged chunks, the users of a file that passed and the executions' records.
	Store Store
	// Blob reads the input files and writes the work and result files (nil: local files only).
	Blob blob.Store
	// Output is the URI prefix under which work and result folders go when the job's context
	// carries none (job.Info.Output): the data folder on the device.
	Output string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewProcessor returns the csv-processor keeping its state in st, reading and writing files
// through b, with work and result files under output/csv/<execution> unless the job names
// its own output location.
func NewProcessor(st Store, b blob.Store, output string) *Processor {
	return &Processor{Store: st, Blob: b, Output: output}
}

// Functions returns the functions of the CSV workflow for the registry: csv-processor, leased
// for a minute at a time on the device (each Task of the workflow bounds it with TimeoutSeconds).
func (p *Processor) Functions() []functions.Function {
	return []functions.Function{{Name: FunctionName, Handler: p.Handle, Options: functions.Options{Visibility: time.Minute}}}
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Processor) blobs() blob.Store {
	if p.Blob != nil {
		return p.Blob
	}
	return blob.Local{}
}

// Handle runs one csv-processor request (see Request) and returns its JSON result.
func (p *Processor) Handle(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	if r == nil {
		r = job.Discard
	}
	var ev Request
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, job.Wrap(job.E014, err, "the csv-processor event is not valid JSON").
			WithJa("csv-processor のイベントが正しいJSONではありません。").Permanent()
	}
	var out any
	var err error
	switch ev.EventType {
	case EventValidation:
		out, err = p.validate(ctx, &ev, r)
		if err != nil {
			p.rememberError(ctx, ev.ExecutionID, err)
		} else if dir, derr := p.workDir(ctx, ev.ExecutionID); derr == nil {
			_ = p.blobs().Remove(ctx, blob.Join(dir, errorFile))
		}
	case EventChunk:
		out, err = p.chunks(ctx, &ev, r)
	case EventAudit:
		out, err = p.audit(ctx, &ev)
	case EventAggregation:
		out, err = p.aggregate(ctx, ev.ExecutionID, r)
	case EventError:
		out, err = p.handleError(ctx, &ev)
	default:
		return nil, job.Errorf(job.E014, "unknown csv-processor event type %q", ev.EventType).
			WithJa(fmt.Sprintf("csv-processor のイベント種別 %q は存在しません。", ev.EventType))
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

var nameBad = regexp.MustCompile(`[^a-zA-Z0-9_-]`)
var dashes = regexp.MustCompile(`-+`)

func sanitizeName(base string) string {
	s := nameBad.ReplaceAllString(base, "-")
	s = dashes.ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

// ExecutionName is the seed's execution-name rule: the file name without its extension, every
// character outside [a-zA-Z0-9_-] replaced by '-', runs of '-' folded, trimmed, cut to 70, then
// "-HHMMSS" of now, at most 80 characters. ("data/user-log-20240802-001.csv" at 12:34:56 →
// "user-log-20240802-001-123456"; a name with no ASCII letter or digit, such as "売上.csv", gives
// "csv-123456".)
func ExecutionName(key string, now time.Time) string {
	name := key[strings.LastIndexAny(key, `/\`)+1:]
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	s := sanitizeName(name)
	if len(s) > 70 {
		s = strings.TrimRight(s[:70], "-")
	}
	if s == "" {
		// A name of only Japanese (or other non-ASCII) characters leaves nothing: the seed's rule
		// would give "-HHMMSS", which is not a usable folder or execution name.
		s = "csv"
	}
	s = s + "-" + now.Format("150405")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

func (p *Processor) output(ctx context.Context) string {
	if info, ok := job.InfoFrom(ctx); ok && info.Output != "" {
		return info.Output
	}
	if p.Output != "" {
		return p.Output
	}
	return filepath.Join(os.TempDir(), "jobdesk")
}

// workDir is the URI prefix of execution's work and result files: <output>/csv/<execution>.
func (p *Processor) workDir(ctx context.Context, execution string) (string, error) {
	s := sanitizeName(execution)
	if s == "" || s != execution {
		return "", job.Errorf(job.E014, "invalid execution id %q", execution).WithJa("実行IDが正しくありません。")
	}
	return blob.Join(p.output(ctx), "csv", s), nil
}

// run names the execution of jc to the Store.
func (jc *jobContext) run(dir string) Run {
	return Run{Execution: jc.Execution, JobID: jc.JobID, Source: jc.Validation.Source, Dir: dir}
}

func (p *Processor) loadContext(ctx context.Context, execution string) (*jobContext, string, error) {
	dir, err := p.workDir(ctx, execution)
	if err != nil {
		return nil, "", err
	}
	var jc jobContext
	if err := readJSON(ctx, p.blobs(), blob.Join(dir, contextFile), &jc); err != nil {
		return nil, "", job.Wrap(job.E014, err, "execution "+execution+" has no validated file (run CSV_VALIDATION first)").
			WithJa("実行 " + execution + " には検証済みのファイルがありません。")
	}
	return &jc, dir, nil
}

func (p *Processor) validate(ctx context.Context, ev *Request, r job.Reporter) (*Validation, error) {
	o := Options{}
	var jobID int64
	if len(ev.ExecutionInput) > 0 {
		var in struct {
			Options *Options `json:"options"`
			JobID   int64    `json:"jobId"`
		}
		if json.Unmarshal(ev.ExecutionInput, &in) == nil {
			if in.Options != nil {
				o = *in.Options
			}
			jobID = in.JobID
		}
	}
	if ev.Options != nil {
		o = *ev.Options
	}
	if ev.ExecutionID == "" {
		ev.ExecutionID = ExecutionName(ev.Key, p.now())
	}
	dir, err := p.workDir(ctx, ev.ExecutionID)
	if err != nil {
		return nil, err
	}
	if ev.Key == "" {
		return nil, job.Errorf(job.E014, "the CSV job needs a file").WithJa("CSVジョブにファイルが指定されていません。").WithName("ValidationError")
	}
	uri := Object{Bucket: ev.Bucket, Key: ev.Key}.URI()
	r.Progress(1, "validating "+baseName(uri))
	started := p.now()
	v, err := Validate(ctx, p.blobs(), uri, dir, o)
	if err != nil {
		return nil, err
	}
	jc := jobContext{Validation: *v, Chunks: v.Chunks, Options: o, Execution: ev.ExecutionID, StartedAt: started}
	if jobID != 0 {
		// The CSV job that started the workflow: results and exports are found under its id.
		jc.JobID = jobID
	} else if info, ok := job.InfoFrom(ctx); ok {
		jc.JobID = info.ID
	}
	if err := writeJSON(ctx, p.blobs(), blob.Join(dir, contextFile), jc); err != nil {
		return nil, err
	}
	r.Progress(10, fmt.Sprintf("%d rows in %d chunks", v.RowCount, v.ChunkCount))
	return v, nil
}

// ChunkResult is what CSV_CHUNK_PROCESSING returns for one chunk: counts and a few sample
// errors (the full list is staged and goes to the result files).
type ChunkResult struct {
	Index      int        `json:"index"`
	Rows       int64      `json:"rows"`
	OK         int64      `json:"ok"`
	Failed     int64      `json:"failed"`
	ErrorCount int64      `json:"errorCount"`
	Users      int        `json:"users"`
	Samples    []RowError `json:"sampleErrors,omitempty"`
}

// BatchResult is CSV_CHUNK_PROCESSING's result for a batch of chunks.
type BatchResult struct {
	Chunks []ChunkResult `json:"chunks"`
	Rows   int64         `json:"rows"`
	Failed int64         `json:"failed"`
}

// chunks processes a batch of chunks, reporting the rows read as each chunk is done: the
// workflow's execution, and so the job a person sees, moves with them.
func (p *Processor) chunks(ctx context.Context, ev *Request, r job.Reporter) (*BatchResult, error) {
	jc, dir, err := p.loadContext(ctx, ev.ExecutionID)
	if err != nil {
		return nil, err
	}
	pl, err := newPlan(jc)
	if err != nil {
		return nil, err
	}
	items := ev.Items
	if ev.Item != nil {
		items = append(items, *ev.Item)
	}
	if len(items) == 0 {
		return nil, job.Errorf(job.E014, "CSV_CHUNK_PROCESSING got no chunk").WithJa("処理するチャンクがありません。").WithName(KindValidation)
	}
	var rows int64 // the batch's rows, as the manifest counted them
	for _, c := range items {
		rows += c.Rows
	}
	out := &BatchResult{}
	for i, c := range items {
		cr, err := p.processOne(ctx, jc, pl, jc.run(dir), c)
		if err != nil {
			return nil, err
		}
		out.Chunks = append(out.Chunks, *cr)
		out.Rows += cr.Rows
		out.Failed += cr.Failed
		pct := float64(i+1) * 100 / float64(len(items))
		if rows > 0 {
			pct = min(100, float64(out.Rows)*100/float64(rows))
		}
		r.Progress(pct, fmt.Sprintf("%d of %d rows read", out.Rows, max(rows, out.Rows)))
	}
	return out, nil
}

// processOne checks chunk c against the manifest, processes and stages it.
func (p *Processor) processOne(ctx context.Context, jc *jobContext, pl *plan, run Run, c Chunk) (*ChunkResult, error) {
	if c.Index < 0 || c.Index >= len(jc.Chunks) || jc.Chunks[c.Index] != c {
		return nil, job.Errorf(job.E014, "chunk %d is not one of this execution's chunks", c.Index).
			WithJa(fmt.Sprintf("チャンク %d はこの実行のものではありません。", c.Index)).WithName(KindValidation)
	}
	part, err := processChunk(ctx, p.blobs(), jc, pl, c, jc.Options.AuditAll)
	if err != nil {
		return nil, err
	}
	if err := p.stage(ctx, run, part); err != nil {
		return nil, err
	}
	cr := &ChunkResult{Index: c.Index, Rows: part.Rows, OK: part.Rows - part.Failed, Failed: part.Failed,
		ErrorCount: part.ErrorCount, Users: len(part.KeyEnd)}
	cr.Samples = part.Errors[:min(len(part.Errors), 3)]
	return cr, nil
}

// AuditResult is what AUDIT_LOGGING returns.
type AuditResult struct {
	Records int `json:"records"`
}

func (p *Processor) audit(ctx context.Context, ev *Request) (*AuditResult, error) {
	var recs []AuditRecord
	var run Run
	switch ev.LogType {
	case "SUCCESS":
		var br BatchResult
		_ = json.Unmarshal(ev.ProcessResult, &br)
		jc, dir, err := p.loadContext(ctx, ev.ExecutionID)
		if err != nil {
			return nil, err
		}
		run = jc.run(dir)
		for _, c := range br.Chunks {
			recs = append(recs, AuditRecord{LogType: "SUCCESS", Item: ev.ItemIndex, OK: c.OK, Failed: c.Failed,
				Detail: fmt.Sprintf("chunk %d: %d rows, %d rejected", c.Index, c.Rows, c.Failed)})
			part, err := p.staged(ctx, run, c.Index)
			if err != nil {
				return nil, err
			}
			if part == nil {
				continue
			}
			for _, e := range part.Errors {
				recs = append(recs, AuditRecord{LogType: "BUSINESS_ERROR", Item: ev.ItemIndex, Line: e.Line,
					Detail: e.Kind + ": " + e.Column + ": " + e.Reason + " (" + e.Value + ")"})
			}
			if jc.Options.AuditAll {
				for _, l := range part.Audit {
					recs = append(recs, AuditRecord{LogType: "SUCCESS", Item: ev.ItemIndex, Line: l, OK: 1})
				}
			}
		}
	case "BUSINESS_ERROR", "SYSTEM_ERROR":
		dir, err := p.workDir(ctx, ev.ExecutionID)
		if err != nil {
			return nil, err
		}
		run = Run{Execution: ev.ExecutionID, Dir: dir}
		recs = append(recs, AuditRecord{LogType: ev.LogType, Item: ev.ItemIndex, Detail: string(ev.Error)})
	default:
		return nil, job.Errorf(job.E014, "unknown audit log type %q", ev.LogType).WithJa("監査ログの種別が正しくありません。")
	}
	if err := p.Store.Audit(ctx, run, auditCall(ctx, ev), recs); err != nil {
		return nil, stateError(err, "audit log")
	}
	return &AuditResult{Records: len(recs)}, nil
}

// auditCall names one AUDIT_LOGGING call for Store.Audit: the queue job that runs the Task (the
// same job when it is delivered again), or where there is none (a Lambda invocation) its log
// type, the time the workflow entered its state (fixed when the Task is scheduled) and what it
// is about (the chunks of a SUCCESS, the caught error otherwise). A direct call, with neither,
// is unnamed and only appends.
func auditCall(ctx context.Context, ev *Request) string {
	if info, ok := job.InfoFrom(ctx); ok && info.ID != 0 {
		return "job:" + strconv.FormatInt(info.ID, 10)
	}
	if ev.Timestamp == "" {
		return ""
	}
	h := sha256.New()
	h.Write(ev.ProcessResult)
	h.Write(ev.Error)
	return fmt.Sprintf("%s@%s:%x", ev.LogType, ev.Timestamp, h.Sum(nil)[:8])
}

// parseCause reads the {"Error","Cause"} a workflow's Catch passes on. The Cause is the JSON of
// the coded job.Error (job.ErrorFromCause: JobDesk's engine and Lambda's envelope) or plain text;
// plain text becomes E006 for too many rejected rows, else E015, with the text as the message.
func parseCause(raw json.RawMessage) (name string, e *job.Error) {
	var c struct {
		Error string `json:"Error"`
		Cause string `json:"Cause"`
	}
	_ = json.Unmarshal(raw, &c)
	name = c.Error
	if je, ok := job.ErrorFromCause(name, c.Cause); ok {
		return name, je
	}
	return name, plainCause(name, c.Cause)
}

// plainCause is the coded error of a failure known only by its name and a text.
func plainCause(name, cause string) *job.Error {
	code := job.E015
	if name == ErrToleranceExceeded {
		code = job.E006
	}
	msg := cause
	if msg == "" {
		msg = name
	}
	return job.Errorf(code, "%s", msg)
}

// Failure is ERROR_HANDLING's result: the seed's failure paths with a clear summary.
type Failure struct {
	Status      string     `json:"status"` // FAILED
	ErrorType   string     `json:"errorType"`
	ExecutionID string     `json:"executionId"`
	Error       string     `json:"Error"`
	Cause       string     `json:"Cause"`
	Code        job.Code   `json:"code"`
	Message     string     `json:"message"`
	MessageJa   string     `json:"message_ja"`
	Detail      *job.Error `json:"detail,omitempty"`
}

// errorFile keeps, in the execution's work folder, the coded error of a failed validation: a
// workflow's Catch may pass on only the error name and the English cause, and ERROR_HANDLING
// reads the code and the Japanese sentence back from here.
const errorFile = "error.json"

func (p *Processor) rememberError(ctx context.Context, execution string, err error) {
	dir, derr := p.workDir(ctx, execution)
	if derr != nil {
		return
	}
	_ = writeJSON(ctx, p.blobs(), blob.Join(dir, errorFile), job.AsError(err))
}

func (p *Processor) handleError(ctx context.Context, ev *Request) (*Failure, error) {
	name, je := parseCause(ev.Error)
	dir, derr := p.workDir(ctx, ev.ExecutionID)
	if derr == nil {
		var rec job.Error
		if readJSON(ctx, p.blobs(), blob.Join(dir, errorFile), &rec) == nil && rec.Code != "" && (name == "" || name == rec.ErrorName()) {
			je = &rec
		}
	}
	f := &Failure{Status: "FAILED", ErrorType: ev.ErrorType, ExecutionID: ev.ExecutionID, Error: name,
		Code: je.Code, Detail: je}
	if name == "" {
		f.Error = je.ErrorName()
	}
	b, _ := json.Marshal(je)
	f.Cause = string(b)
	switch ev.ErrorType {
	case ValidationFailure:
		f.Message = "The CSV file did not pass validation; nothing was written. " + je.Message
		f.MessageJa = "CSVファイルが検証に合格しなかったため、何も書き込んでいません。" + je.MessageJa
	case MapProcessingFailure:
		f.Message = "Processing the rows failed; the table was not changed. " + je.Message
		f.MessageJa = "行の処理に失敗したため、テーブルは変更していません。" + je.MessageJa
	default:
		f.ErrorType = SystemFailure
		f.Message = "A system error stopped the CSV job; the table was not changed. " + je.Message
		f.MessageJa = "システムエラーによりCSVジョブが停止しました。テーブルは変更していません。" + je.MessageJa
	}
	if derr != nil {
		return f, nil
	}
	run := Run{Execution: ev.ExecutionID, Source: Object{Bucket: ev.Bucket, Key: ev.Key}.URI(), Dir: dir}
	if info, ok := job.InfoFrom(ctx); ok {
		run.JobID = info.ID
	}
	var jc jobContext
	if readJSON(ctx, p.blobs(), blob.Join(dir, contextFile), &jc) == nil {
		run.Source = jc.Validation.Source
		if jc.JobID != 0 {
			run.JobID = jc.JobID
		}
	}
	p.Store.ClearStaged(ctx, run)
	_ = p.blobs().Remove(ctx, blob.Join(dir, utf8Copy))
	if err := p.Store.RecordFailure(ctx, run, f); err != nil {
		return nil, stateError(err, "failure record")
	}
	return f, nil
}

// ExecutionSummary reads the Summary from the output of a csv-processing execution that
// succeeded (its "aggregation"); E015 when the output has none.
func ExecutionSummary(output json.RawMessage) (Summary, error) {
	var out struct {
		Aggregation Summary `json:"aggregation"`
	}
	if err := json.Unmarshal(output, &out); err != nil || out.Aggregation.Status == "" {
		return Summary{}, job.Errorf(job.E015, "the CSV workflow ended without a summary").WithJa("CSVのワークフローが集計結果なしで終了しました。")
	}
	return out.Aggregation, nil
}

// ExecutionError rebuilds the coded error of a failed workflow execution named execution from
// what ERROR_HANDLING and RESULT_AGGREGATION recorded (Store.Outcome); errName and cause are the
// execution's Error and Cause (a coded job.Error as JSON, or plain text), used when nothing was
// recorded.
func (p *Processor) ExecutionError(ctx context.Context, execution, errName, cause string) *job.Error {
	var raw json.RawMessage
	if dir, err := p.workDir(ctx, execution); err == nil {
		raw, _ = p.Store.Outcome(ctx, Run{Execution: execution, Dir: dir})
	}
	var f Failure
	if len(raw) > 0 && json.Unmarshal(raw, &f) == nil && f.Detail != nil && f.Detail.Code != "" {
		e := *f.Detail
		e.Err = nil
		if e.Name == "" {
			e.Name = f.Error
		}
		return e.Permanent()
	}
	var s Summary
	if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s.Status == StatusFailed && s.Message != "" {
		return job.Errorf(job.E006, "%s", s.Message).WithJa(s.MessageJa).WithName(ErrToleranceExceeded).Permanent()
	}
	if je, ok := job.ErrorFromCause(errName, cause); ok {
		return je
	}
	msg := cause
	if msg == "" {
		msg = "the CSV workflow failed"
	}
	code := job.E015
	if errName == ErrToleranceExceeded || errName == "ValidationError" {
		code = job.E006
	}
	return job.Errorf(code, "%s", msg).WithJa("CSVジョブのワークフローが失敗しました。").WithName(errName)
}

// EventInput builds the workflow's execution input for the file at uri (a local path is made
// absolute): the S3 Object Created event shape (seed 3.1) with the file's bucket and key (see
// Object), the job's options under "options" (read by CSV_VALIDATION through executionInput)
// and, when jobID is not 0, the queue job that starts the workflow under "jobId", so the
// execution's results are recorded under that job (export by id) and two jobs of the same file
// never share an execution.
func (p *Processor) EventInput(ctx context.Context, uri string, opts Options, jobID int64) (json.RawMessage, error) {
	if blob.Scheme(uri) == "file" && !strings.HasPrefix(strings.ToLower(uri), "file://") {
		if abs, err := filepath.Abs(uri); err == nil {
			uri = abs
		}
	}
	st, err := p.blobs().Stat(ctx, uri)
	if r := blob.Refused(err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, job.Wrap(job.E014, err, baseName(uri)+" does not exist or cannot be read").
			WithJa(baseName(uri) + " が見つからないか、読み取れません。")
	}
	obj := ObjectOf(uri)
	ev := map[string]any{
		"version": "0", "detail-type": "Object Created", "source": "jobdesk.local",
		"time": st.ModTime.UTC().Format(time.RFC3339),
		"detail": map[string]any{
			"bucket": map[string]any{"name": obj.Bucket},
			"object": map[string]any{"key": obj.Key, "size": st.Size, "etag": fmt.Sprintf("%x-%x", st.Size, st.ModTime.UnixNano())},
		},
		"options": opts,
	}
	if jobID != 0 {
		ev["jobId"] = jobID
	}
	return json.Marshal(ev)
}

// Object is a URI split the way S3 events, the S3 API and the workflow's ItemReader name an
// object: a bucket and a key. A file on this machine has the bucket "local" and its path (or
// file:// URI) as the key; anything else is s3://bucket/key.
type Object struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
}

// localBucket is the bucket of a file on this machine.
const localBucket = "local"

// ObjectOf splits uri into a bucket and key.
func ObjectOf(uri string) Object {
	if blob.Scheme(uri) == "s3" {
		rest := uri[len("s3://"):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return Object{Bucket: rest[:i], Key: rest[i+1:]}
		}
		return Object{Bucket: rest}
	}
	return Object{Bucket: localBucket, Key: uri}
}

// URI joins o back into a URI: the key itself for the local bucket (or none), else s3://.
func (o Object) URI() string {
	if o.Bucket == "" || o.Bucket == localBucket {
		return o.Key
	}
	return "s3://" + o.Bucket + "/" + o.Key
}

// baseName is the last element of a path or URI.
func baseName(uri string) string {
	return uri[strings.LastIndexAny(uri, `/\`)+1:]
}
