package csvjob

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Objects BlobStore keeps in an execution's folder (Run.Dir).
const (
	// UsersFile holds the users of a file that passed, for the device to apply to its table:
	//
	//	{"execution":"…","sha256":"…","table":"csv_users","columns":["user_id","login_count","post_count"],
	//	 "users":[["U00001",5,12],["U00002",0,3],…]}
	//
	// one [id, login_count, post_count] triple per distinct user, in key order.
	UsersFile = "users.json"
	// SummaryFile holds the aggregation's Summary (ApplyResult).
	SummaryFile = "summary.json"
	// FailureFile holds ERROR_HANDLING's Failure (RecordFailure).
	FailureFile = "failure.json"
)

// BlobStore is the Store of a worker without a database: every piece of state is an object in
// the execution's folder under the job's output location (Run.Dir), written atomically. Staged
// chunks are chunk-NNNNNN.gob, the users of a file that passed go to UsersFile instead of a table
// (nothing is skipped: the device applies them when it fetches the results), the outcome to
// SummaryFile or FailureFile, and each audit call to an audit-….json object.
type BlobStore struct {
	Blob blob.Store
}

// NewBlobStore returns the Store that keeps its state in b.
func NewBlobStore(b blob.Store) *BlobStore { return &BlobStore{Blob: b} }

func chunkObject(run Run, chunk int) string {
	return blob.Join(run.Dir, fmt.Sprintf("chunk-%06d.gob", chunk))
}

// StageChunk implements Store.
func (s *BlobStore) StageChunk(ctx context.Context, run Run, chunk int, data []byte) error {
	if err := blob.WriteAll(ctx, s.Blob, chunkObject(run, chunk), data); err != nil {
		return blobError(err, "cannot write a chunk result")
	}
	return nil
}

// StagedChunk implements Store.
func (s *BlobStore) StagedChunk(ctx context.Context, run Run, chunk int) ([]byte, error) {
	b, err := blob.ReadAll(ctx, s.Blob, chunkObject(run, chunk))
	if errors.Is(err, blob.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, blobError(err, "cannot read a chunk result")
	}
	return b, nil
}

// ClearStaged implements Store.
func (s *BlobStore) ClearStaged(ctx context.Context, run Run) {
	list, _ := s.Blob.List(ctx, blob.Join(run.Dir, "chunk-"))
	for _, o := range list {
		_ = s.Blob.Remove(ctx, o.URI)
	}
}

// ApplyResult implements Store: the users go to UsersFile (named in s.UsersFile), then the
// Summary to SummaryFile.
func (s *BlobStore) ApplyResult(ctx context.Context, run Run, sum *Summary, users *Users) error {
	if users != nil {
		uri := blob.Join(run.Dir, UsersFile)
		if err := s.writeUsers(ctx, uri, run, sum, users); err != nil {
			return blobError(err, "cannot write the users file")
		}
		sum.UsersFile = uri
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return job.Wrap(job.E016, err, "cannot encode the summary")
	}
	if err := blob.WriteAll(ctx, s.Blob, blob.Join(run.Dir, SummaryFile), b); err != nil {
		return blobError(err, "cannot write the summary")
	}
	return nil
}

func (s *BlobStore) writeUsers(ctx context.Context, uri string, run Run, sum *Summary, users *Users) error {
	w, err := s.Blob.Create(ctx, uri)
	if err != nil {
		return err
	}
	defer w.Abort()
	bw := bufio.NewWriterSize(w, 256<<10)
	head, _ := json.Marshal(map[string]any{"execution": run.Execution, "sha256": sum.SHA256, "table": Table,
		"columns": []string{FieldUserID, FieldLoginCount, FieldPostCount}})
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"users":[`)
	var num []byte
	for i := range users.Len() {
		id, login, post := users.User(i)
		if i > 0 {
			bw.WriteByte(',')
		}
		q, _ := json.Marshal(string(id))
		bw.WriteByte('[')
		bw.Write(q)
		num = strconv.AppendInt(append(num[:0], ','), login, 10)
		num = strconv.AppendInt(append(num, ','), post, 10)
		bw.Write(append(num, ']'))
	}
	bw.WriteString("]}\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	return w.Commit()
}

// RecordFailure implements Store.
func (s *BlobStore) RecordFailure(ctx context.Context, run Run, f *Failure) error {
	if _, err := s.Blob.Stat(ctx, blob.Join(run.Dir, SummaryFile)); err == nil {
		return nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return job.Wrap(job.E016, err, "cannot encode the failure")
	}
	if err := blob.WriteAll(ctx, s.Blob, blob.Join(run.Dir, FailureFile), b); err != nil {
		return blobError(err, "cannot write the failure record")
	}
	return nil
}

// auditSeq tells apart audit objects written in the same nanosecond.
var auditSeq atomic.Int64

// Audit implements Store: one object per call, named by the call (so the same call delivered
// again replaces its object) or, for an unnamed call, by time, so calls never overwrite each
// other.
func (s *BlobStore) Audit(ctx context.Context, run Run, call string, recs []AuditRecord) error {
	b, err := json.Marshal(map[string]any{"execution": run.Execution, "records": recs})
	if err != nil {
		return job.Wrap(job.E016, err, "cannot encode the audit records")
	}
	name := fmt.Sprintf("audit-%d-%d.json", time.Now().UnixNano(), auditSeq.Add(1))
	if call != "" {
		h := sha256.Sum256([]byte(call))
		name = "audit-" + hex.EncodeToString(h[:12]) + ".json"
	}
	if err := blob.WriteAll(ctx, s.Blob, blob.Join(run.Dir, name), b); err != nil {
		return blobError(err, "cannot write the audit log")
	}
	return nil
}

// Outcome implements Store.
func (s *BlobStore) Outcome(ctx context.Context, run Run) (json.RawMessage, error) {
	for _, name := range []string{SummaryFile, FailureFile} {
		b, err := blob.ReadAll(ctx, s.Blob, blob.Join(run.Dir, name))
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, blob.ErrNotExist) {
			return nil, blobError(err, "cannot read the outcome")
		}
	}
	return nil, nil
}

// blobError is a failed object read or write: retryable, E010 for cloud storage, E009 for a
// local file.
func blobError(err error, msg string) *job.Error {
	code, ja := job.E009, "ファイルを読み書きできませんでした。"
	var pe *blob.PathError
	if errors.As(err, &pe) && blob.Scheme(pe.URI) != "file" {
		code, ja = job.E010, "クラウドストレージのファイルを読み書きできませんでした。"
	}
	return job.Wrap(code, err, msg).WithJa(ja).WithName("TemporaryError").Transient()
}
