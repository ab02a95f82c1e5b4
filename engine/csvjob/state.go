package csvjob

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"slices"

	"jobdesk/engine/job"
)

// Store keeps the state of CSV jobs between the csv-processor's events: the chunk results
// waiting for aggregation, the users of a file that passed, and the records of each execution.
// The device's implementation is SQLite (package csvsqlite: csv_stage, csv_users, csv_imports,
// csv_audit); BlobStore keeps the same state as objects beside the job's results, for a worker
// with no database (the cloud). The handler never knows which it has.
//
// Every method names the execution by a Run. A failure a retry may cure should be a retryable
// *job.Error named DatabaseConnectionError or TemporaryError (the workflow's Retry matches those
// names); any other error is reported as a TemporaryError.
type Store interface {
	// StageChunk keeps chunk's encoded result until aggregation; staging a chunk again replaces
	// it, so a retried chunk is never counted twice.
	StageChunk(ctx context.Context, run Run, chunk int, data []byte) error
	// StagedChunk returns chunk's staged result, nil when it was never staged (the chunk failed).
	StagedChunk(ctx context.Context, run Run, chunk int) ([]byte, error)
	// ClearStaged forgets the execution's staged chunks (best effort: they are only a cache).
	ClearStaged(ctx context.Context, run Run)
	// ApplyResult records the aggregation's Summary s for the execution and, when users is not
	// nil (the file passed and its schema fills the user table), applies the users — both at once:
	// a store with a database writes them in one transaction and sets s.UsersChanged; a store
	// without one writes the users where the device can apply them later and names the object in
	// s.UsersFile.
	ApplyResult(ctx context.Context, run Run, s *Summary, users *Users) error
	// RecordFailure records that the execution failed (ERROR_HANDLING). It never replaces a
	// Summary already recorded for the execution: that one says more.
	RecordFailure(ctx context.Context, run Run, f *Failure) error
	// Audit records the audit records of one AUDIT_LOGGING call (call names it: see
	// auditCall). Recording the same call again replaces its records, so a call delivered twice
	// (the worker stopped after writing them) logs them once; an empty call only appends.
	Audit(ctx context.Context, run Run, call string, recs []AuditRecord) error
	// Outcome returns what was recorded for the execution: the JSON of its Summary or of its
	// Failure, nil when nothing was.
	Outcome(ctx context.Context, run Run) (json.RawMessage, error)
}

// Run names one execution of the CSV workflow to a Store: Execution is the key of its records,
// JobID the CSV job that started it (0: none), Source the file, and Dir the URI prefix of its work
// and result files, where a store without a database keeps its state.
type Run struct {
	Execution string
	JobID     int64
	Source    string
	Dir       string
}

// AuditRecord is one line of the audit log (seed 004's AUDIT_LOGGING): a log type (SUCCESS,
// BUSINESS_ERROR, SYSTEM_ERROR), the line of the row it is about (0: a chunk or the file), the
// rows accepted and rejected, and a detail text.
type AuditRecord struct {
	LogType string `json:"logType"`
	Item    int    `json:"itemIndex"`
	Line    int    `json:"line,omitempty"`
	OK      int64  `json:"rowsOk,omitempty"`
	Failed  int64  `json:"rowsFailed,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Users are the combined values of a file that passed, one entry per distinct user in key
// order: what the user table receives. Writing in key order lets a B-tree grow at its end
// instead of splitting pages all over a table larger than the page cache.
type Users struct {
	u             *users
	order         []int32
	loginK, postK int // the combined columns of login_count and post_count (-1: absent)
}

// newUsersResult orders u's users by key for the table update of plan pl.
func newUsersResult(u *users, pl *plan) *Users {
	r := &Users{u: u, loginK: -1, postK: -1, order: make([]int32, u.n())}
	for i := range r.order {
		r.order[i] = int32(i)
	}
	slices.SortFunc(r.order, func(a, b int32) int { return bytes.Compare(u.key(int(a)), u.key(int(b))) })
	for k, ci := range pl.combined {
		switch pl.s.Columns[ci].Field {
		case FieldLoginCount:
			r.loginK = k
		case FieldPostCount:
			r.postK = k
		}
	}
	return r
}

// Len is the number of users.
func (r *Users) Len() int { return len(r.order) }

// User returns the i-th user in key order: its id (valid until the Users is dropped) and its
// login and post counts (0 when the schema has no such column).
func (r *Users) User(i int) (id []byte, login, post int64) {
	j := int(r.order[i])
	if r.loginK >= 0 {
		login = r.u.val(r.loginK, j)
	}
	if r.postK >= 0 {
		post = r.u.val(r.postK, j)
	}
	return r.u.key(j), login, post
}

func encodePartial(p *partial) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(p)
	return b.Bytes(), err
}

func decodePartial(b []byte) (*partial, error) {
	var p partial
	err := gob.NewDecoder(bytes.NewReader(b)).Decode(&p)
	return &p, err
}

// stateError is err from the Store as the workflow's Retry expects it: a *job.Error as it is,
// anything else a retryable TemporaryError (E009).
func stateError(err error, what string) *job.Error {
	if je := (*job.Error)(nil); errors.As(err, &je) {
		return je
	}
	return job.Wrap(job.E009, err, "the job's state could not be saved ("+what+")").
		WithJa("ジョブの状態を保存できませんでした（" + what + "）。").WithName("TemporaryError").Transient()
}

// stage keeps chunk p of run until aggregation.
func (p *Processor) stage(ctx context.Context, run Run, part *partial) error {
	data, err := encodePartial(part)
	if err != nil {
		return job.Wrap(job.E016, err, "cannot encode a chunk result")
	}
	if err := p.Store.StageChunk(ctx, run, part.Chunk, data); err != nil {
		return stateError(err, "chunk result")
	}
	return nil
}

// staged returns the staged result of chunk, nil when there is none.
func (p *Processor) staged(ctx context.Context, run Run, chunk int) (*partial, error) {
	b, err := p.Store.StagedChunk(ctx, run, chunk)
	if err != nil {
		return nil, stateError(err, "read chunk results")
	}
	if b == nil {
		return nil, nil
	}
	part, err := decodePartial(b)
	if err != nil {
		return nil, job.Wrap(job.E016, err, "a chunk result is damaged")
	}
	return part, nil
}
