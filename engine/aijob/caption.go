package aijob

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// FileInput is the input of CAPTION_GENERATION and ELIGIBILITY_EXTRACT: a file, by path or URI
// (read through the Service's Blobs).
type FileInput struct {
	Path        string `json:"path"`
	SourceJobID int64  `json:"source_job_id,omitempty"` // ELIGIBILITY_EXTRACT: the conversion job it came from
}

// CaptionResult is CAPTION_GENERATION's result (seed 002: description and model).
type CaptionResult struct {
	Path        string `json:"path"`
	Description string `json:"description"`
	Model       string `json:"model"`
	Usage       *Usage `json:"usage,omitempty"`
}

// MaxImageBytes is the largest image CAPTION_GENERATION sends (providers refuse larger ones).
const MaxImageBytes = 20 << 20

// ImageMIME returns image/png or image/jpeg from a file's first bytes, or "".
func ImageMIME(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	}
	return ""
}

// CheckImage returns the MIME type of the image at uri (image/png or image/jpeg) from its first
// bytes, or the permanent error CAPTION_GENERATION would fail with: E014 when it cannot be read,
// E003 when it is larger than MaxImageBytes, E004 when it is empty ("the file is empty") or not
// a PNG or JPEG image. It reads only the file's start, so the CLI and the job check it before
// anything waits for a provider.
func (s *Service) CheckImage(ctx context.Context, uri string) (string, error) {
	unreadable := func(err error) error {
		if r := blob.Refused(err); r != nil {
			return r
		}
		return job.Wrap(job.E014, err, "the image "+baseName(uri)+" cannot be read").WithJa("画像ファイルが見つからないか、読み取れません。").Permanent()
	}
	st, err := s.blobs().Stat(ctx, uri)
	if err != nil {
		return "", unreadable(err)
	}
	if st.Size == 0 {
		return "", job.Errorf(job.E004, "%s: the file is empty", baseName(uri)).
			WithJa(baseName(uri) + ": ファイルが空です。").Permanent()
	}
	if st.Size > MaxImageBytes {
		return "", job.Errorf(job.E003, "the image is larger than %d MB", MaxImageBytes>>20).WithJa("画像が大きすぎます（20MBまで）。").Permanent()
	}
	r, err := s.blobs().OpenRange(ctx, uri, 0, 8)
	if err != nil {
		return "", unreadable(err)
	}
	defer r.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(r, head)
	mime := ImageMIME(head[:n])
	if mime == "" {
		return "", notImage(uri)
	}
	return mime, nil
}

// baseName is the last element of a path or URI, for messages.
func baseName(uri string) string {
	return uri[strings.LastIndexAny(uri, `/\`)+1:]
}

func notImage(uri string) *job.Error {
	return job.Errorf(job.E004, "%s is not a PNG or JPEG image", baseName(uri)).
		WithJa(baseName(uri) + " は PNG または JPEG の画像ではありません。").Permanent()
}

// Caption is CAPTION_GENERATION (seed 002): an image becomes a Japanese description, read by a
// vision-capable model. A model that takes no images fails at once with "this model cannot read
// images" (E007).
func (s *Service) Caption(ctx context.Context, input json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in FileInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	if _, err := s.CheckImage(ctx, in.Path); err != nil {
		return nil, err
	}
	img, err := blob.ReadAll(ctx, s.blobs(), in.Path)
	if r := blob.Refused(err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, job.Wrap(job.E014, err, "the image cannot be read").WithJa("画像ファイルを読み取れません。").Permanent()
	}
	mime := ImageMIME(img)
	if mime == "" {
		return nil, notImage(in.Path)
	}
	r.Progress(10, "Reading the image")
	var out struct {
		Description string `json:"description"`
	}
	rep, err := s.generate(ctx, s.Provider, "caption", Request{
		System: "あなたは画像を説明するアシスタントです。画像の内容を自然な日本語で2〜4文で説明し、指定された JSON スキーマで出力してください。",
		Prompt: "この画像を日本語で説明してください。", Image: img, ImageMIME: mime}, CaptionSchema, &out)
	if err != nil {
		return nil, s.deferOffline(err)
	}
	res := CaptionResult{Path: in.Path, Description: out.Description, Model: rep.Model}
	if owner := s.ownerJob(ctx); owner != 0 {
		if u, err := s.JobUsage(ctx, owner); err == nil && u.Calls > 0 {
			res.Usage = &u
		}
	}
	r.Progress(100, "Description written")
	return json.Marshal(res)
}
