package app

import (
	"bytes"
	"io"
	"strings"

	"golang.org/x/text/width"
)

// tableWriter lines up tab-separated cells in columns for a terminal, like text/tabwriter with
// two spaces between columns, but counts East Asian wide characters (Japanese file names, column
// names) as the two cells a terminal draws them in; text/tabwriter counts one and misaligns them.
// Write buffers; Flush writes the table. The last cell of a line is not padded.
type tableWriter struct {
	w   io.Writer
	buf bytes.Buffer
}

func newTable(w io.Writer) *tableWriter { return &tableWriter{w: w} }

func (t *tableWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the buffered lines as a table and empties the buffer.
func (t *tableWriter) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	rows := make([][]string, len(lines))
	var widths []int
	for i, l := range lines {
		rows[i] = strings.Split(l, "\t")
		for c, cell := range rows[i][:len(rows[i])-1] {
			if c == len(widths) {
				widths = append(widths, 0)
			}
			widths[c] = max(widths[c], displayWidth(cell))
		}
	}
	var out strings.Builder
	for _, cells := range rows {
		for c, cell := range cells {
			out.WriteString(cell)
			if c < len(cells)-1 {
				out.WriteString(strings.Repeat(" ", widths[c]-displayWidth(cell)+2))
			}
		}
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// displayWidth is how many terminal cells s takes: two for wide and fullwidth characters.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
