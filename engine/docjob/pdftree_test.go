package docjob

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// wideTreePDF writes a PDF whose one /Pages node has n kids that all inherit their resources
// (the font) from it and share one content stream: the page tree of the 1.2 MB file,
// where each page's resources used to be found through its /Parent, reading the 40,000-entry
// Kids array again for every page.
func wideTreePDF(n int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, 0, n+4)
	obj := func(s string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), s)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	var kids strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&kids, "%d 0 R ", i+5)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Count %d /Resources << /Font << /F1 3 0 R >> >> /MediaBox [0 0 595 842] /Kids [%s] >>", n, kids.String()))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj(pdfStream([]byte("BT /F1 12 Tf 72 700 Td (Inherited font text) Tj ET")))
	for i := 0; i < n; i++ {
		obj("<</Type/Page/Parent 2 0 R/Contents 4 0 R>>")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// Pages that inherit their font from a /Pages node with thousands of kids read with it: the
// first page and the last one read show the text, and the page limit applies.
func TestPDFWideTreeInheritsResources(t *testing.T) {
	d, err := convertPDF(context.Background(), wideTreePDF(3000), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages != DefaultMaxPages || d.PageLimit != DefaultMaxPages {
		t.Fatalf("pages %d, limit %d", d.Pages, d.PageLimit)
	}
	if n := strings.Count(d.Markdown, "Inherited font text"); n != DefaultMaxPages {
		t.Fatalf("%d pages read the inherited font, want %d", n, DefaultMaxPages)
	}
}

// BenchmarkPDFPageTree40k converts the 40,000-kids page tree (its first DefaultMaxPages pages,
// each inheriting its font): each object is parsed once, so it costs milliseconds, where
// reading resources through every page's /Parent took about 20 s.
func BenchmarkPDFPageTree40k(b *testing.B) {
	data := wideTreePDF(40000)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := convertPDF(context.Background(), data, Options{NoOCR: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// Text drawn by a form XObject (with its own font resources and matrix) and by a filled-in form
// field's appearance is read with the page's own text.
func TestPDFFormXObjectAndFieldText(t *testing.T) {
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> /XObject << /X1 6 0 R >> >> /Contents 5 0 R /Annots [7 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream([]byte("BT /F1 12 Tf 72 760 Td (Page text) Tj ET q 1 0 0 1 72 600 cm /X1 Do Q")),
		formStream("/BBox [0 0 300 50] /Matrix [1 0 0 1 0 0] /Resources << /Font << /G1 4 0 R >> >>", "BT /G1 10 Tf 0 20 Td (Form text) Tj ET"),
		"<< /Type /Annot /Subtype /Widget /FT /Tx /Rect [72 400 372 420] /V (Field value) /AP << /N 8 0 R >> >>",
		formStream("/BBox [0 0 300 20] /Resources << /Font << /H1 4 0 R >> >>", "BT /H1 10 Tf 2 5 Td (Field value) Tj ET"),
	)
	d, err := convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Page text", "Form text", "Field value"} {
		if !strings.Contains(d.Markdown, want) {
			t.Fatalf("%q missing:\n%s", want, d.Markdown)
		}
	}
	if i, j := strings.Index(d.Markdown, "Form text"), strings.Index(d.Markdown, "Field value"); i > j {
		t.Fatalf("the form above the field reads after it:\n%s", d.Markdown)
	}
}

// formStream is a form XObject with the entries dict and the content.
func formStream(dict, content string) string {
	return fmt.Sprintf("<< /Type /XObject /Subtype /Form %s /Length %d >>\nstream\n%s\nendstream", dict, len(content), content)
}

// FuzzFontParsers: ToUnicode maps, CFF programs and TrueType cmap tables from any bytes never
// panic and never run long (the parsers bound what they read).
func FuzzFontParsers(f *testing.F) {
	f.Add([]byte("1 begincodespacerange <0000> <FFFF> endcodespacerange 2 beginbfrange <0001> <0005> <3042> <0010> <0012> [<41> <42> <43>] endbfrange"))
	f.Add(cidCFF("Japan1"))
	f.Add(trueTypeWithCmap(map[rune]uint32{'あ': 3, 'A': 4}))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = cffOrdering(data)
		_ = glyphText(data)
		toks := cmapTokens(data)
		_ = toks
		m := parseToUnicode(data)
		if m != nil {
			m.lookup(2, 0x0001)
		}
	})
}
