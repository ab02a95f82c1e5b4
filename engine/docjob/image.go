package docjob

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig of GIF images
	_ "image/jpeg"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"jobdesk/engine/job"
)

// ImageOCRAvailable reports whether images can be read by OCR: the tesseract command with the
// Japanese (jpn) language data. reason says what is missing. It asks once per process.
func ImageOCRAvailable() (ok bool, reason string) { return tesseractCheck() }

var tesseractCheck = sync.OnceValues(func() (bool, string) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return false, "the tesseract command is not installed"
	}
	out, err := exec.Command("tesseract", "--list-langs").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\njpn")) {
		return false, "tesseract has no Japanese (jpn) language data"
	}
	return true, ""
})

// maxImagePixels bounds the images given to OCR (width × height), so a small file that
// declares a huge canvas cannot exhaust memory.
const maxImagePixels = 80_000_000

// errNoOCR is the error for an image when OCR is off or not installed: E004 saying what to
// install (a caption needs an AI service: the AI settings).
func errNoOCR(why string) *job.Error {
	return job.Errorf(job.E004, "the image cannot be read as text: OCR is not available (%s); install tesseract-ocr and tesseract-ocr-jpn, or ask for a caption with an AI service set up in Settings → AI", why).
		WithJa("画像の文字を読み取れません。OCR が使えません（tesseract-ocr と tesseract-ocr-jpn をインストールしてください）。画像の説明文が必要なら、設定 → AI で AI サービスを設定してください。").
		WithName(ErrNameUnsupported)
}

// convertImage reads the text of an image (PNG, JPEG, GIF, TIFF) with tesseract (jpn+eng). The
// Markdown says that the text came from OCR, so figures get checked. An image with no
// readable text fails (E004): nothing usable came out.
func convertImage(ctx context.Context, data []byte, name string, opt Options) (*Doc, error) {
	if opt.NoOCR {
		return nil, errNoOCR("turned off for this conversion")
	}
	if ok, why := ImageOCRAvailable(); !ok {
		return nil, errNoOCR(why)
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
		if int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
			return nil, job.Errorf(job.E003, "the image is too large to read: %d × %d pixels (limit %d million pixels)", cfg.Width, cfg.Height, maxImagePixels/1_000_000).
				WithJa(fmt.Sprintf("画像が大きすぎて読み取れません: %d × %d ピクセル（上限 %d00 万ピクセル）", cfg.Width, cfg.Height, maxImagePixels/100_000_000)).WithName(ErrNameTooLarge)
		}
	} else if !bytes.HasPrefix(data, []byte("II*\x00")) && !bytes.HasPrefix(data, []byte("MM\x00*")) {
		return nil, errDamaged(KindImage, reason("the image data cannot be decoded"))
	}
	dir, err := os.MkdirTemp("", "jobdesk-ocr-")
	if err != nil {
		return nil, job.Wrap(job.E009, err, "could not create a temporary folder for OCR").WithJa("OCR 用の一時フォルダーを作成できませんでした。")
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "image")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, job.Wrap(job.E009, err, "could not write the image for OCR").WithJa("OCR 用に画像を書き込めませんでした。")
	}
	cmd := exec.CommandContext(ctx, "tesseract", in, "stdout", "-l", "jpn+eng")
	// One thread: tesseract's OpenMP threads cost ~3× the CPU for the same text on a busy
	// machine, and two conversions already run at once.
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, errDamaged(KindImage, fmt.Errorf("tesseract: %v: %s", err, firstLines(stderr.String(), 3)))
	}
	text := pageText(normalizeOCR(strings.ReplaceAll(string(out), "\f", "")))
	if text == "" {
		return nil, job.Errorf(job.E004, "no text could be read from the image").
			WithJa("画像から文字を読み取れませんでした。").WithName(ErrNameNothing)
	}
	return &Doc{Kind: KindImage, Markdown: ocrNote + "\n\n" + text + "\n", Method: MethodOCR, Pages: 1, OCRPages: []int{1}}, nil
}
