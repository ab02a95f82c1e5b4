package s3blob

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/sync/awserr"
)

// MetaSHA256 is the user-metadata key (x-amz-meta-sha256) under which every object this package
// writes carries the hex SHA-256 of its bytes. S3's own ChecksumSHA256 of a multipart object is
// a checksum of the parts' checksums, not of the bytes, so the metadata is what Upload compares.
const MetaSHA256 = "sha256"

// InputKey is where the dispatcher puts an input file: {prefix}inputs/{sha256[:2]}/{sha256}/{name},
// so the same bytes are stored once whatever they are called, and the key itself says which bytes
// it holds. prefix is a key prefix ("jobdesk/") or a URI prefix ("s3://bucket/jobdesk/"); a
// missing trailing slash is added. fileName loses any folder part.
func InputKey(prefix, sha256, fileName string) string {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	name := path.Base(strings.ReplaceAll(fileName, `\`, "/"))
	sha256 = strings.ToLower(sha256)
	return prefix + "inputs/" + sha256[:min(2, len(sha256))] + "/" + sha256 + "/" + name
}

// Uploaded is what Upload did.
type Uploaded struct {
	blob.Info
	SHA256 string // hex SHA-256 of the bytes
	// Skipped is true when an object with the same SHA-256 was already there: nothing was sent.
	Skipped bool
	// Parts is the number of parts of a multipart upload; 0 for a single PutObject.
	Parts int
	// ResumedParts is how many parts an earlier, interrupted upload had already sent.
	ResumedParts int
	// SentBytes is the bytes sent by this call.
	SentBytes int64
}

// Upload puts the local file at localPath under destURI, for inputs the cloud side will read.
// It reads the file's SHA-256 first and asks HeadObject whether the object already holds those
// bytes; if so nothing is sent. A file up to the part size goes up in one PutObject, a larger one
// as a multipart upload with a SHA-256 per part. A multipart upload that an earlier call left
// unfinished (cancelled, killed, offline) is resumed: the parts S3 lists for it whose size and
// SHA-256 match the file are not sent again. The object appears under destURI only when complete.
//
// progress, when not nil, receives the bytes done (skipped and resumed parts count as done) and
// the file's size; its calls never overlap. Cancelling ctx stops the upload and leaves the
// multipart upload to be resumed.
//
// Upload is meant for content-addressed keys (InputKey), where one key always names the same
// bytes; on any other key a different file's unfinished upload is recognised by its parts and
// replaced.
func (s *Store) Upload(ctx context.Context, localPath, destURI string, progress func(done, total int64)) (Uploaded, error) {
	bucket, key, err := object("upload", destURI)
	if err != nil {
		return Uploaded{}, err
	}
	f, err := os.Open(localPath)
	if err != nil {
		return Uploaded{}, localFileError(localPath, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Uploaded{}, localFileError(localPath, err)
	}
	if st.IsDir() {
		return Uploaded{}, localFileError(localPath, errors.New("is a folder"))
	}
	sum, err := fileSHA256(ctx, f, st.Size())
	if err != nil {
		return Uploaded{}, localFileError(localPath, err)
	}
	up := &upload{store: s, bucket: bucket, key: key, uri: destURI, local: localPath, file: f, size: st.Size(), sha256: sum, progress: progress}
	res := Uploaded{SHA256: hex.EncodeToString(sum)}

	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
	if err == nil && sameContent(head, st.Size(), sum) {
		res.Info = blob.Info{URI: destURI, Size: st.Size(), ModTime: aws.ToTime(head.LastModified)}
		res.Skipped = true
		up.report(st.Size())
		return res, nil
	}
	if err != nil {
		// Without s3:ListBucket S3 answers a missing key 403, not 404. The file is sent then: it
		// would be sent anyway if absent, sending it again over itself is harmless, and a real
		// refusal comes back from the upload itself.
		if _, status := awserr.Code(err); status != http.StatusForbidden {
			if err := fail("stat", destURI, err); !errors.Is(err, blob.ErrNotExist) {
				return res, err
			}
		}
	}
	up.report(0)
	if err := up.run(ctx, true); err != nil {
		return res, err
	}
	if up.resumed > 0 {
		// The resumed upload was created by an earlier call; make sure it was for these bytes
		// (its metadata was fixed then). A different file with the same leading parts is sent
		// again, fresh.
		head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return res, fail("stat", destURI, err)
		}
		if head.Metadata[MetaSHA256] != res.SHA256 {
			up.done, up.sent, up.resumed = 0, 0, 0
			if err := up.run(ctx, false); err != nil {
				return res, err
			}
		}
	}
	res.Info, res.Parts, res.ResumedParts, res.SentBytes = up.info, up.parts, up.resumed, up.sent
	return res, nil
}

// sameContent reports whether the object HeadObject described holds the bytes of sum: by the
// SHA-256 this package stores in its metadata, or by S3's full-object ChecksumSHA256 for an
// object some other client put in one piece.
func sameContent(head *s3.HeadObjectOutput, size int64, sum []byte) bool {
	if aws.ToInt64(head.ContentLength) != size {
		return false
	}
	if v := head.Metadata[MetaSHA256]; v != "" {
		return strings.EqualFold(v, hex.EncodeToString(sum))
	}
	return aws.ToString(head.ChecksumSHA256) == base64.StdEncoding.EncodeToString(sum)
}

// fileSHA256 is the SHA-256 of the first size bytes of f (blob.SHA256): what is uploaded, even
// when the file grows meanwhile; io.EOF when it has fewer.
func fileSHA256(ctx context.Context, f *os.File, size int64) ([]byte, error) {
	sum, n, err := blob.SHA256(ctx, io.NewSectionReader(f, 0, size))
	if err == nil && n < size {
		return nil, io.EOF
	}
	return sum, err
}

func localFileError(p string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return job.Wrap(job.E010, err, fmt.Sprintf("The upload of %s was interrupted.", filepath.Base(p))).
			WithJa(fmt.Sprintf("%s のアップロードが中断されました。", filepath.Base(p))).Transient()
	}
	return job.Wrap(job.E014, err, fmt.Sprintf("The file %s cannot be read for the upload.", p)).
		WithJa(fmt.Sprintf("アップロードするファイル %s を読み取れません。", p)).Permanent()
}

// upload sends one local file to one key: PutObject up to the part size, multipart above.
type upload struct {
	store            *Store
	bucket, key, uri string
	local            string // the file's name, for errors
	file             io.ReaderAt
	size             int64
	sha256           []byte
	progress         func(done, total int64)
	// abandon aborts a multipart upload that fails (Create's writer: nothing resumes it).
	abandon bool

	mu      sync.Mutex
	done    int64 // bytes done, for progress
	sent    int64 // bytes sent by this call
	parts   int
	resumed int
	info    blob.Info
	// storedSHA256 is the SHA-256 metadata of the object once written.
	storedSHA256 string
}

func (u *upload) report(done int64) {
	if u.progress != nil {
		u.progress(done, u.size)
	}
}

func (u *upload) add(n int64, sent bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.done += n
	if sent {
		u.sent += n
	}
	u.report(u.done)
}

func (u *upload) metadata() map[string]string {
	return map[string]string{MetaSHA256: hex.EncodeToString(u.sha256)}
}

// partSize is the part size for a file of size bytes: the Store's, raised to keep within
// S3's 10,000 parts (a whole number of MiB, so every call plans the same parts).
func (s *Store) partSize(size int64) int64 {
	ps := s.opts.PartSize
	if need := (size + maxParts - 1) / maxParts; need > ps {
		ps = (need + MiB - 1) / MiB * MiB
	}
	return ps
}

// run sends the file. resume lets a multipart upload continue one left unfinished under the key.
func (u *upload) run(ctx context.Context, resume bool) error {
	ps := u.store.partSize(u.size)
	if u.size <= ps {
		return u.put(ctx)
	}
	return u.multipart(ctx, ps, resume)
}

func (u *upload) put(ctx context.Context) error {
	sum := base64.StdEncoding.EncodeToString(u.sha256)
	_, err := u.store.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &u.bucket, Key: &u.key,
		Body: io.NewSectionReader(u.file, 0, u.size), ContentLength: aws.Int64(u.size),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256, ChecksumSHA256: &sum,
		Metadata: u.metadata(),
	})
	if err != nil {
		return fail("write", u.uri, err)
	}
	u.add(u.size, true)
	return u.stat(ctx)
}

// stat reads back the object just written.
func (u *upload) stat(ctx context.Context) error {
	out, err := u.store.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &u.bucket, Key: &u.key})
	if err != nil {
		return fail("stat", u.uri, err)
	}
	u.info = blob.Info{URI: u.uri, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}
	u.storedSHA256 = out.Metadata[MetaSHA256]
	return nil
}

// multipart sends the file in parts of ps bytes, resuming an unfinished upload when allowed.
func (u *upload) multipart(ctx context.Context, ps int64, resume bool) (err error) {
	count := int((u.size + ps - 1) / ps)
	u.parts = count
	completed := make([]types.CompletedPart, count)
	var uploadID string
	if resume {
		id, listed, err := u.unfinished(ctx)
		if err != nil {
			return err
		}
		if id != "" {
			matched, err := u.verifyParts(ctx, ps, listed, completed)
			if err != nil {
				return err
			}
			if matched == len(listed) {
				uploadID = id
				u.resumed = matched
			}
			// Some listed part is not of this file: it was another file's upload. Start afresh
			// rather than mix bytes (the stale upload is left for S3's lifecycle rules).
		}
	}
	if uploadID == "" {
		for i := range completed {
			completed[i] = types.CompletedPart{}
		}
		out, err := u.store.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
			Bucket: &u.bucket, Key: &u.key,
			ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
			Metadata:          u.metadata(),
		})
		if err != nil {
			return fail("write", u.uri, err)
		}
		uploadID = aws.ToString(out.UploadId)
		if u.abandon {
			defer func() {
				if err != nil {
					u.store.client.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: &u.bucket, Key: &u.key, UploadId: &uploadID})
				}
			}()
		}
	}
	if u.resumed > 0 {
		var n int64
		for i, c := range completed {
			if c.ETag != nil {
				n += partLen(u.size, ps, i)
			}
		}
		u.add(n, false)
	}
	if err := u.sendParts(ctx, uploadID, ps, completed); err != nil {
		return err
	}
	_, err = u.store.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &u.bucket, Key: &u.key, UploadId: &uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: completed},
	})
	if err != nil {
		return fail("write", u.uri, err)
	}
	return u.stat(ctx)
}

func partLen(size, ps int64, i int) int64 { return min(ps, size-int64(i)*ps) }

// unfinished finds the newest unfinished multipart upload of the key and lists its parts.
func (u *upload) unfinished(ctx context.Context) (uploadID string, parts []types.Part, err error) {
	var newest *types.MultipartUpload
	pages := s3.NewListMultipartUploadsPaginator(u.store.client, &s3.ListMultipartUploadsInput{Bucket: &u.bucket, Prefix: &u.key})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", nil, fail("list uploads", u.uri, err)
		}
		for i, m := range page.Uploads {
			if aws.ToString(m.Key) == u.key && (newest == nil || aws.ToTime(m.Initiated).After(aws.ToTime(newest.Initiated))) {
				newest = &page.Uploads[i]
			}
		}
	}
	if newest == nil {
		return "", nil, nil
	}
	uploadID = aws.ToString(newest.UploadId)
	partPages := s3.NewListPartsPaginator(u.store.client, &s3.ListPartsInput{Bucket: &u.bucket, Key: &u.key, UploadId: &uploadID})
	for partPages.HasMorePages() {
		page, err := partPages.NextPage(ctx)
		if err != nil {
			if code, _ := awserr.Code(err); code == "NoSuchUpload" {
				return "", nil, nil // finished or aborted meanwhile
			}
			return "", nil, fail("list parts", u.uri, err)
		}
		parts = append(parts, page.Parts...)
	}
	return uploadID, parts, nil
}

// verifyParts checks the listed parts against the file — number, size and SHA-256 (or, for a
// part without a checksum, its MD5 ETag) — and records those that match in completed. It returns
// how many matched.
func (u *upload) verifyParts(ctx context.Context, ps int64, listed []types.Part, completed []types.CompletedPart) (int, error) {
	matched := 0
	buf := make([]byte, 1*MiB)
	for _, p := range listed {
		n := int(aws.ToInt32(p.PartNumber))
		if n < 1 || n > len(completed) || aws.ToInt64(p.Size) != partLen(u.size, ps, n-1) {
			continue
		}
		sh, md := sha256.New(), md5.New()
		w := io.Writer(sh)
		if p.ChecksumSHA256 == nil {
			w = md
		}
		if _, err := io.CopyBuffer(w, io.NewSectionReader(u.file, int64(n-1)*ps, aws.ToInt64(p.Size)), buf); err != nil {
			return 0, localFileError(u.local, err)
		}
		if err := ctx.Err(); err != nil {
			return 0, fail("write", u.uri, err)
		}
		ok := false
		if p.ChecksumSHA256 != nil {
			ok = aws.ToString(p.ChecksumSHA256) == base64.StdEncoding.EncodeToString(sh.Sum(nil))
		} else {
			ok = strings.Trim(aws.ToString(p.ETag), `"`) == hex.EncodeToString(md.Sum(nil))
		}
		if ok {
			completed[n-1] = types.CompletedPart{PartNumber: p.PartNumber, ETag: p.ETag, ChecksumSHA256: p.ChecksumSHA256}
			matched++
		}
	}
	return matched, nil
}

// sendParts uploads the parts completed does not hold yet, Concurrency at a time, and fills
// them in. The first failure stops the others.
func (u *upload) sendParts(ctx context.Context, uploadID string, ps int64, completed []types.CompletedPart) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	todo := make(chan int)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for range u.store.opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				n := partLen(u.size, ps, i)
				out, err := u.store.client.UploadPart(ctx, &s3.UploadPartInput{
					Bucket: &u.bucket, Key: &u.key, UploadId: &uploadID,
					PartNumber: aws.Int32(int32(i + 1)),
					Body:       io.NewSectionReader(u.file, int64(i)*ps, n), ContentLength: aws.Int64(n),
					ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
				})
				if err != nil {
					errOnce.Do(func() { firstErr = fail("write", u.uri, err); cancel() })
					continue
				}
				completed[i] = types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag, ChecksumSHA256: out.ChecksumSHA256}
				u.add(n, true)
			}
		}()
	}
feed:
	for i := range completed {
		if completed[i].ETag != nil {
			continue
		}
		select {
		case todo <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(todo)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fail("write", u.uri, err)
	}
	return nil
}
