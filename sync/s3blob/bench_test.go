package s3blob_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/s3blob"
)

// BenchmarkUpload1GB uploads a 1 GiB file to versitygw with Upload and, in the same run, with
// `aws s3 cp` (the AWS CLI v2, its default 8 MiB parts and 10 threads) to the same server.
// ns/op and MB/s are Upload's; awscli-s/op is the CLI's time and ratio is Upload's time over the
// CLI's (the goal is ≤ 1.0). Run: go test -run '^$' -bench Upload1GB -benchtime 1x ./sync/s3blob
func BenchmarkUpload1GB(b *testing.B) {
	const size = 1 << 30
	local := filepath.Join(b.TempDir(), "1GiB.csv")
	f, err := os.Create(local)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 4*s3blob.MiB)
	r := rand.NewChaCha8([32]byte{9})
	buf := make([]byte, 4*s3blob.MiB)
	for n := 0; n < size; n += len(buf) {
		r.Read(buf)
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()

	srv := awstest.StartS3(b)
	awstest.AWSCLI(b)
	store := s3blob.New(srv.Client, s3blob.Options{})
	ctx := context.Background()
	var ours, theirs time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		uri := s3blob.URI(srv.Bucket, fmt.Sprintf("jobdesk/%d/1GiB.csv", i))
		start := time.Now()
		res, err := store.Upload(ctx, local, uri, nil)
		ours += time.Since(start)
		if err != nil || res.Skipped || res.Size != size {
			b.Fatalf("Upload: %+v, %v", res, err)
		}
		b.StopTimer()
		start = time.Now()
		srv.RunAWS(b, "s3", "cp", "--only-show-errors", local, fmt.Sprintf("s3://%s/awscli/%d/1GiB.csv", srv.Bucket, i))
		theirs += time.Since(start)
		for _, key := range []string{fmt.Sprintf("jobdesk/%d/1GiB.csv", i), fmt.Sprintf("awscli/%d/1GiB.csv", i)} {
			if err := store.Remove(ctx, s3blob.URI(srv.Bucket, key)); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(theirs.Seconds()/float64(b.N), "awscli-s/op")
	b.ReportMetric(ours.Seconds()/theirs.Seconds(), "ratio")
}
