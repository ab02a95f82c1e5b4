package docjob

import (
	"context"
	"strings"
	"testing"
)

// TestPDFFooterInPageOrder: a producer that draws a note in one-point invisible type at the
// very bottom of the page before the page number above it: the foot reads top to bottom, the
// invisible note kept (as an OCR'd scan's text layer is), the page above it in stream order.
func TestPDFFooterInPageOrder(t *testing.T) {
	var d layoutDrawing
	body := []string{"Font Types", "Core font: abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "CID font: abcdefghijklmnopqrstuvwxyz"}
	for i, s := range body {
		d.at(45, 760-14*float64(i), 10, s)
	}
	d.show(3, 1.23, 1, "3 Tr", "Powered by the report writer")
	d.at(520, 20.31, 8, "page 1 / 1")
	doc, err := Convert(context.Background(), d.pdf(), "foot.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(body, "\n") + "\npage 1 / 1\nPowered by the report writer"
	if !strings.Contains(doc.Markdown, want) {
		t.Errorf("got\n%s\nwant\n%s", doc.Markdown, want)
	}
}

// TestPDFFooterOrderLeavesColumns: a page drawn top to bottom whose heading is its first
// string has no foot to reorder (the page below its heading is too long for one): its two
// columns, drawn one after the other, keep stream order, and so does a footer drawn in order.
func TestPDFFooterOrderLeavesColumns(t *testing.T) {
	var d layoutDrawing
	d.at(56, 800, 14, "Heading of the page")
	for i := range 6 {
		d.at(56, 760-14*float64(i), 10, "Left column line "+string(rune('a'+i)))
	}
	for i := range 6 {
		d.at(300, 760-14*float64(i), 10, "Right line "+string(rune('a'+i)))
	}
	d.at(56, 40, 8, "Footer note")
	d.at(500, 30, 8, "7")
	spans := spansOf(t, d.pdf())
	if got, want := spansText(footerOrder(spans)), spansText(spans); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// spansOf is the strings of the first page of data.
func spansOf(t *testing.T, data []byte) []span {
	t.Helper()
	rd, _, err := openPDF(data)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := pageSpans(context.Background(), rd.Page(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	return spans
}
