package docjob

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"jobdesk/engine/job"
)

// textPNG draws lines of ASCII text in a 7×13 bitmap font, scaled up 4× so OCR reads it.
func textPNG(lines ...string) []byte {
	small := image.NewGray(image.Rect(0, 0, 200, 20*len(lines)+10))
	for i := range small.Pix {
		small.Pix[i] = 0xFF
	}
	d := &font.Drawer{Dst: small, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13}
	for i, l := range lines {
		d.Dot = fixed.P(8, 18+20*i)
		d.DrawString(l)
	}
	const k = 4
	b := small.Bounds()
	big := image.NewGray(image.Rect(0, 0, b.Dx()*k, b.Dy()*k))
	for y := 0; y < b.Dy()*k; y++ {
		for x := 0; x < b.Dx()*k; x++ {
			big.Pix[y*big.Stride+x] = small.Pix[(y/k)*small.Stride+x/k]
		}
	}
	var out bytes.Buffer
	png.Encode(&out, big)
	return out.Bytes()
}

// An image converts to its text read by OCR, marked as OCR output; an image with no text fails
// E004 instead of "succeeding" empty; with OCR turned off the error says what to install and
// where to set up an AI service for a caption.
func TestImageOCR(t *testing.T) {
	img := textPNG("INVOICE 2024", "TOTAL 12500")
	_, err := Convert(context.Background(), img, "scan.png", Options{NoOCR: true})
	if je := job.AsError(err); err == nil || je.Code != job.E004 || !strings.Contains(je.Message, "tesseract") ||
		!strings.Contains(je.MessageJa, "設定 → AI") {
		t.Fatalf("OCR off: %v", err)
	}
	if ok, why := ImageOCRAvailable(); !ok {
		t.Skip("OCR not available: " + why)
	}
	d, err := Convert(context.Background(), img, "scan.png", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != KindImage || d.Method != MethodOCR || !strings.Contains(d.Markdown, ocrNote) ||
		!strings.Contains(d.Markdown, "2024") || !strings.Contains(d.Markdown, "TOTAL 12500") {
		t.Fatalf("%s %s:\n%s", d.Kind, d.Method, d.Markdown)
	}
	if _, err := Convert(context.Background(), textPNG(""), "blank.png", Options{}); codeOf(err) != job.E004 {
		t.Fatalf("blank image: %v", err)
	}
	if _, err := Convert(context.Background(), []byte("\x89PNG\r\n\x1a\n\x00\x00garbage"), "bad.png", Options{}); codeOf(err) != job.E004 {
		t.Fatalf("damaged image: %v", err)
	}
}
