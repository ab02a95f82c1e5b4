package docjob

import (
	"context"
	"fmt"
	"math"
	"slices"
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
// columns, drawn one after the other, keep stream order, and so does a footer drawn in order;
// nor do a page of two lines drawn bottom first, a foot of two blocks side by side, or a last
// line with subscripts.
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
	// A page of two lines, the lower drawn first, has no foot either (nothing stands above one).
	var short layoutDrawing
	short.at(56, 100, 10, "Drawn first, lower")
	short.at(56, 700, 10, "Drawn second, higher")
	// A foot of two blocks side by side, the left one (a name in large type on two lines)
	// drawn first, the right one's first line above it: each block reads whole, in stream
	// order, no line of one read into the other's.
	var sig layoutDrawing
	sig.at(56, 700, 10, "Digital signature here:")
	sig.at(56, 80, 14, "HANAKO")
	sig.at(56, 62, 14, "YAMADA")
	sig.at(200, 90, 8, "Signed by: HANAKO YAMADA")
	sig.at(200, 80, 8, "Date: 2023-06-15 12:05:50")
	sig.at(200, 70, 8, "CEST")
	// A last line with subscripts (set lower, in smaller type) is one line.
	var sub layoutDrawing
	sub.at(56, 700, 9, "8: km <- km xor kA")
	sub.at(56, 590.9, 9, "9: k")
	sub.at(77.6, 587.49, 6, "m")
	sub.at(81.2, 590.9, 9, "<- JWKify(k")
	sub.at(146, 587.49, 6, "m")
	sub.at(149.6, 590.9, 9, ")")
	for _, data := range [][]byte{d.pdf(), short.pdf(), sig.pdf(), sub.pdf()} {
		spans := spansOf(t, data)
		if got, want := spansText(footerOrder(spans)), spansText(spans); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
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

// TestPDFFieldBesideLargeHeading: buttons drawn by their annotations, set to the right of a
// large heading and centred on its letters (their baselines well above the heading's), read
// after the heading on its line, not before it; a field above the heading still reads first.
func TestPDFFieldBesideLargeHeading(t *testing.T) {
	widget := func(x0, y0, x1, y1 float64, ap int) string {
		return fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Btn /Rect [%g %g %g %g] /AP << /N %d 0 R >> >>", x0, y0, x1, y1, ap)
	}
	caption := func(w, h float64, s string) string {
		return formStream(fmt.Sprintf("/BBox [0 0 %g %g] /Resources << /Font << /H1 4 0 R >> >>", w, h), fmt.Sprintf("BT /H1 10.5 Tf 8 %g Td (%s) Tj ET", h/2-3, s))
	}
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R 8 0 R 10 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream([]byte("BT /F1 60 Tf 54 695 Td (Hello) Tj 0 -108 Td (This is a TEST.) Tj ET")),
		widget(243, 767, 515, 816, 7),
		caption(272, 49, "This Message can be toggled."),
		widget(231, 687, 374, 751, 9),
		caption(143, 64, "This Button can be toggled"),
		widget(409, 695, 527, 747, 11),
		caption(118, 52, "Button1"),
	)
	d, err := convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"This Message can be toggled.", "Hello", "This Button can be toggled", "Button1", "This is a TEST."}
	at := -1
	for _, s := range order {
		i := strings.Index(d.Markdown, s)
		if i <= at {
			t.Fatalf("%q out of order:\n%s", s, d.Markdown)
		}
		at = i
	}
}

// TestPDFSpreadRightPageFirst: two pages of figures printed side by side on one sheet, the
// right page drawn whole before the left one (as an imposition program places them): the
// left page reads first, each page whole.
func TestPDFSpreadRightPageFirst(t *testing.T) {
	var d layoutDrawing
	var right, left []string
	d.at(320, 800, 9, "Statement of Changes in Equity")
	right = append(right, "Statement of Changes in Equity")
	for i := range 8 {
		y := 777 - 14*float64(i)
		label, a, b := fmt.Sprintf("Equity item %d", i+1), fmt.Sprintf("%d,%03d", 170+i, 820-i), fmt.Sprintf("(%d)", 2983-i)
		d.at(320, y, 6, label)
		d.at(450, y, 6, a)
		d.at(520, y, 6, b)
		right = append(right, label+" "+a+" "+b)
	}
	d.at(560, 30, 6, "63")
	right = append(right, "63")
	d.at(20, 800, 9, "Statement of Income")
	left = append(left, "Statement of Income")
	for i := range 9 {
		y := 780 - 12*float64(i)
		label, a := fmt.Sprintf("Income item %d", i+1), fmt.Sprintf("%d,%03d", 233-i, 512+i)
		d.at(20, y, 6, label)
		d.at(200, y, 6, a)
		left = append(left, label+" "+a)
	}
	d.at(20, 30, 6, "62")
	left = append(left, "62")
	doc, err := Convert(context.Background(), d.pdf(), "spread.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	// The left page whole, then the right one (its rows may read as a table's).
	at := strings.Index(doc.Markdown, strings.Join(left, "\n"))
	if at < 0 {
		t.Fatalf("the left page does not read whole:\n%s", doc.Markdown)
	}
	for _, s := range right {
		for _, w := range strings.Fields(s) {
			i := strings.Index(doc.Markdown[at:], w)
			if i < 0 {
				t.Fatalf("%q of the right page is not after the left page:\n%s", w, doc.Markdown)
			}
			at += i
		}
	}
}

// TestPDFVerticalBlockHeadingDrawnAfter: a block of vertical writing drawn before the
// horizontal heading that stands above it (a chart's column titles, drawn last) reads after
// its heading; a footer below it, drawn after it too, keeps its place after it.
func TestPDFVerticalBlockHeadingDrawnAfter(t *testing.T) {
	left, right := hexCodes([]uint16{3722, 1952}), hexCodes([]uint16{843, 3284}) // 本語, あ日
	content := "BT /F1 12 Tf 1 0 0 1 300 700 Tm " + left + " Tj 1 0 0 1 320 700 Tm " + right + " Tj ET\n" +
		"BT /F2 14 Tf 72 760 Td (Heading) Tj 0 -20 Td (Subheading) Tj ET\n" +
		"BT /F2 10 Tf 72 100 Td (Footer line) Tj ET\n"
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "Ryumin-Light", encoding: "Identity-V", ordering: "Japan1"}, content))
	if st != StatusReady || !strings.Contains(d.Markdown, "Heading\nSubheading\nあ日\n本語\nFooter line") {
		t.Fatalf("status %s %q:\n%s", st, en, d.Markdown)
	}
}

// TestPDFTextOffThePage: strings set beyond the sheet (a printer's slug above and below the
// page's media box) are left out; the page's own text stays, on a page whose media box is
// inherited from its page tree node and one whose box does not start at the origin, and so
// does text a crop box hides (it is the document's: pdftotext reads it too).
func TestPDFTextOffThePage(t *testing.T) {
	page := func(box, content string) []byte {
		return rawPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 595 842] >>",
			"<< /Type /Page /Parent 2 0 R "+box+" /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
			pdfStream([]byte(content)))
	}
	for _, c := range []struct {
		name, box, content, want, gone string
	}{
		{"slug", "", "BT /F1 8.5 Tf 0 870 Td (2021/07/06 13:43 job 20731115) Tj ET BT /F1 10 Tf 72 700 Td (Statement of Income) Tj 0 -14 Td (Net profit 233,512) Tj ET BT /F1 8.5 Tf 0 -35 Td (Statement of Income slug) Tj ET",
			"Statement of Income\nNet profit 233,512", "job 20731115|slug"},
		{"crop box", "/CropBox [0 0 595 780]", "BT /F1 10 Tf 72 810 Td (Outside the crop box) Tj 0 -100 Td (Inside the crop box) Tj ET BT /F1 10 Tf 72 900 Td (Above the sheet) Tj ET",
			"Outside the crop box\nInside the crop box", "Above the sheet"},
		{"moved box", "/MediaBox [1000 1000 1595 1842]", "BT /F1 10 Tf 1072 1700 Td (On the page) Tj ET BT /F1 10 Tf 72 700 Td (Off the page) Tj ET",
			"On the page", "Off the page"},
	} {
		d, err := convertPDF(context.Background(), page(c.box, c.content), Options{NoOCR: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(d.Markdown, c.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, d.Markdown, c.want)
		}
		for _, g := range strings.Split(c.gone, "|") {
			if strings.Contains(d.Markdown, g) {
				t.Errorf("%s: %q is off the page:\n%s", c.name, g, d.Markdown)
			}
		}
	}
}

// TestPDFFieldAppearanceWithMatrix: a field's appearance whose box lies where the field is on
// the page, moved back to the origin by its own matrix (as Acrobat writes them), reads where
// the field stands, beside its label, not at the page's corner after everything.
func TestPDFFieldAppearanceWithMatrix(t *testing.T) {
	field := func(x, y float64, ap int) string {
		return fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Tx /Rect [%g %g %g %g] /AP << /N %d 0 R >> >>", x, y-4, x+200, y+12, ap)
	}
	value := func(x, y float64, s string) string {
		return formStream(fmt.Sprintf("/BBox [%g %g %g %g] /Matrix [1 0 0 1 %g %g] /Resources << /Font << /H1 4 0 R >> >>", x, y-4, x+200, y+12, -x, -(y-4)),
			fmt.Sprintf("BT /H1 10 Tf %g %g Td (%s) Tj ET", x+2, y, s))
	}
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R 8 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream([]byte("BT /F1 10 Tf 72 760 Td (Application for leave) Tj 0 -40 Td (Name:) Tj 0 -30 Td (Date:) Tj 0 -30 Td (Signature of the applicant) Tj ET")),
		field(150, 720, 7),
		value(150, 720, "Hanako Yamada"),
		field(150, 690, 9),
		value(150, 690, "2026-11-28"),
	)
	d, err := convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "Application for leave\nName: Hanako Yamada\nDate: 2026-11-28\nSignature of the applicant"
	if !strings.Contains(d.Markdown, want) {
		t.Errorf("got\n%s\nwant\n%s", d.Markdown, want)
	}
}

// FuzzReadingOrder: the page orders footerOrder and verticalHeads give hold every string of the
// page once (they move strings, never drop or repeat one), whatever the positions, sizes and
// fonts, and layoutText never panics.
func FuzzReadingOrder(f *testing.F) {
	f.Add([]byte("\x10\x80\x20\x0a\x00\x50\x30\x0a\x01\x20\x02\x08\x02\x00\x00\x00\x00\x60\x01\x0a"))
	f.Add([]byte("\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00\x01\x00\x00\x10\x00\x00\x00\x00"))
	horizontal, vertical := &pageFont{}, &pageFont{vertical: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		var spans []span
		for i := 0; i+4 < len(data) && len(spans) < 200; i += 5 {
			x, y, size, kind, n := float64(data[i])*2.5, float64(data[i+1])*3.3, float64(data[i+2]%40), data[i+3], data[i+4]
			text := fmt.Sprintf("w%d", len(spans))
			switch kind % 5 {
			case 0: // a word break
				spans = append(spans, span{x: math.NaN(), size: size})
				continue
			case 1:
				spans = append(spans, span{x: x, y: y, size: size, text: text, font: vertical, vend: y - float64(n)})
				continue
			case 2:
				text = " "
			case 3:
				y = math.Floor(y/40) * 40 // lines shared by several strings
			}
			spans = append(spans, span{x: x, y: y, end: x + float64(n), size: size, text: text, upright: true, font: horizontal})
		}
		texts := func(ss []span) string {
			var out []string
			for _, s := range ss {
				out = append(out, fmt.Sprintf("%v|%s", math.IsNaN(s.x), s.text))
			}
			slices.Sort(out)
			return strings.Join(out, ",")
		}
		want := texts(spans)
		if got := texts(footerOrder(spans)); got != want {
			t.Fatalf("footerOrder lost or repeated strings:\n%s\n%s", got, want)
		}
		if got := texts(verticalHeads(spans)); got != want {
			t.Fatalf("verticalHeads lost or repeated strings:\n%s\n%s", got, want)
		}
		_ = layoutText(spans)
	})
}
