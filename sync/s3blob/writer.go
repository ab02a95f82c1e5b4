package s3blob

import (
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"os"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Create implements blob.Store: the writer spools the bytes to a temporary file and Commit
// uploads them (PutObject up to the part size, multipart above, SHA-256 checked by S3), so the
// object appears whole or not at all. Abort, or a failed Commit, leaves nothing in S3.
func (s *Store) Create(ctx context.Context, uri string) (blob.Writer, error) {
	bucket, key, err := object("create", uri)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.opts.TempDir, "jobdesk-s3-*")
	if err != nil {
		return nil, job.Wrap(job.E010, &blob.PathError{Op: "create", URI: uri, Err: err}, "No temporary file could be made for the upload to "+uri+".").
			WithJa(uri + " へのアップロード用の一時ファイルを作成できません。").Transient()
	}
	return &writer{ctx: ctx, store: s, bucket: bucket, key: key, uri: uri, f: f, hash: sha256.New()}, nil
}

type writer struct {
	ctx              context.Context
	store            *Store
	bucket, key, uri string
	f                *os.File
	hash             hash.Hash
	size             int64
	done             bool
}

func (w *writer) Write(b []byte) (int, error) {
	if w.done {
		return 0, errors.New("blob: writer already finished")
	}
	n, err := w.f.Write(b)
	w.hash.Write(b[:n])
	w.size += int64(n)
	return n, err
}

// Commit uploads the spooled bytes and removes the temporary file.
func (w *writer) Commit() error {
	if w.done {
		return errors.New("blob: writer already finished")
	}
	w.done = true
	defer w.discard()
	up := &upload{store: w.store, bucket: w.bucket, key: w.key, uri: w.uri, local: w.f.Name(),
		file: w.f, size: w.size, sha256: w.hash.Sum(nil), abandon: true}
	return up.run(w.ctx, false)
}

// Abort discards the bytes; after Commit it does nothing.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.discard()
	return nil
}

func (w *writer) discard() {
	w.f.Close()
	os.Remove(w.f.Name())
}
