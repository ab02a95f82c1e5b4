package docjob

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"
)

// objStreamPDF writes a PDF whose objects are direct (object i+1 is direct[i], object 1 the
// catalog) followed by one compressed object stream holding packed (objects len(direct)+1 …),
// with a cross-reference stream, as PDF 1.5 writers save files.
func objStreamPDF(direct, packed []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(direct))
	for i, o := range direct {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	first := len(direct) + 1
	var head, body bytes.Buffer
	for i, o := range packed {
		fmt.Fprintf(&head, "%d %d ", first+i, body.Len())
		body.WriteString(o + "\n")
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(head.Bytes())
	w.Write(body.Bytes())
	w.Close()
	stm := first + len(packed)
	stmOff := b.Len()
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\nstream\n", stm, len(packed), head.Len(), z.Len())
	b.Write(z.Bytes())
	b.WriteString("\nendstream\nendobj\n")
	// the cross-reference stream: type (1 byte), offset or stream (4), generation or index (2)
	xref := stm + 1
	xrefOff := b.Len()
	var rows bytes.Buffer
	row := func(typ byte, a uint32, c uint16) {
		rows.WriteByte(typ)
		binary.Write(&rows, binary.BigEndian, a)
		binary.Write(&rows, binary.BigEndian, c)
	}
	row(0, 0, 65535)
	for _, o := range offs {
		row(1, uint32(o), 0)
	}
	for i := range packed {
		row(2, uint32(stm), uint16(i))
	}
	row(1, uint32(stmOff), 0)
	row(1, uint32(xrefOff), 0)
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", xref, xref+1, rows.Len())
	b.Write(rows.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefOff)
	return b.Bytes()
}

// linkPage is a page that shows heading and carries links link annotations, kept in one
// compressed object stream (objects 6 …).
func linkPage(heading string, links int) []byte {
	refs := make([]string, links)
	packed := make([]string, links)
	for i := range links {
		refs[i] = fmt.Sprintf("%d 0 R", 6+i)
		packed[i] = fmt.Sprintf("<< /Type /Annot /Subtype /Link /Rect [%d 10 %d 20] /Border [0 0 0] /A << /S /URI /URI (https://example.com/%d) >> >>", i%500, i%500+8, i)
	}
	return objStreamPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [" + strings.Join(refs, " ") + "] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream([]byte("BT /F1 14 Tf 72 760 Td (" + heading + ") Tj ET")),
	}, packed)
}

// TestPDFManyAnnotationsInObjectStream: a page of 20,000 link annotations kept in one compressed
// object stream (the PDF library reads each from the stream's start: the whole file took about
// 30 s) ends within the annotation budget; the page's text is kept and the document is partial,
// naming the page, because its annotations were not all read. A page of a few links in the same
// kind of file is read whole and ready.
func TestPDFManyAnnotationsInObjectStream(t *testing.T) {
	d, err := convertPDF(context.Background(), linkPage("Quarterly report", 20000), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	st, why, _ := d.status()
	if st != StatusPartial || len(d.TruncatedPages) != 1 || d.TruncatedPages[0] != 1 || !strings.Contains(why, "form fields or notes") ||
		!strings.Contains(d.Markdown, "Quarterly report") {
		t.Fatalf("%s %q %v\n%s", st, why, d.TruncatedPages, d.Markdown)
	}
	d, err = convertPDF(context.Background(), linkPage("Quarterly report", 40), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, why, _ := d.status(); st != StatusReady || len(d.TruncatedPages) != 0 || !strings.Contains(d.Markdown, "Quarterly report") {
		t.Fatalf("%s %q\n%s", st, why, d.Markdown)
	}
}

// TestPDFAnnotationBudgetSpent: once a document's annotations have taken annotBudget, the
// form fields not yet read are left out and their page is partial, in both languages, with the
// page's own text kept: never a ready document missing a field's value.
func TestPDFAnnotationBudgetSpent(t *testing.T) {
	field := func(ap int) string {
		return fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Tx /Rect [300 700 500 720] /AP << /N %d 0 R >> >>", ap)
	}
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream([]byte("BT /F1 12 Tf 72 705 Td (Name:) Tj ET")),
		field(7),
		formStream("/BBox [0 0 200 20] /Resources << /Font << /F1 4 0 R >> >>", "BT /F1 12 Tf 2 5 Td (Hanako Yamada) Tj ET"),
	)
	d, err := convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, _, _ := d.status(); st != StatusReady || !strings.Contains(d.Markdown, "Hanako Yamada") {
		t.Fatalf("with time to read it: %s\n%s", st, d.Markdown)
	}
	defer func(b time.Duration) { annotBudget = b }(annotBudget)
	annotBudget = 0
	d, err = convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	st, why, whyJa := d.status()
	if st != StatusPartial || strings.Contains(d.Markdown, "Hanako Yamada") || !strings.Contains(d.Markdown, "Name:") ||
		!strings.Contains(why, "form fields or notes") || !strings.Contains(whyJa, "注釈") {
		t.Fatalf("%s %q %q\n%s", st, why, whyJa, d.Markdown)
	}
}

// TestPDFPageMarkers: each page of a PDF begins with the marker line "<!-- Page N -->", not a
// heading, so a sentence that runs on across two pages is not cut by a section; a line of the
// page's own text that reads like a marker is escaped and begins no page.
func TestPDFPageMarkers(t *testing.T) {
	data := makePDF(t,
		[]byte("BT /F1 12 Tf 72 720 Td (The committee met on Friday and agreed that the) Tj ET"),
		[]byte("BT /F1 12 Tf 72 720 Td (budget stays as it is.) Tj 0 -20 Td (<!-- Page 9 -->) Tj ET"))
	d, err := convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Page 1 -->\n\nThe committee met on Friday and agreed that the\n\n<!-- Page 2 -->\n\nbudget stays as it is.\n&lt;!-- Page 9 -->"
	if strings.TrimSpace(d.Markdown) != want || strings.Contains(d.Markdown, "#") {
		t.Fatalf("got\n%s\nwant\n%s", d.Markdown, want)
	}
}

// TestDemotedPageMarkers: an attachment's page markers are pushed down with its headings, so a
// mail's sections are not its attachments' pages; markers in code blocks stay as written.
func TestDemotedPageMarkers(t *testing.T) {
	md := "<!-- Page 1 -->\n\n## Budget\n\n```\n<!-- Page 9 -->\n```\n<!-- Page 2 -->\n\ntext"
	want := "<!-- attachment page 1 -->\n\n##### Budget\n\n```\n<!-- Page 9 -->\n```\n<!-- attachment page 2 -->\n\ntext"
	if got := demoteHeadings(md, 3); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
