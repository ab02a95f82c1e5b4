// Package s3blob is the S3 side of engine/blob: a blob.Store for "s3://bucket/key" URIs over the
// AWS SDK's S3 client, plugged into the engine with blob.Mux.Handle("s3", …) so a handler reads
// and writes S3 objects exactly as it does local files. It lives under sync/ because only sync/
// talks to AWS.
//
// It also owns the dispatcher's input upload (Upload): content-addressed (InputKey), skipped when
// the same SHA-256 is already there, multipart above one part size with SHA-256 checksums, and
// resumed — not restarted — after an interruption, so a 3 GB CSV that was half sent when the lid
// closed sends only its other half.
//
// Every error is a job.Error with code E010 and sentences in English and Japanese. Permanent
// causes (access denied, missing bucket, expired sign-in) name what to fix; throttling, server
// errors and network failures are retryable. A missing object also matches blob.ErrNotExist.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"jobdesk/engine/blob"
)

// MiB is a mebibyte.
const MiB = 1 << 20

// DefaultPartSize is the default multipart part size and the size up to which an object goes up
// in one PutObject.
const DefaultPartSize = 16 * MiB

// maxParts is S3's limit on the parts of one multipart upload.
const maxParts = 10000

// minPartSize is S3's smallest part (but the last).
const minPartSize = 5 * MiB

// Options tune a Store. The zero value is what JobDesk uses.
type Options struct {
	// PartSize is the size of a multipart upload's parts; a file of this size or less goes up in
	// one PutObject. 0: DefaultPartSize. Raised for a file that would need more than 10,000 parts.
	PartSize int64
	// Concurrency is how many parts go up at once. 0: 8 (the parts are read from the file as they
	// are sent, so more parts at once cost connections, not memory).
	Concurrency int
	// PageSize caps the keys of one ListObjectsV2 page. 0: the server's default (1,000).
	PageSize int32
	// TempDir holds the files Create spools to before Commit. "": the system's temporary folder.
	TempDir string
}

// Store is the blob.Store of S3 objects. It is safe for concurrent use.
type Store struct {
	client *s3.Client
	opts   Options
}

var _ blob.Store = (*Store)(nil)

// New returns a Store over client. Build the client with NewClient from
// config.LoadDefaultConfig's result, so region, credentials and endpoint come from the AWS SDK's
// own settings (AWS_ENDPOINT_URL_S3 and the profile's endpoint_url included).
func New(client *s3.Client, o Options) *Store {
	if o.PartSize <= 0 {
		o.PartSize = DefaultPartSize
	}
	o.PartSize = max(o.PartSize, minPartSize)
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	return &Store{client: client, opts: o}
}

// NewClient returns an S3 client for cfg. pathStyle addresses buckets as host/bucket/key instead
// of bucket.host/key, which local test servers and some S3-compatible stores need.
func NewClient(cfg aws.Config, pathStyle bool, optFns ...func(*s3.Options)) *s3.Client {
	return s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		o.UsePathStyle = pathStyle
	}}, optFns...)...)
}

// Split returns the bucket and key of an "s3://bucket/key" URI; the key may be empty.
func Split(uri string) (bucket, key string, err error) {
	rest, ok := cutPrefixFold(uri, "s3://")
	if !ok {
		return "", "", &blob.PathError{Op: "parse", URI: uri, Err: blob.ErrScheme}
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", &blob.PathError{Op: "parse", URI: uri, Err: errors.New("no bucket in the S3 URI")}
	}
	return bucket, key, nil
}

// URI returns "s3://bucket/key".
func URI(bucket, key string) string { return "s3://" + bucket + "/" + key }

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// object splits uri and refuses one without a key.
func object(op, uri string) (bucket, key string, err error) {
	bucket, key, err = Split(uri)
	if err != nil {
		return "", "", invalidURI(op, uri, err)
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return "", "", invalidURI(op, uri, errors.New("the S3 URI names no object"))
	}
	return bucket, key, nil
}

// Open implements blob.Store with GetObject.
func (s *Store) Open(ctx context.Context, uri string) (io.ReadCloser, error) {
	bucket, key, err := object("open", uri)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, fail("open", uri, err)
	}
	return out.Body, nil
}

// OpenRange implements blob.Store with a ranged GetObject. A range past the end of the object
// reads nothing, as it does for a local file.
func (s *Store) OpenRange(ctx context.Context, uri string, offset, length int64) (io.ReadCloser, error) {
	bucket, key, err := object("open", uri)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, invalidURI("open", uri, fmt.Errorf("negative offset %d", offset))
	}
	if length == 0 {
		if _, err := s.Stat(ctx, uri); err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	rng := fmt.Sprintf("bytes=%d-", offset)
	if length > 0 {
		rng += fmt.Sprint(offset + length - 1)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key, Range: &rng})
	if err != nil {
		if isUnsatisfiableRange(err) {
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, fail("open", uri, err)
	}
	return out.Body, nil
}

// Stat implements blob.Store with HeadObject.
func (s *Store) Stat(ctx context.Context, uri string) (blob.Info, error) {
	bucket, key, err := object("stat", uri)
	if err != nil {
		return blob.Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return blob.Info{}, fail("stat", uri, err)
	}
	return blob.Info{URI: uri, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// List implements blob.Store with ListObjectsV2, page after page. "s3://bucket" and
// "s3://bucket/" list the whole bucket.
func (s *Store) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	bucket, keyPrefix, err := Split(prefix)
	if err != nil {
		return nil, invalidURI("list", prefix, err)
	}
	in := &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &keyPrefix}
	if s.opts.PageSize > 0 {
		in.MaxKeys = &s.opts.PageSize
	}
	var infos []blob.Info
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fail("list", prefix, err)
		}
		for _, o := range page.Contents {
			infos = append(infos, blob.Info{URI: URI(bucket, aws.ToString(o.Key)), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
	}
	return infos, nil
}

// Remove implements blob.Store with DeleteObject; S3 does not mind a missing object.
func (s *Store) Remove(ctx context.Context, uri string) error {
	bucket, key, err := object("remove", uri)
	if err != nil {
		return err
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		return fail("remove", uri, err)
	}
	return nil
}
