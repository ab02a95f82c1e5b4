package cli

import (
	"bytes"
	"io"
	"strings"

	"jobdesk/engine/textwidth"
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
			widths[c] = max(widths[c], textwidth.Of(cell))
		}
	}
	var out strings.Builder
	for _, cells := range rows {
		for c, cell := range cells {
			out.WriteString(cell)
			if c < len(cells)-1 {
				out.WriteString(strings.Repeat(" ", widths[c]-textwidth.Of(cell)+2))
			}
		}
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}
