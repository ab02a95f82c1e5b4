package aijob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // image.DecodeConfig reads JPEG headers
	_ "image/png"  // and PNG headers
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

// MaxImageSide is the most pixels an image CAPTION_GENERATION sends may have on each side (the
// limit of Amazon Bedrock's Claude models; OpenAI-compatible servers scale larger ones down
// after decoding them whole). The file size says nothing of it: a 30000 × 30000 PNG of one
// colour takes under 1 MB and 3.6 GB once decoded, so the size is read from the image's header
// before anything is sent.
const MaxImageSide = 8000

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
// E003 when it is larger than MaxImageBytes or wider or taller than MaxImageSide pixels, E004
// when it is empty ("the file is empty"), not a PNG or JPEG image, or its header is damaged. It
// reads only the file's start (up to the header giving the image's size), so the CLI and the
// job check it before anything waits for a provider.
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
	r, err := s.blobs().Open(ctx, uri)
	if err != nil {
		return "", unreadable(err)
	}
	defer r.Close()
	br := bufio.NewReader(io.LimitReader(r, MaxImageBytes))
	head, _ := br.Peek(8)
	mime := ImageMIME(head)
	if mime == "" {
		return "", notImage(uri)
	}
	cfg, _, err := image.DecodeConfig(br)
	if err != nil {
		return "", job.Wrap(job.E004, err, fmt.Sprintf("%s is damaged: its image header cannot be read", baseName(uri))).
			WithJa(baseName(uri) + " は壊れています（画像のヘッダーを読み取れません）。").Permanent()
	}
	if cfg.Width > MaxImageSide || cfg.Height > MaxImageSide {
		return "", job.Errorf(job.E003, "the image %s is %d × %d pixels; JobDesk sends images of at most %d pixels a side. Make it smaller and submit it again",
			baseName(uri), cfg.Width, cfg.Height, MaxImageSide).
			WithJa(fmt.Sprintf("画像 %s は %d × %d ピクセルで大きすぎます（一辺 %d ピクセルまで）。縮小してからもう一度渡してください。",
				baseName(uri), cfg.Width, cfg.Height, MaxImageSide)).Permanent()
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
