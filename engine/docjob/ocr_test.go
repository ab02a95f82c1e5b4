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
	"slices"
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

// A scan of several pages is read by OCR a page per core at a time, and progress says which:
// "OCR: page n of N" for every page, the bar moving forward, each page's text in its section.
func TestOCRPagesInParallelWithProgress(t *testing.T) {
	if ok, why := OCRAvailable(); !ok {
		t.Skipf("OCR not available: %s", why)
	}
	if _, err := exec.LookPath("convert"); err != nil {
		t.Skip("ImageMagick (convert) is not installed")
	}
	font := "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
	if _, err := os.Stat(font); err != nil {
		t.Skip("fonts-noto-cjk is not installed")
	}
	dir := t.TempDir()
	words := []string{"Alpha invoice", "Bravo receipt", "Charlie estimate"}
	var objs []string
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>", "")
	var kids []string
	for i, w := range words {
		pngPath := filepath.Join(dir, fmt.Sprintf("p%d.png", i))
		if out, err := exec.Command("convert", "-size", "1200x400", "xc:white", "-font", font, "-pointsize", "60", "-fill", "black",
			"-annotate", "+100+200", w, "-type", "Grayscale", pngPath).CombinedOutput(); err != nil {
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
		var raw bytes.Buffer
		bd := img.Bounds()
		for y := bd.Min.Y; y < bd.Max.Y; y++ {
			for x := bd.Min.X; x < bd.Max.X; x++ {
				raw.WriteByte(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
			}
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(raw.Bytes())
		zw.Close()
		wpt, hpt := float64(bd.Dx())*72/150, float64(bd.Dy())*72/150
		page := len(objs) + 1
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im1 %d 0 R >> >> /Contents %d 0 R >>", wpt, hpt, page+1, page+2),
			fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream",
				bd.Dx(), bd.Dy(), z.Len(), z.Bytes()),
			pdfStream([]byte(fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q", wpt, hpt))))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	var msgs []string
	var pcts []float64
	d, err := convertPDF(t.Context(), rawPDF(objs...), Options{Progress: func(p float64, m string) {
		msgs = append(msgs, m)
		pcts = append(pcts, p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if !slices.Contains(msgs, fmt.Sprintf("OCR: page %d of 3", i)) {
			t.Fatalf("no progress for OCR page %d: %q", i, msgs)
		}
	}
	for i := 1; i < len(pcts); i++ {
		if pcts[i] < pcts[i-1] {
			t.Fatalf("progress went back: %v %q", pcts, msgs)
		}
	}
	if len(d.OCRPages) != 3 {
		t.Fatalf("ocr pages %v:\n%s", d.OCRPages, d.Markdown)
	}
	for i, w := range []string{"Alpha", "Bravo", "Charlie"} {
		sec := strings.Split(d.Markdown, "<!-- Page ")[i+1]
		if !strings.Contains(sec, w) {
			t.Fatalf("page %d lacks %q:\n%s", i+1, w, d.Markdown)
		}
	}
}

// A scanned page whose hidden text layer is in a font nothing decodes (an Identity-H CID font
// without ToUnicode, of no known collection) is read by OCR from its image instead of its
// text layer: the OCR text is the page's, the garbage never is, and the job says so.
func TestOCRReadsPageWithUnreadableTextLayer(t *testing.T) {
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
	pngPath := filepath.Join(t.TempDir(), "scan.png")
	if out, err := exec.Command("convert", "-size", "1200x400", "xc:white", "-font", font, "-pointsize", "60", "-fill", "black",
		"-annotate", "+100+200", "Delta quotation", "-type", "Grayscale", pngPath).CombinedOutput(); err != nil {
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
	var raw bytes.Buffer
	bd := img.Bounds()
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
	content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q BT 3 Tr /F1 20 Tf 50 100 Td <0201034104520563067407850896> Tj ET", w, h)
	data := rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im1 4 0 R >> /Font << /F1 6 0 R >> >> /Contents 5 0 R >>", w, h),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream",
			bd.Dx(), bd.Dy(), z.Len(), z.Bytes()),
		pdfStream([]byte(content)),
		"<< /Type /Font /Subtype /Type0 /BaseFont /GlyphOnlyFont /Encoding /Identity-H /DescendantFonts [7 0 R] >>",
		"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /GlyphOnlyFont /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>")
	d, err := convertPDF(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, en, ja := d.status()
	if st != StatusPartial || !strings.Contains(en, "GlyphOnlyFont") || !strings.Contains(en, "read by OCR instead") || !strings.Contains(ja, "OCR") {
		t.Fatalf("status %s %q %q", st, en, ja)
	}
	if len(d.OCRPages) != 1 || !strings.Contains(d.Markdown, "Delta") || !strings.Contains(d.Markdown, ocrNote) {
		t.Fatalf("ocr pages %v:\n%s", d.OCRPages, d.Markdown)
	}
}
