package docjob

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNormalizeOCR(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`御請求金額 \128,700 (税込)`, "御請求金額 ￥128,700（税込）"},
		{`\128.700 (税込)`, "￥128,700（税込）"},
		{`合計 \ 1.234.567`, "合計 ￥1,234,567"},
		{`¥5,000`, "￥5,000"},
		{`\980`, "￥980"},
		{`単価 \12.5`, "単価 ￥12.5"},     // not thousands: left as read
		{`C:\Users\a`, `C:\Users\a`}, // no digit after the backslash
		{`申 請 書 の 提 出`, "申請書の提出"},
		{`Page 2 of 3 (draft)`, "Page 2 of 3 (draft)"},
		{`申請書 (様式1)`, "申請書 (様式1)"},
	} {
		if got := normalizeOCR(tc.in); got != tc.want {
			t.Errorf("normalizeOCR(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// imagePDF wraps a picture as a one-page PDF at 150 dpi, the way a scanner writes one.
func imagePDF(t testing.TB, img image.Image) []byte {
	t.Helper()
	bd := img.Bounds()
	var raw bytes.Buffer
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			raw.WriteByte(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
		}
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw.Bytes())
	zw.Close()
	w, h := float64(bd.Dx())*72/150, float64(bd.Dy())*72/150
	content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q", w, h)
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>", w, h),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream",
			bd.Dx(), bd.Dy(), z.Len(), z.Bytes()),
		pdfStream([]byte(content)))
}

// TestOCRInvoiceAmount: a scanned invoice (text drawn into an image by ImageMagick, wrapped in a
// PDF with no text layer) is read by OCR through the job: the amount comes out as printed,
// ￥128,700（税込）, the page carries the OCR note and the result lists it in ocr_pages.
func TestOCRInvoiceAmount(t *testing.T) {
	if ok, why := OCRAvailable(); !ok {
		t.Skipf("OCR not available: %s", why)
	}
	font := "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
	if _, err := exec.LookPath("convert"); err != nil {
		t.Skip("ImageMagick (convert) is not installed")
	}
	if _, err := os.Stat(font); err != nil {
		t.Skip("fonts-noto-cjk is not installed")
	}
	dir := t.TempDir()
	pngPath := filepath.Join(dir, "scan.png")
	out, err := exec.Command("convert", "-size", "1654x600", "xc:white", "-font", font, "-pointsize", "40", "-fill", "black",
		"-annotate", "+120+200", "御請求金額　￥128,700（税込）", "-annotate", "+120+300", "振込期限　令和6年4月30日",
		"-type", "Grayscale", pngPath).CombinedOutput()
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, out)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pdfPath := filepath.Join(dir, "invoice.pdf")
	writeFile(t, pdfPath, imagePDF(t, img))
	c, _ := newConverter(t)
	res, err := run(t, c, t.TempDir(), Input{Path: pdfPath})
	if err != nil {
		t.Fatalf("%v (%+v)", err, res)
	}
	md, _ := os.ReadFile(res.OutputPath)
	if len(res.OCRPages) != 1 || res.OCRPages[0] != 1 || res.Method != MethodOCR {
		t.Fatalf("ocr_pages %v method %s", res.OCRPages, res.Method)
	}
	if !strings.Contains(string(md), "￥128,700（税込）") || !strings.Contains(string(md), ocrNote) {
		t.Fatalf("markdown:\n%s", md)
	}
}
