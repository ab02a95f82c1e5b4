// Package checksum is JobDesk's simplest job type: the SHA-256 of a file, with progress by bytes
// read. It exercises the whole path (queue, progress, cancel, CLI, window) with honest work and
// is the fallback for files no other job family reads. It reads its input through a blob store,
// so it neither needs nor knows a local disk or database.
package checksum

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Type is the job type name.
const Type = "checksum"

// Input is the handler's input.
type Input struct {
	Path string `json:"path"` // a path or URI of the blob store
}

// Result is the handler's result.
type Result struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Handler returns the job's handler, reading files through s (nil: this machine's files). It
// computes the file's SHA-256, reporting progress every 4 MiB and stopping when ctx ends.
func Handler(s blob.Store) job.Handler {
	if s == nil {
		s = blob.Local{}
	}
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return hash(ctx, s, raw, r)
	}
}

func hash(ctx context.Context, s blob.Store, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
		return nil, job.Errorf(job.E014, "the checksum job needs a file path").WithJa("チェックサムのジョブにファイルのパスがありません。")
	}
	f, err := s.Open(ctx, in.Path)
	if err != nil {
		if errors.Is(err, blob.ErrNotExist) {
			return nil, job.Wrap(job.E014, err, fmt.Sprintf("the file %s does not exist", in.Path)).
				WithJa(fmt.Sprintf("ファイル %s が見つかりません。", in.Path))
		}
		return nil, job.Wrap(job.E004, err, fmt.Sprintf("the file %s cannot be read", in.Path)).
			WithJa(fmt.Sprintf("ファイル %s を読み取れません。", in.Path))
	}
	defer f.Close()
	// A local folder opens but is no object: Stat tells.
	st, err := s.Stat(ctx, in.Path)
	if err != nil {
		return nil, job.Errorf(job.E004, "%s is a folder, not a file", in.Path).WithJa(fmt.Sprintf("%s はフォルダーです。ファイルを指定してください。", in.Path))
	}
	h := sha256.New()
	buf := make([]byte, 4<<20)
	var done int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		done += int64(n)
		if st.Size > 0 {
			r.Progress(float64(done)*100/float64(st.Size), fmt.Sprintf("%d / %d bytes", done, st.Size))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, job.Wrap(job.E004, err, "the file could not be read to the end").WithJa("ファイルを最後まで読み取れませんでした。")
		}
	}
	return json.Marshal(Result{Path: in.Path, Bytes: done, SHA256: hex.EncodeToString(h.Sum(nil))})
}
