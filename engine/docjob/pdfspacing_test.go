package docjob

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// courierPDF is a one-page PDF of content with Courier as F1 (its widths given: 600, 0.6 em a
// character).
func courierPDF(content string) []byte {
	widths := strings.TrimSpace(strings.Repeat("600 ", 95))
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /FirstChar 32 /LastChar 126 /Widths ["+widths+"] >>",
		pdfStream([]byte(content)))
}

// firstPageSpans returns the spans page 1 of data shows, without TJ's word breaks.
func firstPageSpans(t *testing.T, data []byte) []span {
	t.Helper()
	var out []span
	for _, s := range spansOf(t, data) {
		if !math.IsNaN(s.x) {
			out = append(out, s)
		}
	}
	return out
}

type placed struct {
	text      string
	x, end, y float64
}

func checkPlaced(t *testing.T, name string, got []span, want []placed) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d spans, want %d: %+v", name, len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.text != w.text || math.Abs(g.x-w.x) > 0.01 || math.Abs(g.end-w.end) > 0.01 || math.Abs(g.y-w.y) > 0.01 {
			t.Errorf("%s: span %d is %q at x %.2f..%.2f y %.2f, want %q at %.2f..%.2f y %.2f",
				name, i, g.text, g.x, g.end, g.y, w.text, w.x, w.end, w.y)
		}
	}
}

// TestGlyphAdvance: strings advance as PDF 32000 §9.4.4 says, tx = ((w0 − Tj/1000) × Tfs + Tc
// + Tw) × Th: the character spacing on every glyph, the word spacing on single-byte code 32
// only, horizontal scaling on all of it and on TJ's numbers; " sets Tw and Tc; q and Q save and
// restore them. Courier at 10 points: a glyph is 6 points wide.
func TestGlyphAdvance(t *testing.T) {
	content := `BT /F1 10 Tf 1 0 0 1 100 700 Tm 14 TL
(AB) Tj
2 Tc (CD) Tj
0 Tc 3 Tw (E F) Tj
50 Tz (GH) Tj
100 Tz 0 Tw [(I) -500 (J)] TJ
[(K) 100 (L)] TJ
50 Tz 1 Tc [(M) -200 (N)] TJ
100 Tz 4 1 (O P) "
ET
q 5 Tc 9 Tw 2 0 0 1 0 0 cm Q
BT 1 0 0 1 100 600 Tm (Q R) Tj (S) Tj ET
`
	checkPlaced(t, "Courier", firstPageSpans(t, courierPDF(content)), []placed{
		{"AB", 100, 112, 700},
		{"CD", 112, 128, 700},  // (6+2)×2
		{"E F", 128, 149, 700}, // 6×3 + 3 on the space
		{"GH", 149, 155, 700},  // 12 × 0.5
		{"I", 155, 161, 700},
		{"J", 166, 172, 700},   // moved 500/1000 em
		{"KL", 172, 183, 700},  // 12 − 100/1000 em
		{"MN", 183, 191, 700},  // ((6+1)×2 + 200/1000 em) × 0.5
		{"O P", 100, 125, 686}, // " : Tw 4, Tc 1 on the next line: 3×7 + 4
		{"Q R", 100, 125, 600}, // Q restored Tc 1, Tw 4 (not 5 and 9) and the matrix
		{"S", 125, 132, 600},
	})
}

// TestWordSpacingSingleByteOnly: Tw widens code 32 of one byte (90ms-RKSJ-H), not the two-byte
// code 0x0020 of UniJIS-UCS2-H. (No widths in these fonts: ASCII half an em, 5 points at 10.)
func TestWordSpacingSingleByteOnly(t *testing.T) {
	content := "BT /F1 10 Tf 5 Tw 1 0 0 1 100 700 Tm %s Tj ET"
	ucs := cidFontPage("HeiseiMin-W3", "UniJIS-UCS2-H", []byte(fmt.Sprintf(content, "<004100200042>")))
	checkPlaced(t, "UniJIS-UCS2-H", firstPageSpans(t, ucs), []placed{{"A B", 100, 115, 700}})
	sjis := cidFontPage("HeiseiMin-W3", "90ms-RKSJ-H", []byte(fmt.Sprintf(content, "(A B)")))
	checkPlaced(t, "90ms-RKSJ-H", firstPageSpans(t, sjis), []placed{{"A B", 100, 120, 700}})
}

// TestSplitWideSpaces: a string with wide runs of spaces (two or more, at least an em) is shown
// as one span per stretch of text, each placed where its glyphs are (Tc, Tw, Tz and TJ's
// numbers counted) and boxed without the spaces around it; its text keeps them. Narrow runs
// (here two spaces, 9.2 points at 10) stay inside a span. Courier at 10 points, Tz 80, Tc
// 0.25, Tw −0.5: a letter advances 5 points, a space 4.6.
func TestSplitWideSpaces(t *testing.T) {
	content := `BT /F1 10 Tf 80 Tz 0.25 Tc -0.5 Tw 14 TL 1 0 0 1 100 700 Tm
(   Ab  cd    Ef  ) Tj (G) Tj T*
[(Ab) -100 (     Cd)] TJ
ET`
	checkPlaced(t, "split", firstPageSpans(t, courierPDF(content)), []placed{
		{"   Ab  cd    ", 113.8, 143, 700},
		{"Ef  ", 161.4, 171.4, 700},
		{"G", 180.6, 185.6, 700},
		{"Ab     ", 100, 110, 686},
		{"Cd", 133.8, 143.8, 686},
	})
}

// spacingCorpus are the reading-order corpus's pages whose layout needs the text state: two
// columns drawn one string per row with spaces across the gutter (in English and Japanese),
// and text whose gaps come from character spacing, word spacing and horizontal scaling.
func spacingCorpus() []layoutCase {
	var cases []layoutCase
	at := func(lines []string, i int) string {
		if i < len(lines) {
			return lines[i]
		}
		return ""
	}

	// Two columns, each row one string: the left column's line, spaces up to the right
	// column (four Courier cells of gutter at least), the right column's line.
	var en layoutDrawing
	l, r := columnLines(enLeft, 228, 10), columnLines(enRight, 228, 10)
	for i := range max(len(l), len(r)) {
		row := at(l, i)
		if right := at(r, i); right != "" {
			row += strings.Repeat(" ", 38+4-len(row)) + right
		}
		if strings.TrimSpace(row) != "" {
			en.at(56, 780-13*float64(i), 10, row)
		}
	}
	cases = append(cases, layoutCase{"onestring-en", en.pdf(), flatten(enLeft, enRight), true})

	// The same in Japanese: full-width characters (10 points) and half-width spaces (5) up to
	// the right column, 245 points from the left one.
	var ja layoutDrawing
	l, r = columnLines(jaLeft, 230, 10), columnLines(jaRight, 230, 10)
	for i := range max(len(l), len(r)) {
		row := at(l, i)
		if right := at(r, i); right != "" {
			row += strings.Repeat(" ", int(245-drawnWidth(row, 10))/5) + right
		}
		if strings.TrimSpace(row) != "" {
			ja.at(56, 780-13*float64(i), 10, row)
		}
	}
	cases = append(cases, layoutCase{"onestring-ja", ja.pdf(), flatten(jaLeft, jaRight), true})

	// Two columns drawn line by line in condensed type: 80% horizontal scaling and −0.3 points
	// of character spacing make a 10-point Courier cell 4.56 points wide (as 7.6-point Courier).
	var cd layoutDrawing
	const condensed = "80 Tz -0.3 Tc"
	l, r = columnLines(enLeft, 230, 7.6), columnLines(enRight, 230, 7.6)
	for i := range max(len(l), len(r)) {
		y := 780 - 13*float64(i)
		if s := at(l, i); s != "" {
			cd.show(56, y, 10, condensed, s)
		}
		if s := at(r, i); s != "" {
			cd.show(56+230+22, y, 10, condensed, s)
		}
	}
	cases = append(cases, layoutCase{"condensed-twocol", cd.pdf(), flatten(enLeft, enRight), true})

	// Letter-spaced text (1.5 points of character spacing: a 7.5-point cell) drawn five
	// characters at a time, each piece placed where the one before it ends, cutting words.
	var ls layoutDrawing
	for i, line := range columnLines(enLeft, 460, 12.5) {
		for off := 0; off < len(line); off += 5 {
			piece := line[off:min(off+5, len(line))]
			if strings.TrimSpace(piece) != "" {
				ls.show(56+7.5*float64(off), 780-14*float64(i), 10, "1.5 Tc", piece)
			}
		}
	}
	cases = append(cases, layoutCase{"letterspaced", ls.pdf(), flatten(enLeft), false})

	// Tight text (−1 point of character spacing: a 5-point cell, 5-point spaces) placed word
	// by word, with no space characters.
	var tg layoutDrawing
	for i, line := range columnLines(enRight, 460, 25.0/3) {
		x := 56.0
		for _, w := range strings.Fields(line) {
			tg.show(x, 780-14*float64(i), 10, "-1 Tc", w)
			x += 5 * float64(len(w)+1)
		}
	}
	cases = append(cases, layoutCase{"tight", tg.pdf(), flatten(enRight), false})

	// Justified text: each line set to 300 points by word spacing (negative where a line is
	// longer), drawn in two halves, the first by " (which sets Tw), the second placed after it.
	var js layoutDrawing
	js.c.WriteString("BT /F1 10 Tf 13 TL 1 0 0 1 56 793 Tm\n")
	for _, para := range enRight {
		lines := wrapText(strings.Join(para, " "), 318, 10)
		for i, line := range lines {
			words := strings.Fields(line)
			tw := 0.0
			if i+1 < len(lines) && len(words) > 1 {
				tw = (300 - drawnWidth(line, 10)) / float64(len(words)-1)
			}
			half := len(words) / 2
			first, second := strings.Join(words[:half], " "), strings.Join(words[half:], " ")
			if first == "" {
				fmt.Fprintf(&js.c, "%.3f 0 () \"\n", tw)
			} else {
				fmt.Fprintf(&js.c, "%.3f 0 %s \"\n", tw, pdfString(first))
			}
			dx := drawnWidth(first+" ", 10) + tw*float64(half)
			if first == "" {
				dx = 0
			}
			fmt.Fprintf(&js.c, "%.3f 0 Td %s Tj %.3f 0 Td\n", dx, pdfString(second), -dx)
		}
		js.c.WriteString("T*\n")
	}
	js.c.WriteString("ET\n")
	cases = append(cases, layoutCase{"justified", js.pdf(), flatten(enRight), false})

	cases = append(cases, layoutCase{"doublespaced", oneStringPage(doubleSpaced), doubleSpaced, false})
	padded := paddedTable()
	units := []string{padded[0]}
	for _, row := range paddedCells {
		units = append(units, strings.Join(row, " "))
	}
	cases = append(cases, layoutCase{"padded-table", oneStringPage(padded), append(units, padded[len(padded)-1]), false})
	return cases
}

// oneStringPage draws each line as one string in Courier at 10 points, 14 points apart.
func oneStringPage(lines []string) []byte {
	var d layoutDrawing
	for i, l := range lines {
		d.at(56, 780-14*float64(i), 10, l)
	}
	return d.pdf()
}

// doubleSpaced is running text typed with two spaces after each sentence (1.2 em in Courier:
// wide runs) and a numbered list with two spaces after the numbers, lined up.
var doubleSpaced = []string{
	"Read these notes before you apply.  Each shop may send one",
	"application a year.  Keep a copy of everything you send.",
	"The office may ask for more documents.  Answer within ten days.",
	"1.  The application form, signed by the owner.",
	"2.  Two quotes from different suppliers.",
	"3.  A floor plan of the shop.",
	"4.  Photographs of the shop front as it is now.",
}

// paddedCells is a table whose rows paddedTable draws one string each, the cells padded with
// spaces (the amounts aligned right).
var paddedCells = [][]string{
	{"Category", "Limit", "Rate", "Deadline"},
	{"Small business", "500,000 yen", "2/3", "30 January"},
	{"Medium company", "2,000,000 yen", "1/2", "27 February"},
	{"Startup", "300,000 yen", "3/4", "31 March"},
}

func paddedTable() []string {
	lines := []string{"Table 1: limits and rates by category"}
	for _, c := range paddedCells {
		lines = append(lines, fmt.Sprintf("%-18s%13s    %-6s%s", c[0], c[1], c[2], c[3]))
	}
	return append(lines, "Amounts include tax.")
}

// TestSpacePaddedRows: wide runs of spaces that part no columns change nothing: running text
// typed with two spaces after its sentences and a list with two spaces after its numbers read
// exactly as written, spaces and all. A table drawn one string per row, its cells padded with
// spaces, reads as a table between its caption and its note.
func TestSpacePaddedRows(t *testing.T) {
	d, err := Convert(context.Background(), oneStringPage(doubleSpaced), "prose.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- Page 1 -->\n\n" + strings.Join(doubleSpaced, "\n") + "\n\n"; d.Markdown != want {
		t.Errorf("double spaces: got\n%s\nwant\n%s", d.Markdown, want)
	}
	d, err = Convert(context.Background(), oneStringPage(paddedTable()), "table.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Page 1 -->\n\nTable 1: limits and rates by category\n\n" +
		"| Category | Limit | Rate | Deadline |\n| --- | --- | --- | --- |\n" +
		"| Small business | 500,000 yen | 2/3 | 30 January |\n" +
		"| Medium company | 2,000,000 yen | 1/2 | 27 February |\n" +
		"| Startup | 300,000 yen | 3/4 | 31 March |\n\n" +
		"Amounts include tax.\n\n"
	if d.Markdown != want {
		t.Errorf("padded table: got\n%s\nwant\n%s", d.Markdown, want)
	}
}

// TestSplitStringOneLine: a string split at a wide run of spaces still starts its line where
// it starts: a subscript drawn afterwards under its first stretch continues the line rather
// than starting a new one.
func TestSplitStringOneLine(t *testing.T) {
	content := `BT /F1 10 Tf 1 0 0 1 100 700 Tm (A      B) Tj ET
BT /F1 7 Tf 1 0 0 1 107 697 Tm (1) Tj ET`
	spans := firstPageSpans(t, courierPDF(content))
	if len(spans) != 3 || !spans[1].rest {
		t.Fatalf("not split: %+v", spans)
	}
	if got := spansText(spans); got != "A      B1" {
		t.Errorf("got %q", got)
	}
}

// Words of a tightly set line (LaTeX: the spaces are TJ moves of a quarter em or less, the
// kerning between letters a few hundredths) keep their spaces, judged against the font's own
// space width; kerning inside a word and moves between Japanese characters add none.
func TestTightLineSpaces(t *testing.T) {
	latex := makePDF(t, []byte(`BT /F1 10 Tf 72 700 Td
[(Large)-248(language)-247(mo)-28(dels)-248(\(LLMs\))-249(are)-150(b)-28(ecoming)]TJ ET`))
	d, err := convertPDF(t.Context(), latex, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "Large language models (LLMs) are becoming") {
		t.Fatalf("tight line:\n%s", d.Markdown)
	}
	// Courier's space is 0.6 em: a move of 0.2 em is no word gap, 0.35 em is.
	d, err = convertPDF(t.Context(), courierPDF(`BT /F1 10 Tf 72 700 Td [(ab)-200(cd)-350(ef)]TJ ET`), Options{NoOCR: true})
	if err != nil || !strings.Contains(d.Markdown, "abcd ef") {
		t.Fatalf("%v:\n%s", err, d.Markdown)
	}
	ja := cjkPDF(cidFont{base: "Ryumin-Light", encoding: "Identity-H", ordering: "Japan1"},
		"BT /F1 10 Tf 72 700 Td ["+hexCodes([]uint16{843, 3284})+" -150 "+hexCodes([]uint16{3722, 1952})+"] TJ ET")
	d, err = convertPDF(t.Context(), ja, Options{NoOCR: true})
	if err != nil || !strings.Contains(d.Markdown, "あ日本語") {
		t.Fatalf("%v:\n%s", err, d.Markdown)
	}
}

// Words placed one by one are weighed against the font's own space too: in a font whose space
// is a quarter em, words 0.13 em apart are words (a fixed 0.15 em would glue them), letters
// 0.05 em apart are not.
func TestPositionedWordsNarrowSpace(t *testing.T) {
	widths := "250" + strings.Repeat(" 500", 94)
	data := rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Narrow-Roman /FirstChar 32 /LastChar 126 /Widths ["+widths+"] >>",
		// 10 points: "two" ends at 115; "words" starts 1.3 points (0.13 em) later; "ab" then
		// "cd" 0.5 points (0.05 em) after it.
		pdfStream([]byte("BT /F1 10 Tf 1 0 0 1 100 700 Tm (two) Tj 1 0 0 1 116.3 700 Tm (words) Tj ET\n"+
			"BT /F1 10 Tf 1 0 0 1 100 680 Tm (ab) Tj 1 0 0 1 110.5 680 Tm (cd) Tj ET\n")))
	d, err := convertPDF(t.Context(), data, Options{NoOCR: true})
	if err != nil || !strings.Contains(d.Markdown, "two words") || !strings.Contains(d.Markdown, "abcd") {
		t.Fatalf("%v:\n%s", err, d.Markdown)
	}
}

// Table cells drawn as one string spread out by a wide character spacing (Tc of 5 em between
// the glyphs of "XX") are separate words, as their places on the page show; ordinary tracking
// keeps a word whole.
func TestPDFWideCharacterSpacingPartsGlyphs(t *testing.T) {
	page := "BT /F1 1 Tf 12 0 0 12 72 700 Tm 0 Tc (Visual Explain) Tj 10 0 Td 4.9997 Tc [(XX)2860(X)] TJ ET\n" +
		"BT /F1 12 Tf 72 680 Td 0.6 Tc (Tracked) Tj ET\n"
	d, err := convertPDF(t.Context(), makePDF(t, []byte(page)), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "Visual Explain X X X") || !strings.Contains(d.Markdown, "Tracked") {
		t.Fatalf("%q", d.Markdown)
	}
}

// Table headers turned a quarter (drawn bottom to top) side by side are each a line, not one
// run of text; a turned line drawn in two pieces stays one line, with its word gap.
func TestPDFTurnedHeadersAreLinesOfTheirOwn(t *testing.T) {
	page := "BT /F1 9 Tf 0 1 -1 0 430 400 Tm (QIBM_DB_SECADM) Tj 0 1 -1 0 460 400 Tm (QIBM_DB_SQLADM) Tj " +
		"0 1 -1 0 490 400 Tm (No) Tj 0 1 -1 0 490 415 Tm (Authority) Tj ET\n"
	d, err := convertPDF(t.Context(), makePDF(t, []byte(page)), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "QIBM_DB_SECADM\nQIBM_DB_SQLADM\nNo Authority"
	if !strings.Contains(d.Markdown, want) {
		t.Fatalf("%q", d.Markdown)
	}
}

// A word broken by a hyphen at the end of a line is joined (the hyphen goes, the rest of the
// word moves up), as pdftotext does; a hyphen before a capital, a figure or after a single
// letter stays.
func TestPDFHyphenatedLineEndsJoin(t *testing.T) {
	d, err := convertPDF(t.Context(), makePDF(t, textPage("This accessibility paved the way for self-", "publishing, blogging and even", "fan fiction. See Table 2-", "Results and part A-", "Ef-", "fects here", "b here", "a value of -", "x too")), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "This accessibility paved the way for selfpublishing,\nblogging and even\nfan fiction. See Table 2-\nResults and part A-\nEffects\nhere\nb here\na value of -\nx too"
	if !strings.Contains(d.Markdown, want) {
		t.Fatalf("%q", d.Markdown)
	}
}
