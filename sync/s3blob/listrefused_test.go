package s3blob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/s3blob"
)

// refuseListBucket puts S3's rule for an identity without s3:ListBucket in front of srv: a
// missing key reads 403 AccessDenied instead of 404, and listing is refused.
func refuseListBucket(t *testing.T, srv *awstest.S3) string {
	t.Helper()
	target, _ := url.Parse(srv.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(res *http.Response) error {
		if res.StatusCode == http.StatusNotFound && (res.Request.Method == http.MethodHead || res.Request.Method == http.MethodGet) {
			res.StatusCode, res.Status = http.StatusForbidden, "403 Forbidden"
			body := []byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			if res.Request.Method == http.MethodHead {
				body = nil
			}
			res.Body.Close()
			res.Body = httpBody(body)
			res.ContentLength = int64(len(body))
			res.Header.Set("Content-Length", itoa(len(body)))
		}
		return nil
	}
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucketPath := r.URL.Path == "/"+srv.Bucket || r.URL.Path == "/"+srv.Bucket+"/"
		// ListObjects (v1 and v2); listing multipart uploads is another permission.
		if r.Method == http.MethodGet && bucketPath && !r.URL.Query().Has("uploads") {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	return h.URL
}

// TestUploadWhereListBucketIsRefused: where the identity may put and get objects but not list
// the bucket, S3 answers "is the input already there?" with 403. The content-addressed upload
// then sends the file (it would send it anyway when absent, and the key names these bytes), and
// a second upload finds it; reading a missing object still says access was denied, never that
// the object is missing.
func TestUploadWhereListBucketIsRefused(t *testing.T) {
	srv := awstest.StartS3(t)
	endpoint := refuseListBucket(t, srv)
	ctx := context.Background()
	store := s3blob.New(srv.NewClient(nil, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint) }), s3blob.Options{})
	data := randomBytes(9, 50_000)
	local := writeFile(t, data)
	uri := s3blob.URI(srv.Bucket, s3blob.InputKey("jobdesk/", hexSHA256(data), "input.csv"))
	res, err := store.Upload(ctx, local, uri, nil)
	if err != nil {
		t.Fatalf("first upload where ListBucket is refused: %v", err)
	}
	if res.Skipped || res.SentBytes != int64(len(data)) {
		t.Fatalf("first upload: %+v", res)
	}
	if got, err := blob.ReadAll(ctx, store, uri); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("uploaded object: %d bytes, %v", len(got), err)
	}
	if res, err := store.Upload(ctx, local, uri, nil); err != nil || !res.Skipped {
		t.Fatalf("second upload: %+v, %v", res, err)
	}
	_, err = store.Stat(ctx, s3blob.URI(srv.Bucket, "jobdesk/inputs/none"))
	if err == nil || errors.Is(err, blob.ErrNotExist) || job.AsError(err).Code != job.E010 {
		t.Fatalf("stat of a missing object where ListBucket is refused: %v (must be access denied, not missing)", err)
	}
}

func httpBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func itoa(n int) string { return strconv.Itoa(n) }
