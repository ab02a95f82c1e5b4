package docjob

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLayoutTableWrappedCells: a table whose description cells wrap onto a second line, set
// closer than the table's rows follow each other, the last row's too, reads one Markdown row per
// table row, each cell's lines joined (a word broken with a hyphen joined again), and the
// paragraph below comes after the whole table.
func TestLayoutTableWrappedCells(t *testing.T) {
	var d layoutDrawing
	d.at(56, 780, 10, "Table 2 Function usage view")
	rows := [][]string{
		{"Column", "Type", "Description"},
		{"FUNCTION_ID", "VARCHAR(30)", "ID of the function."},
		{"USER_NAME", "VARCHAR(10)", "Name of the user profile that has", "a usage setting for this function."},
		{"USAGE", "VARCHAR(7)", "Usage setting: the profile is al-", "lowed or denied the function."},
		{"USER_TYPE", "VARCHAR(5)", "Type of user profile: a user", "or a group."},
	}
	y := 760.0
	for _, r := range rows {
		d.at(56, y, 10, r[0])
		d.at(170, y, 10, r[1])
		for _, line := range r[2:] {
			d.at(260, y, 10, line)
			y -= 12
		}
		y -= 8
	}
	d.at(56, y-14, 10, "The view lists every function usage ID.")
	doc, err := Convert(context.Background(), d.pdf(), "wrapped.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "Table 2 Function usage view\n\n" +
		"| Column | Type | Description |\n| --- | --- | --- |\n" +
		"| FUNCTION_ID | VARCHAR(30) | ID of the function. |\n" +
		"| USER_NAME | VARCHAR(10) | Name of the user profile that has a usage setting for this function. |\n" +
		"| USAGE | VARCHAR(7) | Usage setting: the profile is allowed or denied the function. |\n" +
		"| USER_TYPE | VARCHAR(5) | Type of user profile: a user or a group. |\n\n" +
		"The view lists every function usage ID."
	if !strings.Contains(doc.Markdown, want) {
		t.Errorf("got\n%s\nwant\n%s", doc.Markdown, want)
	}
}

// TestLayoutTableCellsSetBetweenRows: a table whose rows come in pairs, the number of layers set
// once between the two lines of its pair (as a cell spanning two rows is), reads one Markdown row
// per pair, each cell's two lines joined; the numbered heading set apart below the table is no
// row of it.
func TestLayoutTableCellsSetBetweenRows(t *testing.T) {
	var d layoutDrawing
	d.at(56, 790, 10, "Table 1. Scores of both representations.")
	header := []string{"Layers", "Language", "Score", "Time"}
	xs := []float64{56, 150, 260, 340}
	for c, s := range header {
		d.at(xs[c], 760, 10, s)
	}
	groups := []struct{ layers, s1, t1, s2, t2 string }{
		{"6", "0.965", "2.73", "0.969", "5.39"},
		{"4", "0.938", "1.97", "0.952", "3.77"},
		{"2", "0.923", "1.91", "0.945", "3.81"},
	}
	for g, r := range groups {
		y := 740 - 30*float64(g)
		d.at(xs[1], y, 10, "OTSL")
		d.at(xs[2], y, 10, r.s1)
		d.at(xs[3], y, 10, r.t1)
		d.at(xs[0], y-6.5, 10, r.layers)
		d.at(xs[1], y-13, 10, "HTML")
		d.at(xs[2], y-13, 10, r.s2)
		d.at(xs[3], y-13, 10, r.t2)
	}
	d.at(56, 620, 10, "5.2")
	d.at(90, 620, 10, "Results")
	d.at(56, 600, 10, "The model trained on OTSL reads tables faster.")
	doc, err := Convert(context.Background(), d.pdf(), "pairs.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("| Layers | Language | Score | Time |\n| --- | --- | --- | --- |\n")
	for _, r := range groups {
		fmt.Fprintf(&want, "| %s | OTSL HTML | %s %s | %s %s |\n", r.layers, r.s1, r.s2, r.t1, r.t2)
	}
	want.WriteString("\n5.2 Results\nThe model trained on OTSL reads tables faster.")
	if !strings.Contains(doc.Markdown, want.String()) {
		t.Errorf("got\n%s\nwant\n%s", doc.Markdown, want.String())
	}
}

// TestLayoutSpreadIsNoTable: two pages printed side by side on one sheet, the left one a list,
// the right one a small table whose rows share the list's baselines, with the page numbers at
// the foot. The wide gap between the pages parts no table's cells: the list is not read into
// the table's first column, and each page reads whole, the left before the right.
func TestLayoutSpreadIsNoTable(t *testing.T) {
	var d layoutDrawing
	left := []string{"Question 25. Does it have", "specialized units?"}
	for i, s := range left {
		d.at(20, 420-12*float64(i), 6, s)
	}
	answers := []string{"Yes, national level", "Yes, regional level", "Yes, local level", "No"}
	for i, s := range answers {
		d.at(20, 380-18*float64(i), 6, s)
	}
	d.at(20, 40, 6, "208")
	right := []string{"Question 28. Which groups", "are served? (Select all)"}
	for i, s := range right {
		d.at(320, 420-12*float64(i), 6, s)
	}
	d.at(420, 398, 6, "State")
	d.at(480, 398, 6, "CSOs")
	groups := []string{"Children", "Women", "Migrants", "The elderly"}
	for i, s := range groups {
		y := 380 - 18*float64(i)
		d.at(320, y, 6, s)
		d.at(425, y, 6, "*")
		d.at(485, y, 6, "*")
	}
	d.at(560, 40, 6, "209")
	doc, err := Convert(context.Background(), d.pdf(), "spread.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(doc.Markdown, "\n") {
		if strings.HasPrefix(line, "|") && strings.Contains(line, "Yes,") {
			t.Fatalf("the left page's list is read into a table:\n%s", doc.Markdown)
		}
	}
	if l, r := strings.Index(doc.Markdown, "No"), strings.Index(doc.Markdown, "Question 28"); l < 0 || r < 0 || l > r {
		t.Errorf("the left page does not read before the right one:\n%s", doc.Markdown)
	}
}

// TestPDFFieldValuesBesideLabels: a filled-in form whose values are drawn by its fields'
// appearances (widget annotations, listed in another order than the page shows them) reads
// each value on its label's line, not after the whole page.
func TestPDFFieldValuesBesideLabels(t *testing.T) {
	field := func(x, y float64, ap int) string {
		return fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Tx /Rect [%g %g %g %g] /AP << /N %d 0 R >> >>", x, y-4, x+200, y+12, ap)
	}
	value := func(s string) string {
		return formStream("/BBox [0 0 200 16] /Resources << /Font << /H1 4 0 R >> >>", "BT /H1 10 Tf 2 4 Td ("+s+") Tj ET")
	}
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [8 0 R 6 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream([]byte("BT /F1 10 Tf 72 760 Td (Application for leave) Tj 0 -40 Td (Name:) Tj 0 -30 Td (Date:) Tj 0 -30 Td (Signature of the applicant) Tj ET")),
		field(150, 720, 7),
		value("Hanako Yamada"),
		field(150, 690, 9),
		value("2026-11-28"),
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

// TestLayoutTableTightColumns: two columns of a table set closer than the gaps that part its
// other columns (less than an em apart, as a tight tabular sets them) are two columns, not one
// column of two values a cell.
func TestLayoutTableTightColumns(t *testing.T) {
	var d layoutDrawing
	rows := [][]string{
		{"Model", "Layers", "Low", "High"},
		{"alpha", "6", "0.955", "0.880"},
		{"beta", "4", "0.927", "0.853"},
		{"gamma", "2", "0.915", "0.859"},
		{"delta", "4", "0.942", "0.857"},
	}
	xs := []float64{56, 150, 250, 287} // "0.955" ends at 280: 7 points to the next column
	for r, row := range rows {
		for c, cell := range row {
			d.at(xs[c], 760-18*float64(r), 10, cell)
		}
	}
	d.at(56, 650, 10, "Scores of each model.")
	doc, err := Convert(context.Background(), d.pdf(), "tight.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for r, row := range rows {
		want.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if r == 0 {
			want.WriteString("|" + strings.Repeat(" --- |", 4) + "\n")
		}
	}
	if !strings.Contains(doc.Markdown, want.String()) {
		t.Errorf("got\n%s\nwant\n%s", doc.Markdown, want.String())
	}
}

// TestLayoutJumbledStream: a drawing's title block whose producer shows the values from the
// bottom up and then the labels from the top down (no reading order at all) reads as the page
// shows it: line by line from the top, each label with its value.
func TestLayoutJumbledStream(t *testing.T) {
	fields := [][2]string{
		{"Company:", "Hokuto Works"}, {"Title:", "Power board"}, {"Drawn by:", "Sato"},
		{"Checked by:", "Ito"}, {"Approved by:", "Kato"}, {"Scale:", "1:2"},
		{"Sheet:", "1 of 1"}, {"Size:", "A3"}, {"Revision:", "C"},
	}
	var d layoutDrawing
	for i := len(fields) - 1; i >= 0; i-- {
		d.at(200, 700-20*float64(i), 10, fields[i][1])
	}
	for i, f := range fields {
		d.at(56, 700-20*float64(i), 10, f[0])
	}
	doc, err := Convert(context.Background(), d.pdf(), "titleblock.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i, f := range fields {
		if i > 0 {
			want.WriteByte('\n')
		}
		want.WriteString(f[0] + " " + f[1])
	}
	if !strings.Contains(doc.Markdown, want.String()) {
		t.Errorf("got\n%s\nwant\n%s", doc.Markdown, want.String())
	}
}

// TestLayoutTableHeadingSetClose: a table whose heading cells, wider than the numbers below
// them, stand less than an em apart reads with its heading as the table's first row, not as a
// line of text above a table that has none.
func TestLayoutTableHeadingSetClose(t *testing.T) {
	var d layoutDrawing
	d.at(56, 780, 10, "Table 4. Layers and inference time.")
	d.at(56, 750, 10, "Enc-layers") // ends at 116
	d.at(124, 750, 10, "Dec-layers")
	d.at(192, 750, 10, "Time (s)")
	rows := [][]string{{"6", "6", "2.73"}, {"4", "4", "1.97"}, {"2", "4", "1.91"}, {"4", "2", "1.22"}}
	for r, row := range rows {
		y := 730 - 18*float64(r)
		d.at(83, y, 10, row[0])
		d.at(151, y, 10, row[1])
		d.at(204, y, 10, row[2])
	}
	d.at(56, 620, 10, "Fewer layers run faster.")
	doc, err := Convert(context.Background(), d.pdf(), "heading.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("Table 4. Layers and inference time.\n\n| Enc-layers | Dec-layers | Time (s) |\n| --- | --- | --- |\n")
	for _, row := range rows {
		want.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	want.WriteString("\nFewer layers run faster.")
	if !strings.Contains(doc.Markdown, want.String()) {
		t.Errorf("got\n%s\nwant\n%s", doc.Markdown, want.String())
	}
}

// TestLayoutKeepsEveryWord: pages of words set on random grids (rows at random heights, some
// set between two others, columns close or far, drawn in order or shuffled) read every word
// once, whatever structure the layout finds in them: tables, joined rows, columns, page order.
func TestLayoutKeepsEveryWord(t *testing.T) {
	words := []string{"alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "theta", "zeta", "iota", "rho"}
	rng := rand.New(rand.NewPCG(23, 5))
	tables := 0 // pages read with a table
	for page := range 120 {
		var d layoutDrawing
		type cell struct {
			x, y, size float64
			word       string
		}
		var cells []cell
		rows, cols := 3+rng.IntN(12), 2+rng.IntN(4)
		pitch := 12 + 10*rng.Float64()
		width := 60 + 30*rng.Float64()
		for r := range rows {
			y := 780 - pitch*float64(r)
			if rng.IntN(4) == 0 {
				y -= pitch / 2 // set between this row and the next
			}
			for c := range cols {
				if rng.IntN(5) == 0 {
					continue
				}
				size := 8 + 2*rng.Float64()
				cells = append(cells, cell{40 + width*float64(c) + 4*rng.Float64(), y, size, words[rng.IntN(len(words))]})
			}
		}
		if rng.IntN(2) == 0 {
			rng.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
		}
		want := map[string]int{}
		for _, c := range cells {
			d.at(c.x, c.y, c.size, c.word)
			want[c.word]++
		}
		doc, err := Convert(context.Background(), d.pdf(), "grid.pdf", Options{NoOCR: true})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(doc.Markdown, "| --- |") {
			tables++
		}
		got := map[string]int{}
		for _, w := range strings.FieldsFunc(doc.Markdown, func(r rune) bool { return r < 'a' || r > 'z' }) {
			got[w]++
		}
		for _, w := range words {
			if got[w] != want[w] {
				t.Fatalf("page %d: %q read %d times, drawn %d:\n%s", page, w, got[w], want[w], doc.Markdown)
			}
		}
	}
	if tables < 10 {
		t.Errorf("only %d of the pages read with a table: the grids no longer test the tables", tables)
	}
}
