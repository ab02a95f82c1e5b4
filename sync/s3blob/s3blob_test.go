package s3blob_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"jobdesk/assets/deploy"
	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/s3blob"
)

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	r.Read(b)
	return b
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "input.csv")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hexSHA256(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func mustCode(t *testing.T, err error, retryable bool) *job.Error {
	t.Helper()
	var e *job.Error
	if !errors.As(err, &e) || e.Code != job.E010 {
		t.Fatalf("error %v is not an E010 job.Error", err)
	}
	if e.Retryable != retryable {
		t.Fatalf("error %v: retryable %v, want %v", err, e.Retryable, retryable)
	}
	if e.Message == "" || e.MessageJa == "" {
		t.Fatalf("error %v lacks its own sentences: en %q ja %q", err, e.Message, e.MessageJa)
	}
	return e
}

func TestRoundTripAndRanges(t *testing.T) {
	srv := awstest.StartS3(t)
	ctx := context.Background()
	st := s3blob.New(srv.Client, s3blob.Options{PartSize: 5 * s3blob.MiB})
	var store blob.Store = st
	small := []byte("id,name\n1,山田\n2,佐藤\n")
	uri := s3blob.URI(srv.Bucket, "jobs/1/result.csv")
	if err := blob.WriteAll(ctx, store, uri, small); err != nil {
		t.Fatal(err)
	}
	got, err := blob.ReadAll(ctx, store, uri)
	if err != nil || !bytes.Equal(got, small) {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	info, err := store.Stat(ctx, uri)
	if err != nil || info.Size != int64(len(small)) || info.URI != uri || info.ModTime.IsZero() {
		t.Fatalf("Stat = %+v, %v", info, err)
	}

	// A writer larger than one part goes up as a multipart upload and reads back the same.
	big := randomBytes(1, 12*s3blob.MiB+123)
	bigURI := s3blob.URI(srv.Bucket, "jobs/1/big.bin")
	if n, err := blob.Copy(ctx, store, bigURI, bytes.NewReader(big)); err != nil || n != int64(len(big)) {
		t.Fatalf("Copy = %d, %v", n, err)
	}
	if got, err := blob.ReadAll(ctx, store, bigURI); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("multipart round trip: %d bytes, %v", len(got), err)
	}
	head, err := srv.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &srv.Bucket, Key: aws.String("jobs/1/big.bin")})
	if err != nil || head.Metadata[s3blob.MetaSHA256] != hexSHA256(big) {
		t.Fatalf("multipart object's sha256 metadata = %v, %v; want %s", head.Metadata, err, hexSHA256(big))
	}

	for _, c := range []struct {
		off, n int64
		want   []byte
	}{
		{0, 5, big[:5]},
		{1000, -1, big[1000:]},
		{5*s3blob.MiB - 10, 20, big[5*s3blob.MiB-10 : 5*s3blob.MiB+10]}, // across a part boundary
		{int64(len(big)) - 3, 10, big[len(big)-3:]},                     // past the end: what there is
		{int64(len(big)) + 5, 10, nil},                                  // wholly past the end: nothing
		{7, 0, nil},
	} {
		r, err := store.OpenRange(ctx, bigURI, c.off, c.n)
		if err != nil {
			t.Fatalf("OpenRange(%d, %d): %v", c.off, c.n, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("OpenRange(%d, %d) = %d bytes, %v; want %d", c.off, c.n, len(got), err, len(c.want))
		}
	}

	if err := store.Remove(ctx, uri); err != nil {
		t.Fatal(err)
	}
	if err := store.Remove(ctx, uri); err != nil {
		t.Fatalf("removing a missing object: %v", err)
	}
	if _, err := store.Stat(ctx, uri); !errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("Stat after Remove: %v", err)
	}

	// Through a Mux, as the engine uses it.
	mux := blob.NewMux(blob.Local{})
	mux.Handle("s3", store)
	if got, err := blob.ReadAll(ctx, mux, bigURI); err != nil || len(got) != len(big) {
		t.Fatalf("through the Mux: %d bytes, %v", len(got), err)
	}
}

func TestCreateIsAtomic(t *testing.T) {
	srv := awstest.StartS3(t)
	ctx := context.Background()
	for _, size := range []int{1000, 11 * s3blob.MiB} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			counter := awstest.NewCounter()
			store := s3blob.New(srv.NewClient(counter), s3blob.Options{PartSize: 5 * s3blob.MiB})
			uri := s3blob.URI(srv.Bucket, fmt.Sprintf("atomic/%d.bin", size))
			data := randomBytes(2, size)

			w, err := store.Create(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data[:size/2])
			w.Write(data[size/2:])
			if _, err := store.Stat(ctx, uri); !errors.Is(err, blob.ErrNotExist) {
				t.Fatalf("visible before Commit: %v", err)
			}
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if n := counter.Count("PutObject") + counter.Count("UploadPart") + counter.Count("CreateMultipartUpload"); n != 0 {
				t.Fatalf("an aborted writer sent %d writes", n)
			}
			if infos, err := store.List(ctx, s3blob.URI(srv.Bucket, "atomic/")); err != nil || len(infos) != 0 {
				t.Fatalf("after Abort: %v, %v", infos, err)
			}

			w, err = store.Create(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			w.Write(data)
			if _, err := store.Stat(ctx, uri); !errors.Is(err, blob.ErrNotExist) {
				t.Fatalf("visible before Commit: %v", err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("Abort after Commit: %v", err)
			}
			if got, err := blob.ReadAll(ctx, store, uri); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("after Commit: %d bytes, %v", len(got), err)
			}
			if err := store.Remove(ctx, uri); err != nil {
				t.Fatal(err)
			}
		})
	}

	// A Commit that fails (no such bucket) leaves no unfinished upload and says what to fix.
	store := s3blob.New(srv.Client, s3blob.Options{PartSize: 5 * s3blob.MiB})
	err := blob.WriteAll(ctx, store, "s3://no-such-bucket/a.bin", randomBytes(3, 6*s3blob.MiB))
	e := mustCode(t, err, false)
	if !strings.Contains(e.Message, "no-such-bucket") {
		t.Fatalf("message does not name the bucket: %v", e)
	}
}

func TestList(t *testing.T) {
	srv := awstest.StartS3(t)
	ctx := context.Background()
	counter := awstest.NewCounter()
	store := s3blob.New(srv.NewClient(counter), s3blob.Options{PageSize: 2})
	var want []string
	for i := range 7 {
		uri := s3blob.URI(srv.Bucket, fmt.Sprintf("dir/part-%02d.csv", i))
		want = append(want, uri)
		if err := blob.WriteAll(ctx, store, uri, []byte(strings.Repeat("x", i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"dir2/a", "dir2/b", "other"} {
		if err := blob.WriteAll(ctx, store, s3blob.URI(srv.Bucket, k), []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	counter.Reset()
	infos, err := store.List(ctx, s3blob.URI(srv.Bucket, "dir/"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, info := range infos {
		got = append(got, info.URI)
		if info.Size != int64(i) || info.ModTime.IsZero() {
			t.Fatalf("info %+v", info)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if n := counter.Count("ListObjectsV2"); n != 4 {
		t.Fatalf("7 keys in pages of 2 took %d ListObjectsV2 requests, want 4", n)
	}
	if infos, err := store.List(ctx, s3blob.URI(srv.Bucket, "dir")); err != nil || len(infos) != 9 {
		t.Fatalf(`List("dir") = %d objects, %v; want 9`, len(infos), err)
	}
	if infos, err := store.List(ctx, "s3://"+srv.Bucket); err != nil || len(infos) != 10 {
		t.Fatalf("List(bucket) = %d objects, %v; want 10", len(infos), err)
	}
	if infos, err := store.List(ctx, s3blob.URI(srv.Bucket, "nothing/")); err != nil || len(infos) != 0 {
		t.Fatalf("List(nothing/) = %v, %v", infos, err)
	}
	_, err = store.List(ctx, "s3://no-such-bucket/x")
	if e := mustCode(t, err, false); !strings.Contains(e.Message, "no-such-bucket") {
		t.Fatalf("missing bucket: %v", e)
	}
}

func TestErrors(t *testing.T) {
	srv := awstest.StartS3(t)
	ctx := context.Background()
	store := s3blob.New(srv.Client, s3blob.Options{})
	missing := s3blob.URI(srv.Bucket, "no/such/object")
	_, errOpen := store.Open(ctx, missing)
	_, errRange := store.OpenRange(ctx, missing, 10, 10)
	_, errStat := store.Stat(ctx, missing)
	for _, err := range []error{errOpen, errRange, errStat} {
		if !errors.Is(err, blob.ErrNotExist) {
			t.Fatalf("missing object: %v does not match blob.ErrNotExist", err)
		}
		mustCode(t, err, false)
	}

	// Wrong credentials: permanent, and says to check them.
	badCfg := srv.Config.Copy()
	badCfg.Credentials = aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong"}, nil
	}))
	bad := s3blob.New(s3blob.NewClient(badCfg, true, func(o *s3.Options) { o.BaseEndpoint = &srv.Endpoint }), s3blob.Options{})
	_, err := bad.Stat(ctx, s3blob.URI(srv.Bucket, "x"))
	if errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("refused credentials read as a missing object: %v", err)
	}
	mustCode(t, err, false)
	_, err = bad.List(ctx, s3blob.URI(srv.Bucket, ""))
	if e := mustCode(t, err, false); !strings.Contains(e.Message, "credentials") {
		t.Fatalf("refused credentials: %v", e)
	}

	// No server: retryable, says to check the network.
	down := s3blob.New(s3blob.NewClient(srv.Config, true, func(o *s3.Options) {
		o.BaseEndpoint = aws.String("http://127.0.0.1:1")
		o.RetryMaxAttempts = 1
	}), s3blob.Options{})
	_, err = down.List(ctx, s3blob.URI(srv.Bucket, ""))
	if e := mustCode(t, err, true); !strings.Contains(e.Message, "network") {
		t.Fatalf("no server: %v", e)
	}

	// Not an S3 object URI.
	if _, err := store.Open(ctx, "s3://"+srv.Bucket+"/"); err == nil {
		t.Fatal("opened a bucket as an object")
	}
	if _, err := store.Stat(ctx, "/home/u/a.csv"); !errors.Is(err, blob.ErrScheme) {
		t.Fatalf("a local path: %v", err)
	}
}

// TestEndpointFromSDKSettings builds the client the way JobDesk does: config.LoadDefaultConfig,
// with the endpoint from AWS_ENDPOINT_URL_S3.
func TestEndpointFromSDKSettings(t *testing.T) {
	srv := awstest.StartS3(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_PROFILE", "")
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	store := s3blob.New(s3blob.NewClient(cfg, true), s3blob.Options{})
	uri := s3blob.URI(srv.Bucket, "env.txt")
	if err := blob.WriteAll(context.Background(), store, uri, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if got, err := blob.ReadAll(context.Background(), store, uri); err != nil || string(got) != "ok" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
}

func TestInputKey(t *testing.T) {
	sum := hexSHA256([]byte("a"))
	for _, c := range []struct{ prefix, name, want string }{
		{"", "a.csv", "inputs/" + sum[:2] + "/" + sum + "/a.csv"},
		{"jobdesk/", "a.csv", "jobdesk/inputs/" + sum[:2] + "/" + sum + "/a.csv"},
		{"jobdesk", `C:\Users\u\売上.csv`, "jobdesk/inputs/" + sum[:2] + "/" + sum + "/売上.csv"},
		{"s3://b/p/", "/home/u/x.pdf", "s3://b/p/inputs/" + sum[:2] + "/" + sum + "/x.pdf"},
	} {
		if got := s3blob.InputKey(c.prefix, sum, c.name); got != c.want {
			t.Errorf("InputKey(%q, …, %q) = %q, want %q", c.prefix, c.name, got, c.want)
		}
	}
}

func TestUploadSkipsSameContent(t *testing.T) {
	srv := awstest.StartS3(t)
	ctx := context.Background()
	counter := awstest.NewCounter()
	store := s3blob.New(srv.NewClient(counter), s3blob.Options{})
	data := randomBytes(4, 100_000)
	local := writeFile(t, data)
	uri := s3blob.URI(srv.Bucket, s3blob.InputKey("jobdesk/", hexSHA256(data), "input.csv"))

	var last [2]int64
	res, err := store.Upload(ctx, local, uri, func(done, total int64) { last = [2]int64{done, total} })
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped || res.SHA256 != hexSHA256(data) || res.Size != int64(len(data)) || res.Parts != 0 || res.SentBytes != int64(len(data)) {
		t.Fatalf("first upload: %+v", res)
	}
	if last != [2]int64{int64(len(data)), int64(len(data))} || counter.Count("PutObject") != 1 {
		t.Fatalf("progress %v, %d PutObject", last, counter.Count("PutObject"))
	}

	counter.Reset()
	last = [2]int64{}
	res, err = store.Upload(ctx, local, uri, func(done, total int64) { last = [2]int64{done, total} })
	if err != nil {
		t.Fatal(err)
	}
	if !res.Skipped || res.SentBytes != 0 || res.Size != int64(len(data)) {
		t.Fatalf("second upload: %+v", res)
	}
	if n := counter.Count("PutObject") + counter.Count("UploadPart") + counter.Count("CreateMultipartUpload"); n != 0 || counter.Count("HeadObject") != 1 {
		t.Fatalf("second upload sent %d writes and %d HeadObject; want 0 and 1", n, counter.Count("HeadObject"))
	}
	if last != [2]int64{int64(len(data)), int64(len(data))} {
		t.Fatalf("progress of a skipped upload: %v", last)
	}

	// An object put by another client in one piece is recognised by S3's own ChecksumSHA256.
	other := s3blob.URI(srv.Bucket, "by-cli/input.csv")
	srv.RunAWS(t, "s3api", "put-object", "--bucket", srv.Bucket, "--key", "by-cli/input.csv", "--body", local, "--checksum-algorithm", "SHA256")
	counter.Reset()
	if res, err := store.Upload(ctx, local, other, nil); err != nil || !res.Skipped {
		t.Fatalf("upload over the CLI's identical object: %+v, %v", res, err)
	}
	// Different bytes under the same key are sent.
	changed := writeFile(t, append(data[:len(data):len(data)], '!'))
	if res, err := store.Upload(ctx, changed, other, nil); err != nil || res.Skipped {
		t.Fatalf("upload of changed bytes: %+v, %v", res, err)
	}
	if got, err := blob.ReadAll(ctx, store, other); err != nil || !bytes.Equal(got, append(data[:len(data):len(data)], '!')) {
		t.Fatalf("changed bytes: %d, %v", len(got), err)
	}

	if _, err := store.Upload(ctx, filepath.Join(t.TempDir(), "missing.csv"), uri, nil); err == nil {
		t.Fatal("uploaded a missing file")
	} else if e := job.AsError(err); e.Code != job.E014 || e.Retryable {
		t.Fatalf("missing local file: %v", e)
	}
}

func TestUploadMultipart40MB(t *testing.T) {
	srv := awstest.StartS3(t)
	ctx := context.Background()
	counter := awstest.NewCounter()
	store := s3blob.New(srv.NewClient(counter), s3blob.Options{})
	data := randomBytes(5, 40*s3blob.MiB+17)
	local := writeFile(t, data)
	key := s3blob.InputKey("jobdesk/", hexSHA256(data), "big.csv")
	uri := s3blob.URI(srv.Bucket, key)

	var calls []int64
	res, err := store.Upload(ctx, local, uri, func(done, total int64) {
		if total != int64(len(data)) {
			t.Errorf("progress total %d", total)
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Parts != 3 || res.ResumedParts != 0 || res.SentBytes != int64(len(data)) || res.Skipped {
		t.Fatalf("upload: %+v", res)
	}
	if counter.Count("UploadPart") != 3 || counter.Count("CreateMultipartUpload") != 1 || counter.Count("CompleteMultipartUpload") != 1 || counter.Count("PutObject") != 0 {
		t.Fatalf("requests: %d UploadPart, %d Create, %d Complete, %d PutObject", counter.Count("UploadPart"), counter.Count("CreateMultipartUpload"), counter.Count("CompleteMultipartUpload"), counter.Count("PutObject"))
	}
	if len(calls) != 4 || calls[0] != 0 || calls[3] != int64(len(data)) {
		t.Fatalf("progress calls %v", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] <= calls[i-1] {
			t.Fatalf("progress goes back: %v", calls)
		}
	}
	got, err := blob.ReadAll(ctx, store, uri)
	if err != nil || hexSHA256(got) != hexSHA256(data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}

	counter.Reset()
	if res, err := store.Upload(ctx, local, uri, nil); err != nil || !res.Skipped {
		t.Fatalf("second upload: %+v, %v", res, err)
	}
	if n := counter.Count("PutObject") + counter.Count("UploadPart") + counter.Count("CreateMultipartUpload"); n != 0 {
		t.Fatalf("second upload of the same bytes sent %d writes", n)
	}

	// An independent client sees the object, its size and the SHA-256 JobDesk stored.
	var head struct {
		ContentLength int64
		Metadata      map[string]string
	}
	out := srv.RunAWS(t, "s3api", "head-object", "--bucket", srv.Bucket, "--key", key)
	if err := json.Unmarshal([]byte(out), &head); err != nil {
		t.Fatalf("aws s3api head-object: %v\n%s", err, out)
	}
	if head.ContentLength != int64(len(data)) || head.Metadata[s3blob.MetaSHA256] != hexSHA256(data) {
		t.Fatalf("aws s3api head-object: %s", out)
	}
	if ls := srv.RunAWS(t, "s3", "ls", "--recursive", "s3://"+srv.Bucket+"/jobdesk/inputs/"); !strings.Contains(ls, key) || !strings.Contains(ls, fmt.Sprint(len(data))) {
		t.Fatalf("aws s3 ls: %s", ls)
	}
}

func listParts(t *testing.T, srv *awstest.S3, key string) (uploads, parts int) {
	t.Helper()
	ctx := context.Background()
	out, err := srv.Client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &srv.Bucket, Prefix: &key})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range out.Uploads {
		p, err := srv.Client.ListParts(ctx, &s3.ListPartsInput{Bucket: &srv.Bucket, Key: &key, UploadId: u.UploadId})
		if err != nil {
			t.Fatal(err)
		}
		parts += len(p.Parts)
		for _, part := range p.Parts {
			if part.ChecksumSHA256 == nil {
				t.Errorf("part %d was stored without its SHA-256", aws.ToInt32(part.PartNumber))
			}
		}
	}
	return len(out.Uploads), parts
}

// uploadUntil uploads local to uri and cancels once at least parts parts are done; it returns
// the error the interrupted upload gave.
func uploadUntil(t *testing.T, store *s3blob.Store, local, uri string, partSize int64, parts int) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := store.Upload(ctx, local, uri, func(done, total int64) {
		if done >= int64(parts)*partSize {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("the upload was not interrupted")
	}
	return err
}

func TestUploadResumes(t *testing.T) {
	srv := awstest.StartS3(t)
	counter := awstest.NewCounter()
	const partSize = 5 * s3blob.MiB
	store := s3blob.New(srv.NewClient(counter), s3blob.Options{PartSize: partSize, Concurrency: 2})
	data := randomBytes(6, 40*s3blob.MiB+1000) // 9 parts
	local := writeFile(t, data)
	key := s3blob.InputKey("", hexSHA256(data), "resume.csv")
	uri := s3blob.URI(srv.Bucket, key)

	err := uploadUntil(t, store, local, uri, partSize, 3)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v", err)
	}
	mustCode(t, err, true)
	if _, err := store.Stat(context.Background(), uri); !errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("an interrupted upload is visible: %v", err)
	}
	uploads, done := listParts(t, srv, key)
	if uploads != 1 || done < 3 || done >= 9 {
		t.Fatalf("after the interruption: %d uploads with %d parts", uploads, done)
	}

	counter.Reset()
	var first int64 = -1
	res, err := store.Upload(context.Background(), local, uri, func(d, total int64) {
		if first < 0 {
			first = d
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// A part in flight at the interruption may still have landed after the listing above.
	if res.Parts != 9 || res.ResumedParts < done || res.SentBytes != int64(len(data))-int64(res.ResumedParts)*partSize {
		t.Fatalf("resumed upload: %+v (%d parts were done)", res, done)
	}
	if n := counter.Count("UploadPart"); n != 9-res.ResumedParts {
		t.Fatalf("the resumed upload sent %d parts, want %d: finished parts were sent again", n, 9-res.ResumedParts)
	}
	if counter.Count("CreateMultipartUpload") != 0 || counter.Count("ListParts") != 1 {
		t.Fatalf("resume: %d CreateMultipartUpload, %d ListParts", counter.Count("CreateMultipartUpload"), counter.Count("ListParts"))
	}
	if first != 0 {
		t.Fatalf("first progress %d, want 0", first)
	}
	got, err := blob.ReadAll(context.Background(), store, uri)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("resumed object: %d bytes (%s), %v; want %s", len(got), hexSHA256(got), err, hexSHA256(data))
	}
	if uploads, _ := listParts(t, srv, key); uploads != 0 {
		t.Fatalf("%d unfinished uploads left", uploads)
	}
}

// TestUploadDoesNotResumeOtherBytes: an unfinished upload under the key that was for other bytes
// is not completed with this file's parts.
func TestUploadDoesNotResumeOtherBytes(t *testing.T) {
	srv := awstest.StartS3(t)
	const partSize = 5 * s3blob.MiB
	store := s3blob.New(srv.Client, s3blob.Options{PartSize: partSize, Concurrency: 1})
	a := randomBytes(7, 20*s3blob.MiB)
	uri := s3blob.URI(srv.Bucket, "same/key.bin")

	// b differs from a in its first part: no listed part matches.
	b := bytes.Clone(a)
	b[10] ^= 1
	// c differs from a only in its last part: the listed parts match, but the upload's SHA-256
	// metadata was a's.
	c := bytes.Clone(a)
	c[len(c)-1] ^= 1
	for name, other := range map[string][]byte{"first part differs": b, "last part differs": c} {
		t.Run(name, func(t *testing.T) {
			uploadUntil(t, store, writeFile(t, a), uri, partSize, 2)
			res, err := store.Upload(context.Background(), writeFile(t, other), uri, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := blob.ReadAll(context.Background(), store, uri)
			if err != nil || !bytes.Equal(got, other) {
				t.Fatalf("object holds other bytes: %v", err)
			}
			head, err := srv.Client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &srv.Bucket, Key: aws.String("same/key.bin")})
			if err != nil || head.Metadata[s3blob.MetaSHA256] != hexSHA256(other) || res.SHA256 != hexSHA256(other) {
				t.Fatalf("sha256 metadata %v, %v; want %s", head.Metadata, err, hexSHA256(other))
			}
			if err := store.Remove(context.Background(), uri); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUploadResumesAfterKill kills an uploading process (kill -9) after some parts, then
// uploads again: the parts the dead process finished are not sent again.
func TestUploadResumesAfterKill(t *testing.T) {
	srv := awstest.StartS3(t)
	const partSize = 5 * s3blob.MiB
	data := randomBytes(8, 30*s3blob.MiB+5) // 7 parts
	local := writeFile(t, data)
	uri := s3blob.URI(srv.Bucket, s3blob.InputKey("", hexSHA256(data), "killed.csv"))

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "S3BLOB_CHILD_UPLOAD="+strings.Join([]string{srv.Endpoint, srv.AccessKey, srv.SecretKey, local, uri}, "\n"))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	killed := false
	for lines.Scan() {
		var done int64
		if _, err := fmt.Sscanf(lines.Text(), "done %d", &done); err == nil && done >= 3*partSize {
			cmd.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatal("the child finished before it was killed")
	}
	_, before := listParts(t, srv, strings.TrimPrefix(uri, "s3://"+srv.Bucket+"/"))

	counter := awstest.NewCounter()
	store := s3blob.New(srv.NewClient(counter), s3blob.Options{PartSize: partSize, Concurrency: 2})
	res, err := store.Upload(context.Background(), local, uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedParts < 3 || res.ResumedParts < before || counter.Count("UploadPart") != 7-res.ResumedParts {
		t.Fatalf("after kill -9: %d parts listed, resumed %d, sent %d UploadPart", before, res.ResumedParts, counter.Count("UploadPart"))
	}
	if got, err := blob.ReadAll(context.Background(), store, uri); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object after kill -9 and resume: %d bytes, %v", len(got), err)
	}
}

// TestMain runs the child of TestUploadResumesAfterKill when asked: it uploads, printing its
// progress, until it is killed.
func TestMain(m *testing.M) {
	if spec := os.Getenv("S3BLOB_CHILD_UPLOAD"); spec != "" {
		os.Exit(uploadChild(strings.Split(spec, "\n")))
	}
	// Every call the store makes is the desktop's, on its inputs (the store moves them for the
	// dispatcher): each is checked against the deploy template's desktop policy, keys read as
	// under a stack's PREFIXinputs/.
	stack := deploy.Stack{Name: "jobdesk", Region: awstest.Region, Account: "000000000000", Bucket: "jobdesk-test", Prefix: "jobdesk/"}
	calls := &awstest.Recorder{Rename: func(c deploy.Call) deploy.Call {
		if c.Bucket != "" {
			c.Bucket = stack.Bucket
		}
		if c.Key != "" && !strings.HasPrefix(c.Key, "inputs/") {
			c.Key = "inputs/" + c.Key
		}
		if c.Key != "" {
			c.Key = stack.Prefix + c.Key
		}
		return c
	}}
	awstest.S3ClientOptions = append(awstest.S3ClientOptions, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, calls.Option(awstest.Desktop))
	})
	code := m.Run()
	if code == 0 {
		code = awstest.ReportIAM(calls, stack, "s3blob")
	}
	os.Exit(code)
}

func uploadChild(args []string) int {
	endpoint, access, secret, local, uri := args[0], args[1], args[2], args[3], args[4]
	cfg := aws.Config{Region: awstest.Region, Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: access, SecretAccessKey: secret}, nil
	})}
	client := s3blob.NewClient(cfg, true, func(o *s3.Options) { o.BaseEndpoint = &endpoint })
	store := s3blob.New(client, s3blob.Options{PartSize: 5 * s3blob.MiB, Concurrency: 1})
	_, err := store.Upload(context.Background(), local, uri, func(done, total int64) {
		fmt.Printf("done %d\n", done)
		if done > 0 {
			time.Sleep(time.Second) // wait to be killed
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
