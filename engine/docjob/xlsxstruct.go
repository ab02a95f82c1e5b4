package docjob

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Limits of block splitting: a sheet larger than this, or one that would split into more
// blocks, is written as one table (splitting is for forms and reports, not data dumps).
const (
	maxSplitCells  = 4_000_000
	maxSplitBlocks = 500
)

// splitBlocks cuts a sheet grid into its blocks — rectangles of cells set apart by rows or
// columns that are empty across them — recursively, as a person sees two tables side by side
// or one under the other, and returns each block as a tidied table (top to bottom, then left
// to right).
func splitBlocks(grid [][]string) [][][]string {
	cells, width := 0, 0
	for _, r := range grid {
		cells += len(r)
		width = max(width, len(r))
	}
	if cells == 0 {
		return nil
	}
	if cells > maxSplitCells {
		if t := tidyGrid(grid); len(t) > 0 {
			return [][][]string{t}
		}
		return nil
	}
	filled := func(r, c int) bool {
		return c < len(grid[r]) && strings.TrimSpace(grid[r][c]) != ""
	}
	type box struct{ r0, r1, c0, c1 int } // inclusive
	var out []box
	var cut func(b box, depth int)
	cut = func(b box, depth int) {
		if len(out) >= maxSplitBlocks || depth > 64 {
			out = append(out, b)
			return
		}
		// runs of rows holding something within the box's columns
		var rowRuns []box
		start := -1
		for r := b.r0; r <= b.r1+1; r++ {
			has := false
			if r <= b.r1 {
				for c := b.c0; c <= b.c1 && c < len(grid[r]); c++ {
					if filled(r, c) {
						has = true
						break
					}
				}
			}
			if has && start < 0 {
				start = r
			} else if !has && start >= 0 {
				rowRuns = append(rowRuns, box{start, r - 1, b.c0, b.c1})
				start = -1
			}
		}
		if len(rowRuns) == 0 {
			return
		}
		if len(rowRuns) > 1 {
			for _, rb := range rowRuns {
				cut(rb, depth+1)
			}
			return
		}
		b = rowRuns[0]
		var colRuns []box
		start = -1
		for c := b.c0; c <= b.c1+1; c++ {
			has := false
			if c <= b.c1 {
				for r := b.r0; r <= b.r1; r++ {
					if filled(r, c) {
						has = true
						break
					}
				}
			}
			if has && start < 0 {
				start = c
			} else if !has && start >= 0 {
				colRuns = append(colRuns, box{b.r0, b.r1, start, c - 1})
				start = -1
			}
		}
		if len(colRuns) == 1 {
			out = append(out, colRuns[0])
			return
		}
		for _, cb := range colRuns {
			cut(cb, depth+1)
		}
	}
	cut(box{0, len(grid) - 1, 0, width - 1}, 0)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].r0 != out[j].r0 {
			return out[i].r0 < out[j].r0
		}
		return out[i].c0 < out[j].c0
	})
	tables := make([][][]string, 0, len(out))
	for _, b := range out {
		// a block's rows are slices of the grid's rows (no copy of a large sheet; writeTable
		// pads a short row)
		rows := make([][]string, 0, b.r1-b.r0+1)
		for r := b.r0; r <= b.r1; r++ {
			g := grid[r]
			rows = append(rows, g[min(b.c0, len(g)):min(b.c1+1, len(g)):min(b.c1+1, len(g))])
		}
		if t := tidyGrid(rows); len(t) > 0 {
			tables = append(tables, t)
		}
	}
	return tables
}

// sheetComments lists a sheet's cell comments as "> Comment B3 (author): text" lines, in cell
// order; a threaded comment (Excel 365) gives its thread, each reply with its author and time,
// instead of the legacy copy Excel keeps beside it.
func sheetComments(f *excelize.File, x *xlsxParts, sheet string) []string {
	if x != nil && strings.HasPrefix(x.sheets[sheet], "xl/chartsheets/") {
		return nil // a chart sheet has no cells; excelize would answer with a worksheet's comments
	}
	cs, err := f.GetComments(sheet)
	if err != nil {
		cs = nil
	}
	threads := x.threads(sheet)
	for cell := range threads {
		found := false
		for _, c := range cs {
			if c.Cell == cell {
				found = true
			}
		}
		if !found {
			cs = append(cs, excelize.Comment{Cell: cell})
		}
	}
	if len(cs) == 0 {
		return nil
	}
	sort.SliceStable(cs, func(i, j int) bool {
		ci, ri, _ := excelize.CellNameToCoordinates(cs[i].Cell)
		cj, rj, _ := excelize.CellNameToCoordinates(cs[j].Cell)
		if ri != rj {
			return ri < rj
		}
		return ci < cj
	})
	var out []string
	for _, c := range cs {
		if t, ok := threads[c.Cell]; ok {
			out = append(out, t...)
			continue
		}
		text := c.Text
		if text == "" {
			var b strings.Builder
			for _, r := range c.Paragraph {
				b.WriteString(r.Text)
			}
			text = b.String()
		}
		// a reply thread's legacy copy starts with Excel's own note about it
		text = oneLine(Clean(text))
		if text == "" {
			continue
		}
		who := ""
		if c.Author != "" {
			who = " (" + oneLine(c.Author) + ")"
			// the author also opens the legacy comment's text ("Author:\nText")
			text = strings.TrimSpace(strings.TrimPrefix(text, oneLine(c.Author)+":"))
		}
		out = append(out, "> Comment "+c.Cell+escapeInline(who)+": "+escapeInline(text))
	}
	return out
}

// xlsxParts finds each sheet's charts in the package: chart sheets and worksheets' drawings.
type xlsxParts struct {
	p       *opc
	sheets  map[string]string // sheet name → part
	persons map[string]string // threaded comments' person id → display name
}

func newXLSXParts(ctx context.Context, data []byte) *xlsxParts {
	p, err := newOPC(ctx, KindXLSX, data)
	if err != nil {
		return nil
	}
	x := &xlsxParts{p: p, sheets: map[string]string{}}
	wb, ok, err := p.xml("xl/workbook.xml")
	if !ok || err != nil {
		return x
	}
	rels := p.rels("xl/workbook.xml")
	walk(wb, func(k *node) {
		if k.name == "sheet" {
			if r, ok := rels[relID(k, "id")]; ok {
				x.sheets[k.a("name")] = r.target
			}
		}
	})
	return x
}

// charts renders the charts of sheet (a chart sheet's one chart, or those drawn on a
// worksheet), in the order the drawing anchors them.
func (x *xlsxParts) charts(sheet string) []string {
	if x == nil {
		return nil
	}
	part, ok := x.sheets[sheet]
	if !ok {
		return nil
	}
	var out []string
	for _, r := range sortedRels(x.p.rels(part)) {
		if r.typ != "drawing" || r.external {
			continue
		}
		drawing, ok, err := x.p.xml(r.target)
		if !ok || err != nil {
			continue
		}
		drels := x.p.rels(r.target)
		walk(drawing, func(k *node) {
			if k.name != "chart" {
				return
			}
			if cr, ok := drels[relID(k, "id")]; ok && path.Ext(cr.target) == ".xml" {
				if md := chartMarkdown(x.p, cr.target); md != "" {
					out = append(out, md)
				}
			}
		})
	}
	return out
}

func sortedRels(m map[string]rel) []rel {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]rel, 0, len(ids))
	for _, id := range ids {
		out = append(out, m[id])
	}
	return out
}

// threads reads the threaded comments of sheet: cell → one line per comment and reply.
func (x *xlsxParts) threads(sheet string) map[string][]string {
	if x == nil || x.sheets[sheet] == "" {
		return nil
	}
	var out map[string][]string
	for _, r := range sortedRels(x.p.rels(x.sheets[sheet])) {
		if r.typ != "threadedComment" || r.external {
			continue
		}
		root, ok, err := x.p.xml(r.target)
		if !ok || err != nil {
			continue
		}
		if x.persons == nil {
			x.persons = map[string]string{}
			for _, part := range []string{"xl/persons/person.xml"} {
				if pn, ok, err := x.p.xml(part); ok && err == nil {
					walk(pn, func(k *node) {
						if k.name == "person" {
							x.persons[k.a("id")] = k.a("displayName")
						}
					})
				}
			}
		}
		walk(root, func(k *node) {
			if k.name != "threadedComment" {
				return
			}
			t := k.child("text")
			if t == nil || strings.TrimSpace(t.text) == "" {
				return
			}
			who := x.persons[k.a("personId")]
			if who == "" {
				who = "comment"
			}
			if dt := k.a("dT"); dt != "" {
				who += ", " + dt
			}
			label := "> Comment "
			if k.a("parentId") != "" {
				label = "> Reply "
			}
			if out == nil {
				out = map[string][]string{}
			}
			cell := k.a("ref")
			out[cell] = append(out[cell], label+cell+" ("+escapeInline(oneLine(who))+"): "+escapeInline(oneLine(Clean(t.text))))
		})
	}
	return out
}
