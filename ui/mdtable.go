package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/mdtext"
)

// This file draws converted Markdown with its tables as tables. Fyne's rich text renders
// Markdown but not its tables (they come out as runs of pipes), and a converted spreadsheet or
// PDF form is mostly tables: the text between tables goes to rich text, each table to a grid
// whose columns are as wide as their widest cell up to a limit, longer cells wrapping inside
// their column, the header row in bold on a band, rows separated by lines.

// mdBlock is a run of a Markdown document: text, or a table's rows (rows != nil).
type mdBlock struct {
	text string
	rows [][]string
}

// maxCellWidth is the widest a table column gets; longer cells wrap within it.
const maxCellWidth = 320

// splitMarkdownTables cuts md into runs of text and tables. A table is a run of lines starting
// with "|"; its delimiter row (|---|:--:|) is dropped, the first row being the header.
func splitMarkdownTables(md string) []mdBlock {
	var out []mdBlock
	var text strings.Builder
	var rows [][]string
	flush := func() {
		if rows != nil {
			out = append(out, mdBlock{rows: rows})
			rows = nil
		}
		if text.Len() > 0 {
			out = append(out, mdBlock{text: text.String()})
			text.Reset()
		}
	}
	for _, l := range strings.Split(md, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "|") {
			if rows != nil {
				flush()
			}
			text.WriteString(l)
			text.WriteByte('\n')
			continue
		}
		if rows == nil {
			flush()
			rows = [][]string{}
		}
		cells := splitTableRow(t)
		delim := true
		for _, c := range cells {
			if strings.Trim(c, "-: ") != "" || c == "" {
				delim = false
			}
		}
		if delim && len(cells) > 0 {
			continue
		}
		rows = append(rows, cells)
	}
	flush()
	return out
}

// splitTableRow splits one table line into its cells: pipes escaped as \| stay in the cell.
func splitTableRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// markdownView draws md: rich text between tables, tables as grids.
func markdownView(md string) fyne.CanvasObject {
	box := container.NewVBox()
	for _, b := range splitMarkdownTables(md) {
		if b.rows == nil {
			if strings.TrimSpace(b.text) == "" {
				continue
			}
			rt := markdownRichText(b.text)
			rt.Wrapping = fyne.TextWrapWord
			box.Add(rt)
			continue
		}
		box.Add(cellTable(b.rows))
	}
	return box
}

// cellTable draws rows as a grid, the first row as the header; a table wider than the view
// scrolls sideways.
func cellTable(rows [][]string) fyne.CanvasObject {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	l := &tableLayout{cols: cols}
	var objs []fyne.CanvasObject
	for i := range rows {
		if i == 0 {
			objs = append(objs, canvas.NewRectangle(theme.Color(theme.ColorNameHeaderBackground)))
		} else {
			objs = append(objs, canvas.NewRectangle(theme.Color(theme.ColorNameSeparator)))
		}
	}
	l.lines = len(objs)
	for i, r := range rows {
		style := fyne.TextStyle{Bold: i == 0}
		for c := 0; c < cols; c++ {
			cell := ""
			if c < len(r) {
				cell = unescapeMarkdown(r[c])
			}
			lb := widget.NewLabelWithStyle(wrapCell(cell, style), fyne.TextAlignLeading, style)
			lb.Selectable = true
			objs = append(objs, lb)
		}
	}
	grid := container.New(l, objs...)
	return container.NewHScroll(grid)
}

// unescapeMarkdown reads a cell as the document wrote it: the line breaks the converter wrote
// as <br> (the document's own "<br>" is escaped, "&lt;br&gt;") become new lines, and the
// backslash escapes and entity references become their characters (mdtext.Unescape).
func unescapeMarkdown(s string) string {
	return mdtext.Unescape(strings.ReplaceAll(s, "<br>", "\n"))
}

// wrapCell breaks text into lines no wider than maxCellWidth in style (at a space when one is
// near, else between any two characters, as Japanese text breaks).
func wrapCell(text string, style fyne.TextStyle) string {
	size := theme.TextSize()
	if fyne.MeasureText(text, size, style).Width <= maxCellWidth {
		return text
	}
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := []rune{}
		width := float32(0)
		lastSpace := -1
		for _, r := range para {
			w := fyne.MeasureText(string(r), size, style).Width
			if width+w > maxCellWidth && len(line) > 0 {
				cut := len(line)
				if lastSpace > 0 && lastSpace > len(line)*2/3 {
					cut = lastSpace
				}
				out = append(out, strings.TrimRight(string(line[:cut]), " "))
				line = append([]rune{}, []rune(strings.TrimLeft(string(line[cut:]), " "))...)
				width = fyne.MeasureText(string(line), size, style).Width
				lastSpace = -1
			}
			if r == ' ' {
				lastSpace = len(line)
			}
			line = append(line, r)
			width += w
		}
		out = append(out, string(line))
	}
	return strings.Join(out, "\n")
}

// tableLayout places a table's cells (after its row bands) in rows and columns: each column
// as wide as its widest cell, each row as high as its highest.
type tableLayout struct {
	cols  int
	lines int // the first objects are one band per row: the header's background, then separators
}

func (l *tableLayout) sizes(objs []fyne.CanvasObject) (widths, heights []float32) {
	cells := objs[l.lines:]
	if l.cols == 0 {
		return nil, nil
	}
	widths = make([]float32, l.cols)
	heights = make([]float32, len(cells)/l.cols)
	for i, o := range cells {
		m := o.MinSize()
		r, c := i/l.cols, i%l.cols
		widths[c] = max(widths[c], m.Width)
		heights[r] = max(heights[r], m.Height)
	}
	return widths, heights
}

func (l *tableLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	widths, heights := l.sizes(objs)
	var s fyne.Size
	for _, w := range widths {
		s.Width += w
	}
	for _, h := range heights {
		s.Height += h + 1
	}
	return s
}

func (l *tableLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	widths, heights := l.sizes(objs)
	y := float32(0)
	for r, h := range heights {
		if r == 0 {
			objs[0].Move(fyne.NewPos(0, 0))
			objs[0].Resize(fyne.NewSize(size.Width, h))
		} else if r < l.lines {
			objs[r].Move(fyne.NewPos(0, y))
			objs[r].Resize(fyne.NewSize(size.Width, 1))
		}
		x := float32(0)
		for c, w := range widths {
			cell := objs[l.lines+r*l.cols+c]
			cell.Move(fyne.NewPos(x, y+1))
			cell.Resize(fyne.NewSize(w, h))
			x += w
		}
		y += h + 1
	}
}
