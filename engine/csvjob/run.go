package csvjob

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// RunFile runs a whole CSV job in-process, calling the csv-processor steps in the workflow's
// order: CSV_VALIDATION, CSV_CHUNK_PROCESSING for every chunk in parallel (retrying
// DatabaseConnectionError and TemporaryError as the workflow's Retry does) with AUDIT_LOGGING of
// each outcome, RESULT_AGGREGATION, and ERROR_HANDLING on a failure path. Result files go to the
// job's data folder (job.InfoFrom(ctx).DataDir), else the folder of db's file.
//
// It returns the Summary and nil for SUCCESS and PARTIAL (Summary.Status says which), and a
// *job.Error for a failed job: ValidationError (E003/E004/E006) when the file cannot be
// processed, States.ExceedToleratedFailureThreshold (E006) when too many rows were rejected, and
// in both cases the table is unchanged.
func RunFile(ctx context.Context, db *store.DB, path string, opts Options, r job.Reporter) (Summary, error) {
	dir := ""
	if db != nil {
		dir = filepath.Dir(db.Path)
	}
	p := NewProcessor(db, dir)
	return p.RunFile(ctx, path, opts, r)
}

// RunFile is RunFile with this processor's database and data folder.
func (p *Processor) RunFile(ctx context.Context, path string, opts Options, r job.Reporter) (Summary, error) {
	if r == nil {
		r = job.Discard
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		path = abs
	}
	exec := ExecutionName(path, p.now())
	if info, ok := job.InfoFrom(ctx); ok && info.ID != 0 {
		// A queue job keeps one execution across its attempts, so a retry reuses its staging.
		exec = ExecutionName(path, p.now())
		exec = exec[:len(exec)-6] + fmt.Sprintf("j%d", info.ID)
	}
	fail := func(errorType string, err error) (Summary, error) {
		je := job.AsError(err)
		cause, _ := json.Marshal(je)
		errObj, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": string(cause)})
		_, _ = p.handleError(ctx, &Event{EventType: EventError, ErrorType: errorType, ExecutionID: exec, Key: path, Error: errObj})
		return Summary{Status: StatusFailed, ExecutionID: exec, Source: path, Message: je.Message, MessageJa: je.MessageJa}, je
	}
	v, err := p.validate(ctx, &Event{EventType: EventValidation, Bucket: LocalBucket, Key: path, ExecutionID: exec, Options: &opts}, r)
	if err != nil {
		if je := job.AsError(err); je.Name == "ValidationError" {
			return fail(ValidationFailure, err)
		}
		return fail(SystemFailure, err)
	}
	jc, dir, err := p.loadContext(ctx, exec)
	if err != nil {
		return fail(SystemFailure, err)
	}
	pl, err := newPlan(jc)
	if err != nil {
		return fail(SystemFailure, err)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu         sync.Mutex
		wg         sync.WaitGroup
		done       int
		chunkFails int
		firstErr   error
	)
	sem := make(chan struct{}, workers)
	for _, c := range v.Chunks {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(c Chunk) {
			defer func() { <-sem; wg.Done() }()
			cr, err := p.processWithRetry(ctx, jc, pl, dir, c)
			if err != nil {
				je := job.AsError(err)
				b, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": je.Error()})
				logType := "SYSTEM_ERROR"
				if je.Name == KindBusiness || je.Name == KindValidation {
					logType = "BUSINESS_ERROR"
				}
				p.audit(ctx, &Event{EventType: EventAudit, LogType: logType, ExecutionID: exec, ItemIndex: c.Index, Error: b})
				mu.Lock()
				chunkFails++
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			br, _ := json.Marshal(BatchResult{Chunks: []ChunkResult{*cr}, Rows: cr.Rows, Failed: cr.Failed})
			if _, err := p.audit(ctx, &Event{EventType: EventAudit, LogType: "SUCCESS", ExecutionID: exec, ItemIndex: c.Index, ProcessResult: br}); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				chunkFails++
				mu.Unlock()
			}
			mu.Lock()
			done++
			r.Progress(10+80*float64(done)/float64(len(v.Chunks)), fmt.Sprintf("checked %d of %d parts", done, len(v.Chunks)))
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fail(SystemFailure, cancelled(err))
	}
	// A chunk that failed after its retries was audited; like the workflow's Map iteration it
	// does not stop the job: the aggregation counts its rows as rejected against the tolerance.
	_ = firstErr
	s, err := p.aggregate(ctx, exec, r)
	if err != nil {
		if s != nil {
			_, _ = p.handleError(ctx, &Event{EventType: EventError, ErrorType: MapProcessingFailure, ExecutionID: exec, Key: path,
				Error: errJSON(err)})
			return *s, err
		}
		return fail(SystemFailure, err)
	}
	return *s, nil
}

func errJSON(err error) json.RawMessage {
	je := job.AsError(err)
	cause, _ := json.Marshal(je)
	b, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": string(cause)})
	return b
}

// processWithRetry is the Map iteration's Retry: DatabaseConnectionError and TemporaryError up
// to 3 attempts, 2 s then 4 s apart (the seed's policy).
func (p *Processor) processWithRetry(ctx context.Context, jc *jobContext, pl *plan, dir string, c Chunk) (*ChunkResult, error) {
	wait := 2 * time.Second
	for attempt := 1; ; attempt++ {
		cr, err := p.processOne(ctx, jc, pl, dir, c)
		if err == nil {
			return cr, nil
		}
		je := job.AsError(err)
		if attempt >= 3 || (je.Name != "DatabaseConnectionError" && je.Name != "TemporaryError") {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, cancelled(ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// JobInput is the input of a whole CSV job of Type: the file and the job's options.
type JobInput struct {
	Path    string  `json:"path"`
	Options Options `json:"options,omitempty"`
}

// JobHandler returns the handler of a whole CSV job (queue type Type): it runs RunFile and ends
// SUCCEEDED, PARTIAL (job.PartialSuccess with the Summary) or FAILED with the *job.Error. The
// result is the Summary: totals, the table name and the result files' paths.
func (p *Processor) JobHandler() job.Handler {
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var in JobInput
		if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
			return nil, job.Errorf(job.E014, "the CSV job needs a file path").WithJa("CSVジョブにファイルのパスがありません。")
		}
		s, err := p.RunFile(ctx, in.Path, in.Options, r)
		if err != nil {
			return nil, err
		}
		out, _ := json.Marshal(s)
		if s.Status == StatusPartial {
			return nil, job.PartialSuccess(out, s.Message)
		}
		return out, nil
	}
}

// EventInput builds the workflow's execution input for a local file: the S3 Object Created
// event shape (seed 3.1) with bucket LocalBucket and the file's path as key, plus the job's
// options under "options" (read by CSV_VALIDATION through executionInput).
func EventInput(path string, opts Options) (json.RawMessage, error) {
	return JobEventInput(path, opts, 0)
}

// JobEventInput is EventInput for the queue job jobID that starts the workflow: its id travels
// in the input ("jobId"), so the execution's results are recorded under that job (export by id)
// and two jobs of the same file never share an execution.
func JobEventInput(path string, opts Options, jobID int64) (json.RawMessage, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, job.Wrap(job.E014, err, filepath.Base(path)+" does not exist or cannot be read").
			WithJa(filepath.Base(path) + " が見つからないか、読み取れません。")
	}
	ev := map[string]any{
		"version": "0", "detail-type": "Object Created", "source": "jobdesk.local",
		"time": st.ModTime().UTC().Format(time.RFC3339),
		"detail": map[string]any{
			"bucket": map[string]any{"name": LocalBucket},
			"object": map[string]any{"key": abs, "size": st.Size(), "etag": fmt.Sprintf("%x-%x", st.Size(), st.ModTime().UnixNano())},
		},
		"options": opts,
	}
	if jobID != 0 {
		ev["jobId"] = jobID
	}
	return json.Marshal(ev)
}
