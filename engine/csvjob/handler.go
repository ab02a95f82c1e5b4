package csvjob

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// FunctionName is the seed's Lambda function: the Resource every Task of the CSV workflow names.
const FunctionName = "csv-processor"

// Type is the queue job type of a whole CSV job (see Processor.JobHandler).
const Type = "csv"

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

// Event is the input of the csv-processor function: one struct for every event type, as the
// workflow's Task Parameters build it.
type Event struct {
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

// Processor is the csv-processor function bound to a database and a data folder. The same
// value serves the desktop engine and the cloud worker.
type Processor struct {
	// DB keeps csv_users and the staged chunk results; nil stages chunks as files and skips the
	// table (a cloud worker without a database).
	DB *store.DB
	// DataDir is where work folders go when the job's context carries none (job.Info.Output).
	DataDir string
	// Fetch makes a non-local object (S3 bucket and key) available as a local file; nil refuses
	// non-local objects with E010.
	Fetch func(ctx context.Context, bucket, key, dir string) (string, error)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewProcessor returns the csv-processor bound to db, keeping work and result files under
// dataDir/csv/<execution>.
func NewProcessor(db *store.DB, dataDir string) *Processor {
	return &Processor{DB: db, DataDir: dataDir}
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Handler returns the job.Handler of FunctionName.
func (p *Processor) Handler() job.Handler { return p.Handle }

// Handle runs one csv-processor event (see Event) and returns its JSON result.
func (p *Processor) Handle(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	if r == nil {
		r = job.Discard
	}
	var ev Event
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
			os.Remove(filepath.Join(dir, errorFile))
		}
	case EventChunk:
		out, err = p.chunks(ctx, &ev)
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

func (p *Processor) dataDir(ctx context.Context) string {
	if info, ok := job.InfoFrom(ctx); ok && info.Output != "" {
		return info.Output
	}
	if p.DataDir != "" {
		return p.DataDir
	}
	return filepath.Join(os.TempDir(), "jobdesk")
}

func (p *Processor) workDir(ctx context.Context, execution string) (string, error) {
	s := sanitizeName(execution)
	if s == "" || s != execution {
		return "", job.Errorf(job.E014, "invalid execution id %q", execution).WithJa("実行IDが正しくありません。")
	}
	return filepath.Join(p.dataDir(ctx), "csv", s), nil
}

func (p *Processor) loadContext(ctx context.Context, execution string) (*jobContext, string, error) {
	dir, err := p.workDir(ctx, execution)
	if err != nil {
		return nil, "", err
	}
	var jc jobContext
	if err := readJSON(filepath.Join(dir, contextFile), &jc); err != nil {
		return nil, "", job.Wrap(job.E014, err, "execution "+execution+" has no validated file (run CSV_VALIDATION first)").
			WithJa("実行 " + execution + " には検証済みのファイルがありません。")
	}
	return &jc, dir, nil
}

func (p *Processor) validate(ctx context.Context, ev *Event, r job.Reporter) (*Validation, error) {
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
	path := ev.Key
	if ev.Bucket != "" && ev.Bucket != LocalBucket {
		if p.Fetch == nil {
			return nil, job.Errorf(job.E010, "s3://%s/%s cannot be read here: this engine has no cloud storage", ev.Bucket, ev.Key).
				WithJa("クラウドストレージのファイルはここでは読み取れません。").Permanent()
		}
		if path, err = p.Fetch(ctx, ev.Bucket, ev.Key, dir); err != nil {
			return nil, job.Wrap(job.E010, err, "cannot fetch s3://"+ev.Bucket+"/"+ev.Key).WithJa("クラウドストレージから取得できません。")
		}
	}
	if path == "" {
		return nil, job.Errorf(job.E014, "the CSV job needs a file").WithJa("CSVジョブにファイルが指定されていません。").WithName("ValidationError")
	}
	r.Progress(1, "validating "+filepath.Base(path))
	started := p.now()
	v, err := Validate(ctx, path, dir, o)
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
	if err := writeJSON(filepath.Join(dir, contextFile), jc); err != nil {
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

func (p *Processor) chunks(ctx context.Context, ev *Event) (*BatchResult, error) {
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
	out := &BatchResult{}
	for _, c := range items {
		cr, err := p.processOne(ctx, jc, pl, dir, c)
		if err != nil {
			return nil, err
		}
		out.Chunks = append(out.Chunks, *cr)
		out.Rows += cr.Rows
		out.Failed += cr.Failed
	}
	return out, nil
}

// processOne checks chunk c against the manifest, processes and stages it.
func (p *Processor) processOne(ctx context.Context, jc *jobContext, pl *plan, dir string, c Chunk) (*ChunkResult, error) {
	if c.Index < 0 || c.Index >= len(jc.Chunks) || jc.Chunks[c.Index] != c {
		return nil, job.Errorf(job.E014, "chunk %d is not one of this execution's chunks", c.Index).
			WithJa(fmt.Sprintf("チャンク %d はこの実行のものではありません。", c.Index)).WithName(KindValidation)
	}
	part, err := processChunk(ctx, jc, pl, c, jc.Options.AuditAll)
	if err != nil {
		return nil, err
	}
	if err := stage(ctx, p.DB, dir, jc.Execution, part); err != nil {
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

func (p *Processor) audit(ctx context.Context, ev *Event) (*AuditResult, error) {
	if p.DB == nil {
		return &AuditResult{}, nil
	}
	now := p.now().UnixMilli()
	type rec struct {
		typ        string
		line       int
		ok, failed int64
		detail     string
	}
	var recs []rec
	switch ev.LogType {
	case "SUCCESS":
		var br BatchResult
		_ = json.Unmarshal(ev.ProcessResult, &br)
		jc, dir, err := p.loadContext(ctx, ev.ExecutionID)
		if err != nil {
			return nil, err
		}
		idx := make([]int, 0, len(br.Chunks))
		for _, c := range br.Chunks {
			idx = append(idx, c.Index)
		}
		staged, err := loadStaged(ctx, p.DB, dir, jc.Execution, idx...)
		if err != nil {
			return nil, err
		}
		for _, c := range br.Chunks {
			recs = append(recs, rec{typ: "SUCCESS", ok: c.OK, failed: c.Failed, detail: fmt.Sprintf("chunk %d: %d rows, %d rejected", c.Index, c.Rows, c.Failed)})
			part := staged[c.Index]
			if part == nil {
				continue
			}
			for _, e := range part.Errors {
				recs = append(recs, rec{typ: "BUSINESS_ERROR", line: e.Line, detail: e.Kind + ": " + e.Column + ": " + e.Reason + " (" + e.Value + ")"})
			}
			if jc.Options.AuditAll {
				for _, l := range part.Audit {
					recs = append(recs, rec{typ: "SUCCESS", line: l, ok: 1})
				}
			}
		}
	case "BUSINESS_ERROR", "SYSTEM_ERROR":
		recs = append(recs, rec{typ: ev.LogType, detail: string(ev.Error)})
	default:
		return nil, job.Errorf(job.E014, "unknown audit log type %q", ev.LogType).WithJa("監査ログの種別が正しくありません。")
	}
	err := p.DB.Tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO csv_audit(execution, item_index, log_type, line, rows_ok, rows_failed, detail, created_at)
			VALUES(?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range recs {
			if _, err := st.ExecContext(ctx, ev.ExecutionID, ev.ItemIndex, r.typ, r.line, r.ok, r.failed, r.detail, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, dbError(err, "audit log")
	}
	return &AuditResult{Records: len(recs)}, nil
}

func parseCause(raw json.RawMessage) (name string, e *job.Error) {
	var c struct {
		Error string `json:"Error"`
		Cause string `json:"Cause"`
	}
	_ = json.Unmarshal(raw, &c)
	name = c.Error
	var je job.Error
	if c.Cause != "" && json.Unmarshal([]byte(c.Cause), &je) == nil && je.Code != "" {
		return name, &je
	}
	var lambda struct {
		ErrorMessage string `json:"errorMessage"`
	}
	msg := c.Cause
	if json.Unmarshal([]byte(c.Cause), &lambda) == nil && lambda.ErrorMessage != "" {
		msg = lambda.ErrorMessage
	}
	code := job.E015
	if name == ErrToleranceExceeded {
		code = job.E006
	}
	if msg == "" {
		msg = name
	}
	return name, job.Errorf(code, "%s", msg)
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
// workflow's Catch passes on only the error name and the English cause, and ERROR_HANDLING reads
// the code and the Japanese sentence back from here.
const errorFile = "error.json"

func (p *Processor) rememberError(ctx context.Context, execution string, err error) {
	dir, derr := p.workDir(ctx, execution)
	if derr != nil {
		return
	}
	je := job.AsError(err)
	if os.MkdirAll(dir, 0o700) == nil {
		_ = writeJSON(filepath.Join(dir, errorFile), je)
	}
}

func (p *Processor) handleError(ctx context.Context, ev *Event) (*Failure, error) {
	name, je := parseCause(ev.Error)
	if dir, err := p.workDir(ctx, ev.ExecutionID); err == nil {
		var rec job.Error
		if readJSON(filepath.Join(dir, errorFile), &rec) == nil && rec.Code != "" && (name == "" || name == rec.ErrorName()) {
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
	if dir, err := p.workDir(ctx, ev.ExecutionID); err == nil {
		clearStaged(ctx, p.DB, dir, ev.ExecutionID)
		os.Remove(filepath.Join(dir, "utf8.csv"))
		if p.DB != nil {
			sum, _ := json.Marshal(f)
			var jobID int64
			if info, ok := job.InfoFrom(ctx); ok {
				jobID = info.ID
			}
			source := ev.Key
			var jc jobContext
			if readJSON(filepath.Join(dir, contextFile), &jc) == nil {
				source = jc.Validation.Source
				if jc.JobID != 0 {
					jobID = jc.JobID
				}
			}
			_, err := p.DB.W.ExecContext(ctx, `INSERT INTO csv_imports(execution, job_id, source, status, summary, created_at)
				VALUES(?,?,?,?,?,?) ON CONFLICT(execution) DO UPDATE SET status=excluded.status`,
				ev.ExecutionID, jobID, source, "FAILED", string(sum), p.now().UnixMilli())
			if err != nil {
				return nil, dbError(err, "failure record")
			}
		}
	}
	return f, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
