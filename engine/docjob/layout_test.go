package docjob

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wordsPDF is a one-page PDF placing every word of each line by itself (Tm for the first,
// Td for the rest), in Courier with its widths, as form generators do: no space characters.
func wordsPDF(lines ...string) []byte {
	var c bytes.Buffer
	c.WriteString("BT /F1 12 Tf\n")
	y := 760
	for _, l := range lines {
		x := 72.0
		fmt.Fprintf(&c, "1 0 0 1 %.1f %d Tm\n", x, y)
		for i, w := range strings.Fields(l) {
			if i > 0 {
				fmt.Fprintf(&c, "%.1f 0 Td\n", 7.2*float64(len(strings.Fields(l)[i-1])+1))
			}
			fmt.Fprintf(&c, "(%s) Tj\n", w)
		}
		y -= 16
	}
	c.WriteString("ET")
	widths := strings.TrimSpace(strings.Repeat("600 ", 95))
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /FirstChar 32 /LastChar 126 /Widths ["+widths+"] >>",
		pdfStream(c.Bytes()))
}

// jaCharsPDF places each character of text by itself, one em apart (UniJIS-UCS2-H, DW 1000).
func jaCharsPDF(text string) []byte {
	var c bytes.Buffer
	c.WriteString("BT /F1 12 Tf 72 760 Td\n")
	for i, r := range []rune(text) {
		if i > 0 {
			c.WriteString("12 0 Td\n")
		}
		fmt.Fprintf(&c, "<%s> Tj\n", hex.EncodeToString(ucs2(string(r))))
	}
	c.WriteString("ET")
	return cidFontPage("HeiseiMin-W3", "UniJIS-UCS2-H", c.Bytes())
}

// wordMatch is the share of want's words found in order in got (longest common subsequence).
func wordMatch(got, want string) float64 {
	a, b := strings.Fields(got), strings.Fields(want)
	if len(b) == 0 {
		return 1
	}
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev = cur
	}
	return float64(prev[len(b)]) / float64(len(b))
}

// TestWordsPlacedOneByOne: words positioned one by one (no space characters) come out with
// the spaces their gaps stand for, at least as well as pdftotext reads them; Japanese
// characters placed one by one get no spaces between them.
func TestWordsPlacedOneByOne(t *testing.T) {
	lines := []string{"Application deadline: Friday 30 January", "Submit the form to the regional office", "Budget limit 2,000,000 yen per applicant"}
	corpus := []struct {
		name, want string
		data       []byte
	}{
		{"words", strings.Join(lines, "\n"), wordsPDF(lines...)},
		{"japanese", "申請期限は一月三十日です。", jaCharsPDF("申請期限は一月三十日です。")},
	}
	_, noPoppler := exec.LookPath("pdftotext")
	for _, c := range corpus {
		d, err := Convert(context.Background(), c.data, c.name+".pdf", Options{NoOCR: true})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(strings.TrimPrefix(d.Markdown, "<!-- Page 1 -->\n\n"))
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		ours := wordMatch(got, c.want)
		if noPoppler != nil {
			continue
		}
		p := filepath.Join(t.TempDir(), c.name+".pdf")
		writeFile(t, p, c.data)
		out, err := exec.Command("pdftotext", "-enc", "UTF-8", p, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		theirs := wordMatch(string(out), c.want)
		t.Logf("%s: word match JobDesk %.2f, pdftotext %.2f", c.name, ours, theirs)
		if ours < theirs {
			t.Errorf("%s: JobDesk %.2f below pdftotext %.2f", c.name, ours, theirs)
		}
	}
}

// TestLayoutWideTable: a five-column table whose rows run almost the page's width, between
// text, above a footer in the right margin. Its rows share the margin with every line below
// them, and each row, read whole, is as long as a line of running text: the band of rows ends
// where only margins are left in common, and rows with gaps between their cells are no text
// columns, so the table reads as one table, not as three columns of a table beside two of text.
func TestLayoutWideTable(t *testing.T) {
	var d layoutDrawing
	d.at(56, 780, 10, "See below for the network ports that must be open between hosts.")
	d.at(56, 760, 10, "Open network ports")
	grid := [][]string{
		{"Purpose", "Source", "Destination", "Custom port", "Protocol"},
		{"Image push", "Docker Engine", "Registry: 443", "Yes", "HTTPS"},
		{"Audit logs", "Log collector", "Registry: 443", "Yes", "HTTPS"},
		{"Admin pages", "Web browser", "Registry: 443", "No", "HTTPS"},
		{"Sign-in", "Auth server", "Directory: 636", "No", "LDAPS"},
	}
	xs := []float64{56, 160, 265, 380, 470}
	for r, row := range grid {
		for c, cell := range row {
			d.at(xs[c], 735-float64(r)*22, 10, cell)
		}
	}
	after := []string{
		"* Custom port: the port can be changed to any port number.",
		"The registry keeps its own certificates; the hosts must trust",
		"the authority that signed them before the first image push.",
	}
	for i, s := range after {
		d.at(56, 600-float64(i)*14, 10, s)
	}
	d.at(470, 40, 10, "WHITE PAPER / 5")
	doc, err := Convert(context.Background(), d.pdf(), "ports.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	table.WriteString("| " + strings.Join(grid[0], " | ") + " |\n|" + strings.Repeat(" --- |", 5) + "\n")
	for _, row := range grid[1:] {
		table.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	// The note's "* " is the document's text, not a list: it is escaped.
	if !strings.Contains(doc.Markdown, "Open network ports\n\n"+table.String()+"\n\\"+after[0]) {
		t.Errorf("no five-column table between the heading and the note:\n%s", doc.Markdown)
	}
}
