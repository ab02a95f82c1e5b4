package docjob

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	unicode16 "unicode/utf16"

	"golang.org/x/text/encoding/japanese"
)

// cidFontPDF is a one-page PDF showing code (the encoded bytes) in a Type0 font whose encoding is
// the predefined CMap cmap and whose descendant is the non-embedded CIDFontType0 font (no
// FontFile, no ToUnicode), as older Japanese report generators write.
func cidFontPDF(font, cmap string, code []byte) []byte {
	return cidFontPage(font, cmap, []byte("BT /F1 12 Tf 72 720 Td <"+hex.EncodeToString(code)+"> Tj ET"))
}

// cidFontPage is cidFontPDF's page with the content stream content.
func cidFontPage(font, cmap string, content []byte) []byte {
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 7 0 R >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /"+font+"-"+cmap+" /Encoding /"+cmap+" /DescendantFonts [5 0 R] >>",
		"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /"+font+" /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> /FontDescriptor 6 0 R /DW 1000 >>",
		"<< /Type /FontDescriptor /FontName /"+font+" /Flags 6 /FontBBox [-123 -257 1001 910] /ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 709 /StemV 69 >>",
		pdfStream(content))
}

func ucs2(s string) []byte {
	var b []byte
	for _, u := range unicode16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

// TestPredefinedCMaps: Japanese text in HeiseiMin-W3 / HeiseiKakuGo-W5 through the predefined
// CMaps UniJIS-UCS2-H, UniJIS-UTF16-H, 90ms-RKSJ-H (and their vertical and other forms) reads
// as the text written, the same as pdftotext reads it through poppler-data.
func TestPredefinedCMaps(t *testing.T) {
	const text = "令和6年度 補助金申請の手引き（第2版）"
	sjis, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	eucjp, _ := japanese.EUCJP.NewEncoder().Bytes([]byte(text))
	cases := []struct {
		font, cmap, want string
		code             []byte
	}{
		{"HeiseiMin-W3", "UniJIS-UCS2-H", text, ucs2(text)},
		{"HeiseiKakuGo-W5", "UniJIS-UCS2-V", text, ucs2(text)},
		{"HeiseiMin-W3", "UniJIS-UTF16-H", text + "𠮷", ucs2(text + "𠮷")},
		{"HeiseiMin-W3", "UniJIS-UTF8-H", text, []byte(text)},
		{"HeiseiMin-W3", "90ms-RKSJ-H", text, sjis},
		{"HeiseiKakuGo-W5", "90ms-RKSJ-V", text, sjis},
		{"HeiseiMin-W3", "90msp-RKSJ-H", text, sjis},
		{"HeiseiMin-W3", "EUC-H", strings.ReplaceAll(text, "6", "６"), []byte(strings.ReplaceAll(string(eucjp), "6", "\xa3\xb6"))},
	}
	_, popplerErr := exec.LookPath("pdftotext")
	for _, tc := range cases {
		data := cidFontPDF(tc.font, tc.cmap, tc.code)
		d, err := Convert(context.Background(), data, tc.cmap+".pdf", Options{NoOCR: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.cmap, err)
		}
		got := strings.TrimSpace(strings.TrimPrefix(d.Markdown, "<!-- Page 1 -->\n\n"))
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmap, got, tc.want)
		}
		if popplerErr == nil && (strings.HasPrefix(tc.cmap, "UniJIS-U") || strings.HasPrefix(tc.cmap, "90ms")) && strings.HasSuffix(tc.cmap, "-H") {
			p := filepath.Join(t.TempDir(), "f.pdf")
			writeFile(t, p, data)
			out, err := exec.Command("pdftotext", "-enc", "UTF-8", p, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			// pdftotext breaks the line at the space (it has no widths for the font): compare the
			// characters.
			if pt := strings.Join(strings.Fields(string(out)), ""); pt != strings.Join(strings.Fields(tc.want), "") {
				t.Errorf("%s: pdftotext reads %q, JobDesk %q", tc.cmap, pt, got)
			}
		}
	}
}

// TestCMapTablesGenerated: the embedded tables are what scripts/gencmaps makes from
// poppler-data (when it is installed), so they can be regenerated and checked.
func TestCMapTablesGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	if _, err := os.Stat("/usr/share/poppler/cMap/Adobe-Japan1/90ms-RKSJ-H"); err != nil {
		t.Skip("poppler-data is not installed")
	}
	out := t.TempDir()
	if b, err := exec.Command("go", "run", "../../scripts/gencmaps", "-src", "/usr/share/poppler", "-out", out).CombinedOutput(); err != nil {
		t.Skipf("go run gencmaps: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(filepath.Join("cmaps", "*"))
	gen, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(files) != len(gen) || len(files) < 3 {
		t.Fatalf("%d committed, %d generated", len(files), len(gen))
	}
	for _, f := range files {
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(out, filepath.Base(f)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the generator's output (go generate ./engine/docjob)", f)
		}
	}
}
