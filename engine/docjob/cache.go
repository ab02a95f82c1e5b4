package docjob

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"

	"jobdesk/engine/blob"
)

// Key names one stored conversion: the input's bytes (SHA-256, hex), the converter version that
// made it and the options that change the Markdown (e.g. "furigana=false;ocr=true"). Converting
// the same bytes again with the same version and options may reuse the stored result (seed 003,
// Job B: hash comparison, skip unless force).
type Key struct {
	SHA256  string
	Version string
	Options string
}

// Cache keeps conversion results for reuse. The converter declares it, rather than owning a
// table, so the same handler caches in the device's SQLite database (package docsqlite), in
// content-addressed objects of a blob store where there is no database (BlobCache, the cloud),
// or not at all (a nil Cache).
//
// Get reports found=false, with no error, for a result that was never stored or cannot be read
// back. A failed Put only loses the reuse: the converter never fails a conversion for it.
type Cache interface {
	Get(ctx context.Context, k Key) (res Result, found bool, err error)
	Put(ctx context.Context, k Key, res Result) error
}

// BlobCache is a Cache of JSON objects in a blob store, one per key, under Prefix:
// PREFIX/VERSION/SH/SHA256_OPTIONS.json, where SH is the first two hex digits of the SHA-256 and
// VERSION and OPTIONS are escaped so any key is one safe object name. Objects are written
// atomically, so a concurrent reader sees the old result or the new one, never half of one.
type BlobCache struct {
	Store  blob.Store
	Prefix string // e.g. "s3://bucket/jobdesk/docjob-cache" or a local folder
}

// uri is the object of k.
func (c BlobCache) uri(k Key) string {
	shard := k.SHA256
	if len(shard) > 2 {
		shard = shard[:2]
	}
	return blob.Join(c.Prefix, url.QueryEscape(k.Version), url.QueryEscape(shard),
		url.QueryEscape(k.SHA256)+"_"+url.QueryEscape(k.Options)+".json")
}

// Get implements Cache.
func (c BlobCache) Get(ctx context.Context, k Key) (Result, bool, error) {
	b, err := blob.ReadAll(ctx, c.Store, c.uri(k))
	if errors.Is(err, blob.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	var res Result
	if json.Unmarshal(b, &res) != nil {
		return Result{}, false, nil
	}
	return res, true, nil
}

// Put implements Cache.
func (c BlobCache) Put(ctx context.Context, k Key, res Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return blob.WriteAll(ctx, c.Store, c.uri(k), b)
}
