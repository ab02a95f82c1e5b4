package docjob

import (
	"math"
	"slices"
	"strings"
)

// Reading order by layout.
//
// Most producers show a page's strings in reading order, and spansText keeps that order. Some
// draw a two-column page line by line across both columns, and stream order then cuts every
// sentence in two; tables come out as loose lines. layoutText finds the page's structure from
// its whitespace, in the manner of an XY cut: the strings are grouped into rows by baseline, and
// a band of consecutive rows sharing a vertical gap no string crosses (a gutter) is
//   - split into columns read one after the other, when both sides hold running text (wide
//     columns whose lines mostly fill them; a list's numbers or a form's labels do not), or
//   - written as a Markdown table, when it shares two gaps or more and at least three of its
//     rows, a third of them at least, have text in every column. A row whose cells are set at
//     different heights (a number set between the two lines it stands for) is one row, and so
//     is a row and the lines its cells wrap onto; a gap wider than maxCellGapEm parts two
//     pages side by side, not cells.
// The parts above, below and inside are cut again (a header above two columns, columns inside
// columns). Text inside a part keeps stream order and spansText's joining, and a page where no
// such band is found reads exactly as in stream order, but for a page shown in no reading order
// at all (jumbled: a drawing's labels and values), which is first put in page order, line by
// line from the top. Two blocks side by side drawn one after the other, the right one first (two
// pages printed on one sheet), read left then right; the lines at the foot of a page read top
// to bottom (footerOrder). Vertical writing (a -V CMap) reads its columns right to left, after
// the horizontal headings that stand above it (verticalHeads); rotated text is left in stream
// order.

// Thresholds, in ems of the page's median font size where they are lengths.
const (
	gutterEm       = 1.0     // narrowest gap that parts columns or table cells
	columnMinEm    = 12.0    // a line of running text at least this long fills its column...
	fullLine       = 0.75    // ...when it also covers this share of the column's width
	fullShare      = 0.5     // share of a text column's lines that fill it
	columnMinRows  = 4       // rows with text on each side of a gutter between text columns
	tableMinRows   = 3       // rows with text in every column of a table
	overlapEm      = 0.9     // table rows closer than this (of their font size) are one row
	wrapPitch      = 0.85    // a wrapped cell's next line follows this closer than the rows
	centreEm       = 0.25    // a cell set between two lines lies this close to halfway
	minTableShare  = 1.0 / 3 // share of a table's rows that fill every column
	maxCellGapEm   = 20.0    // widest gap between two columns of a table
	narrowGapEm    = 0.6     // narrowest gap between a table's columns that no row crosses
	maxHeaderRows  = 4       // lines of a table's heading set closer than its gaps
	farRowsEm      = 3.0     // a row at the end of a table this far from the next (and...
	farPitches     = 2.5     // ...this many times the rows' usual distance) is not part of it
	maxLayoutRows  = 4000    // a page with more rows keeps stream order
	layoutBudget   = 400_000 // gap comparisons per page
	maxLayoutDepth = 16      // nested cuts
)

// layoutText returns a page's text in reading order (see above).
func layoutText(spans []span) string {
	if v, ok := verticalOrder(spans); ok {
		return spansText(v)
	}
	spans = verticalHeads(verticalRuns(spans))
	if jumbled(spans) {
		spans = pageOrder(spans)
	} else {
		spans = footerOrder(spans)
	}
	l := newLayout(spans)
	if l == nil {
		return spansText(spans)
	}
	all := make([]int, len(l.items))
	for i := range all {
		all[i] = i
	}
	l.cut(all, 0)
	if !l.found {
		return spansText(spans)
	}
	return l.render()
}

// item is a span that takes room on the page: x0..x1 along its baseline y.
type item struct {
	x0, x1, y, size float64
	span            int // index in layout.spans
}

// interval is a stretch of x.
type interval struct{ a, b float64 }

// row is a set of items on one baseline, by x, and the gaps of at least gutterEm between them
// and the edges of the region being cut.
type row struct {
	y, size float64
	items   []int
	holes   []interval
	end     int // where the row's gaps end in the page's array of gaps
}

// part is one piece of the page in reading order: a group of spans read as text, or a table
// whose cells are groups (-1: an empty cell).
type part struct {
	group int
	table [][]int
}

type layout struct {
	spans   []span
	items   []item
	em      float64
	budget  int
	found   bool  // a column split or a table was found
	owner   []int // group of each item
	ngroups int
	parts   []part
}

// newLayout collects the items of a page, or returns nil when layout cannot help: a page with
// vertical or rotated text, positions that are not numbers, or too little text for columns.
func newLayout(spans []span) *layout {
	l := &layout{spans: spans, budget: layoutBudget, items: make([]item, 0, len(spans))}
	for i, s := range spans {
		if math.IsNaN(s.x) {
			continue // a word break inside a TJ
		}
		if !s.upright || math.IsInf(s.x, 0) || math.IsNaN(s.y) || math.IsInf(s.y, 0) || math.IsNaN(s.end) || math.IsInf(s.end, 0) {
			return nil
		}
		if strings.TrimSpace(s.text) == "" {
			continue
		}
		size := s.size
		if size <= 0 || math.IsNaN(size) || math.IsInf(size, 0) {
			size = 10
		}
		x1 := s.end
		if !(x1 > s.x) {
			x1 = s.x + 0.5*size*float64(runeLen(s.text))
		}
		l.items = append(l.items, item{x0: s.x, x1: x1, y: s.y, size: size, span: i})
	}
	if len(l.items) < tableMinRows*2 {
		return nil
	}
	// The median font size, of at most 63 items taken evenly through the page.
	var sample [63]float64
	n := min(len(l.items), len(sample))
	for i := range n {
		sample[i] = l.items[i*len(l.items)/n].size
	}
	slices.Sort(sample[:n])
	l.em = sample[n/2]
	return l
}

// rows groups the items idx into rows, top to bottom, and finds each row's gaps within the
// region the items cover, x0..x1.
func (l *layout) rows(idx []int) (rows []row, x0, x1 float64) {
	sorted := slices.Clone(idx)
	slices.SortFunc(sorted, func(a, b int) int {
		ia, ib := &l.items[a], &l.items[b]
		switch {
		case ia.y > ib.y:
			return -1
		case ia.y < ib.y:
			return 1
		case ia.x0 < ib.x0:
			return -1
		case ia.x0 > ib.x0:
			return 1
		}
		return a - b
	})
	x0, x1 = math.Inf(1), math.Inf(-1)
	start := 0
	for n, k := range sorted {
		it := &l.items[k]
		x0, x1 = min(x0, it.x0), max(x1, it.x1)
		if r := len(rows); r > 0 && rows[r-1].y-it.y <= 0.4*max(it.size, rows[r-1].size) {
			continue
		}
		if n > 0 {
			rows[len(rows)-1].items = sorted[start:n:n]
		}
		rows = append(rows, row{y: it.y, size: it.size})
		start = n
	}
	rows[len(rows)-1].items = sorted[start:]
	// The rows' gaps share one array: row r's are holes[rows[r-1].end:rows[r].end].
	gap := gutterEm * l.em
	var holes []interval
	for r := range rows {
		items := rows[r].items
		slices.SortStableFunc(items, func(a, b int) int {
			switch ia, ib := l.items[a].x0, l.items[b].x0; {
			case ia < ib:
				return -1
			case ia > ib:
				return 1
			}
			return 0
		})
		cur := x0
		for _, k := range items {
			if it := &l.items[k]; it.x0-cur >= gap {
				holes = append(holes, interval{cur, it.x0})
				cur = it.x1
			} else {
				cur = max(cur, it.x1)
			}
		}
		if x1-cur >= gap {
			holes = append(holes, interval{cur, x1})
		}
		rows[r].end = len(holes)
	}
	for r := range rows {
		lo := 0
		if r > 0 {
			lo = rows[r-1].end
		}
		rows[r].holes = holes[lo:rows[r].end:rows[r].end]
	}
	return rows, x0, x1
}

// inner counts the holes that lie inside x0..x1, touching neither edge: gaps between text, not
// margins.
func inner(holes []interval, x0, x1 float64) int {
	n := 0
	for _, h := range holes {
		if h.a > x0 && h.b < x1 {
			n++
		}
	}
	return n
}

// intersect appends to out the stretches of at least min common to a and b (both sorted).
func intersect(out, a, b []interval, min float64) []interval {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].a, b[j].a), math.Min(a[i].b, b[j].b)
		if hi-lo >= min {
			out = append(out, interval{lo, hi})
		}
		if a[i].b < b[j].b {
			i++
		} else {
			j++
		}
	}
	return out
}

// cut emits the parts of the items idx in reading order: it looks for the first band of rows
// that splits into text columns or forms a table, cuts the page around it and goes on inside
// each piece; items with no such band are one text part. A band runs down from a row as long as
// its rows share a gap between text (margins do not count); where a line with no gap inside
// takes away some of the gaps the rows above share, those rows are first tried as a table.
func (l *layout) cut(idx []int, depth int) {
	if len(idx) == 0 {
		return
	}
	if depth >= maxLayoutDepth || l.budget <= 0 {
		l.text(idx)
		return
	}
	rows, x0, x1 := l.rows(idx)
	if len(rows) > maxLayoutRows {
		l.text(idx)
		return
	}
	gap := gutterEm * l.em
	// table emits band i..j as a table when it is one, with the parts above and below.
	table := func(i, j int, common []interval) bool {
		band := rows[i : j+1]
		a, b, cols, ok := l.table(band, common)
		if ok {
			l.found = true
			cols = l.splitColumns(band[a:b], cols)
			h, cols := l.header(rows[:i+a], band[a:b], cols)
			l.cut(rowItems(rows[:i+a-h]), depth+1)
			l.tablePart(rows[i+a-h:i+b], cols)
			l.cut(rowItems(rows[i+b:]), depth+1)
		}
		return ok
	}
	var bufs [2][]interval // the common gaps, and the next ones
	for i := 0; i+tableMinRows <= len(rows) && l.budget > 0; i++ {
		common := rows[i].holes
		j := i
		for j+1 < len(rows) && len(common) > 0 {
			l.budget -= len(common) + len(rows[j+1].holes)
			next := intersect(bufs[j&1][:0], common, rows[j+1].holes, gap)
			bufs[j&1] = next
			in := inner(next, x0, x1)
			if in == 0 {
				break // only margins left in common: the band ends here
			}
			if in < inner(common, x0, x1) && inner(rows[j+1].holes, x0, x1) == 0 &&
				j-i+1 >= tableMinRows && table(i, j, common) {
				// The next row is a line with no gap inside, such as the note under a table,
				// that shares a gap of the rows above only by chance: they are a table.
				return
			}
			common = next
			j++
		}
		if j-i+1 < tableMinRows || len(common) == 0 {
			continue
		}
		band := rows[i : j+1]
		if h, ok := l.columns(band, common); ok {
			l.part(rows, i, j, h.a, depth)
			return
		}
		if table(i, j, common) {
			return
		}
		if h, ok := l.sides(band, common, x0, x1); ok {
			l.part(rows, i, j, h.a, depth)
			return
		}
	}
	l.text(idx)
}

// sides returns a gap of holes (inside x0..x1) that parts band into two blocks side by side
// drawn one after the other, the right one first: two pages printed on one sheet, each drawn
// whole, the right page before the left. Each side has text on at least columnMinRows rows,
// and every string of the right side comes before every string of the left in stream order
// (a table's columns drawn one after the other would have been found as a table). Text in a
// right-to-left script keeps stream order.
func (l *layout) sides(band []row, holes []interval, x0, x1 float64) (interval, bool) {
	for _, h := range holes {
		if h.a <= x0 || h.b >= x1 {
			continue
		}
		lrows, rrows := 0, 0
		minL, maxR := math.MaxInt, -1
		for _, r := range band {
			var lft, rgt bool
			l.budget -= len(r.items)
			for _, k := range r.items {
				if l.items[k].x1 <= h.a {
					lft = true
					minL = min(minL, l.items[k].span)
				} else {
					rgt = true
					maxR = max(maxR, l.items[k].span)
				}
			}
			if lft {
				lrows++
			}
			if rgt {
				rrows++
			}
		}
		if lrows < columnMinRows || rrows < columnMinRows || maxR > minL {
			continue
		}
		for _, r := range band {
			for _, k := range r.items {
				if hasRTL(l.spans[l.items[k].span].text) {
					return interval{}, false
				}
			}
		}
		return h, true
	}
	return interval{}, false
}

// part cuts the band rows[i..j] at x into its items ending left of x and the rest, and emits
// the rows above the band, the band's left part, its right part and the rows below, each cut
// again on its own.
func (l *layout) part(rows []row, i, j int, x float64, depth int) {
	l.found = true
	var left, right []int
	for _, r := range rows[i : j+1] {
		for _, k := range r.items {
			if l.items[k].x1 <= x {
				left = append(left, k)
			} else {
				right = append(right, k)
			}
		}
	}
	l.cut(rowItems(rows[:i]), depth+1)
	l.cut(left, depth+1)
	l.cut(right, depth+1)
	l.cut(rowItems(rows[j+1:]), depth+1)
}

func rowItems(rows []row) []int {
	var out []int
	for _, r := range rows {
		out = append(out, r.items...)
	}
	return out
}

// columns returns the widest gap of holes that parts band into two columns of running text:
// each side has text on at least columnMinRows rows, and at least fullShare of its lines fill
// it, with no gap of gutterEm inside them (the labels of a form, a list's numbers, short table
// cells and table rows, their cells apart, do not).
func (l *layout) columns(band []row, holes []interval) (interval, bool) {
	var best interval
	found := false
	type extent struct {
		lo, hi float64
		gapped bool // a gap of the row lies inside
	}
	var left, right []extent
	for _, h := range holes {
		left, right = left[:0], right[:0]
		for _, r := range band {
			le, re := extent{lo: math.Inf(1), hi: math.Inf(-1)}, extent{lo: math.Inf(1), hi: math.Inf(-1)}
			for _, k := range r.items {
				it := &l.items[k]
				if it.x1 <= h.a {
					le.lo, le.hi = min(le.lo, it.x0), max(le.hi, it.x1)
				} else {
					re.lo, re.hi = min(re.lo, it.x0), max(re.hi, it.x1)
				}
			}
			for _, g := range r.holes {
				le.gapped = le.gapped || (g.a > le.lo && g.b < le.hi)
				re.gapped = re.gapped || (g.a > re.lo && g.b < re.hi)
			}
			if le.hi > le.lo {
				left = append(left, le)
			}
			if re.hi > re.lo {
				right = append(right, re)
			}
		}
		if len(left) < columnMinRows || len(right) < columnMinRows {
			continue
		}
		textColumn := func(lines []extent) bool {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, e := range lines {
				lo, hi = min(lo, e.lo), max(hi, e.hi)
			}
			long := max(columnMinEm*l.em, fullLine*(hi-lo))
			full := 0
			for _, e := range lines {
				if e.hi-e.lo >= long && !e.gapped {
					full++
				}
			}
			return float64(full) >= fullShare*float64(len(lines))
		}
		if textColumn(left) && textColumn(right) && (!found || h.b-h.a > best.b-best.a) {
			best, found = h, true
		}
	}
	return best, found
}

// table reports whether band[a:b] is a table: the gaps its rows share with text on both sides
// part it into three columns or more, and at least tableMinRows rows have text in every
// column. Rows at either end with text in one column only (a caption, a line of the paragraph
// above) are left out, and the gaps found again without them. cols are the gaps between the
// columns.
func (l *layout) table(band []row, holes []interval) (a, b int, cols []interval, ok bool) {
	a, b = 0, len(band)
	for {
		cols = cols[:0]
		for _, h := range holes {
			var lft, rgt bool
			for _, r := range band[a:b] {
				for _, k := range r.items {
					if l.items[k].x1 <= h.a {
						lft = true
					} else {
						rgt = true
					}
				}
			}
			if lft && rgt {
				cols = append(cols, h)
			}
		}
		if len(cols) < 2 {
			return 0, 0, nil, false
		}
		for _, h := range cols {
			if h.b-h.a > maxCellGapEm*l.em {
				return 0, 0, nil, false // two pages side by side, not the cells of a table
			}
		}
		filled := make([]int, b-a)
		seen := make([]bool, len(cols)+1)
		for r, rw := range band[a:b] {
			clear(seen)
			for _, k := range rw.items {
				if c := l.column(k, cols); !seen[c] {
					seen[c] = true
					filled[r]++
				}
			}
		}
		// Rows at either end are left out when they fill one column only (a caption, a line
		// of the paragraph above), or when they stand far from the rest and do not fill every
		// column (a heading below, a page's header or footer); a row at the bottom that
		// continues the row above (a wrapped cell) stays.
		// (Both are found only when needed: table runs for many bands of a page.)
		var wrap []bool
		wrapped := func(r int) bool {
			if wrap == nil {
				wrap = l.joins(band[a:b], cols, true)
			}
			return wrap[r]
		}
		far := -1.0
		apart := func(r, s int) bool {
			if far < 0 {
				far = max(farRowsEm*l.em, farPitches*medianPitch(band[a:b]))
			}
			return band[a+r].y-band[a+s].y > far
		}
		a2, b2 := 0, len(filled)
		for a2 < b2 && (filled[a2] < 2 || a2+1 < b2 && filled[a2] <= len(cols) && apart(a2, a2+1)) {
			a2++
		}
		for b2 > a2 && (filled[b2-1] < 2 && !wrapped(b2-1) || b2-1 > a2 && filled[b2-1] <= len(cols) && apart(b2-2, b2-1)) {
			b2--
		}
		if a2 == 0 && b2 == len(filled) {
			// Every column filled, in tableMinRows rows of the table (a row and the rows that
			// continue it), and those rows are a third of the table's rows at least: text set
			// in columns side by side, each with a line of a table here and there, is no table.
			// Rows that fill every column are never joined to others (see joins), so where
			// they alone are enough, joins need not be found.
			full := 0
			for _, f := range filled {
				if f == len(cols)+1 {
					full++
				}
			}
			if full >= tableMinRows && minTableShare*float64(len(filled)) <= float64(full) {
				return a, b, cols, true
			}
			join := l.joins(band[a:b], cols, false)
			full = 0
			for r := 0; r < len(filled); {
				e := r + 1
				for e < len(filled) && join[e] {
					e++
				}
				clear(seen)
				n := 0
				for _, rw := range band[a+r : a+e] {
					for _, k := range rw.items {
						if c := l.column(k, cols); !seen[c] {
							seen[c] = true
							n++
						}
					}
				}
				if n == len(cols)+1 {
					full++
				}
				r = e
			}
			if full < tableMinRows {
				return a, b, cols, false
			}
			rows := 0
			for r := range filled {
				if !wrapped(r) {
					rows++
				}
			}
			return a, b, cols, minTableShare*float64(rows) <= float64(full)
		}
		a, b = a+a2, a+b2
		if b-a < tableMinRows {
			return 0, 0, nil, false
		}
		// The gaps of the rows kept: those of the first, narrowed by the others.
		gap := gutterEm * l.em
		holes = band[a].holes
		for _, r := range band[a+1 : b] {
			l.budget -= len(holes) + len(r.holes)
			if holes = intersect(nil, holes, r.holes, gap); len(holes) == 0 {
				return 0, 0, nil, false
			}
		}
	}
}

// column is the table column of item k: the number of gaps to its left.
func (l *layout) column(k int, cols []interval) int {
	c := 0
	for c < len(cols) && l.items[k].x0 >= cols[c].b {
		c++
	}
	return c
}

// text makes the items idx one text part.
func (l *layout) text(idx []int) {
	g := l.group(idx)
	l.parts = append(l.parts, part{group: g})
}

func (l *layout) group(idx []int) int {
	if l.owner == nil {
		l.owner = make([]int, len(l.items))
	}
	g := l.ngroups
	l.ngroups++
	for _, k := range idx {
		l.owner[k] = g
	}
	return g
}

// tablePart makes rows a table part, one group per cell: a row and the rows that continue it
// (joins) are one row of the table.
func (l *layout) tablePart(rows []row, cols []interval) {
	join := l.joins(rows, cols, true)
	var cells [][]int
	for r := 0; r < len(rows); {
		e := r + 1
		for e < len(rows) && join[e] {
			e++
		}
		byCol := make([][]int, len(cols)+1)
		for _, rw := range rows[r:e] {
			for _, k := range rw.items {
				c := l.column(k, cols)
				byCol[c] = append(byCol[c], k)
			}
		}
		cell := make([]int, len(byCol))
		for c, ks := range byCol {
			cell[c] = -1
			if len(ks) > 0 {
				cell[c] = l.group(ks)
			}
		}
		cells = append(cells, cell)
		r = e
	}
	l.parts = append(l.parts, part{group: -1, table: cells})
}

// joins reports for each row of a table whether it continues the row above rather than
// starting a row of its own: a cell's text wraps onto it, or it holds a cell set between two
// lines (a number that stands for both). A row continues the one above when
//   - it is the middle one of three lines, each less than overlapEm of the font size from the
//     next, the middle one about halfway (within centreEm), its text in columns the other two
//     leave empty, the other two sharing a column, and the lines above and below the three
//     further away: a row whose cells are set at different heights, such as a label centred
//     beside a cell of two lines (or the third of those three lines), or, when wrapped is true,
//   - its first column is empty and it follows the row above more closely than the table's
//     rows follow each other: by at most wrapPitch of the median distance above the rows whose
//     first column holds text (a table whose rows are all one line has none such).
//
// Only the first kind counts when deciding whether rows are a table; both are rendered.
func (l *layout) joins(rows []row, cols []interval, wrapped bool) []bool {
	join := make([]bool, len(rows))
	first := make([]bool, len(rows)) // the first column holds text
	nc := len(cols) + 1
	in := make([]bool, len(rows)*nc) // the columns each row has text in, row after row
	for r, rw := range rows {
		for _, k := range rw.items {
			in[r*nc+l.column(k, cols)] = true
		}
		first[r] = in[r*nc]
	}
	shares := func(a, b int) bool {
		for c := range nc {
			if in[a*nc+c] && in[b*nc+c] {
				return true
			}
		}
		return false
	}
	size := func(a, b int) float64 { return max(rows[a].size, rows[b].size) }
	near := func(a, b int) bool { return rows[a].y-rows[b].y < overlapEm*size(a, b) }
	for t := 0; t+2 < len(rows); t++ {
		m, b := t+1, t+2
		if !near(t, m) || !near(m, b) || shares(t, m) || shares(m, b) || !shares(t, b) ||
			math.Abs(rows[m].y-(rows[t].y+rows[b].y)/2) > centreEm*size(t, b) ||
			t > 0 && near(t-1, t) || b+1 < len(rows) && near(b, b+1) {
			continue
		}
		join[m], join[b] = true, true
		t = b
	}
	var pitches []float64
	for r := 1; r < len(rows); r++ {
		if first[r] && !join[r] {
			pitches = append(pitches, rows[r-1].y-rows[r].y)
		}
	}
	if !wrapped || len(pitches) == 0 {
		return join
	}
	slices.Sort(pitches)
	usual := pitches[len(pitches)/2]
	for r := 1; r < len(rows); r++ {
		if !first[r] && rows[r-1].y-rows[r].y <= wrapPitch*usual {
			join[r] = true
		}
	}
	return join
}

// render writes the parts. Each group's spans are read by spansText in stream order; a span
// that takes no room goes with its neighbour: blank text with the item before it, a word break
// with the item after it.
func (l *layout) render() string {
	grp := make([]int, len(l.spans))
	for i := range grp {
		grp[i] = -1
	}
	for k, it := range l.items {
		grp[it.span] = l.owner[k]
	}
	last := -1
	for i, s := range l.spans {
		switch {
		case grp[i] >= 0:
			last = grp[i]
		case !math.IsNaN(s.x):
			grp[i] = last
		}
	}
	next := -1
	for i := len(l.spans) - 1; i >= 0; i-- {
		switch {
		case grp[i] >= 0 && !math.IsNaN(l.spans[i].x) && strings.TrimSpace(l.spans[i].text) != "":
			next = grp[i]
		case grp[i] < 0:
			grp[i] = next
		}
	}
	members := make([][]span, l.ngroups)
	for i, g := range grp {
		if g >= 0 {
			members[g] = append(members[g], l.spans[i])
		}
	}
	var b strings.Builder
	for _, p := range l.parts {
		if p.table == nil {
			t := spansText(members[p.group])
			if t == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(EscapeMarkdown(t))
			continue
		}
		rows := make([][]string, len(p.table))
		for r, cells := range p.table {
			rows[r] = make([]string, len(cells))
			for c, g := range cells {
				if g >= 0 {
					rows[r][c] = pdfCellText(spansText(members[g]))
				}
			}
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		writeTextTable(&b, rows)
		b.WriteByte('\n')
	}
	return b.String()
}

// verticalRuns returns a page that mixes horizontal and vertical writing with each run of
// strings drawn one after another in vertical fonts (a block of vertical text below a
// horizontal heading) in reading order, as verticalOrder puts a vertical page: its columns
// right to left, whatever order the producer drew them in. Other strings keep their places.
func verticalRuns(spans []span) []span {
	var out []span
	for i := 0; i < len(spans); {
		if spans[i].font == nil || !spans[i].font.vertical {
			if out != nil {
				out = append(out, spans[i])
			}
			i++
			continue
		}
		j := i
		for j < len(spans) && (spans[j].font == nil && math.IsNaN(spans[j].x) || spans[j].font != nil && spans[j].font.vertical) {
			j++
		}
		v, ok := verticalOrder(spans[i:j])
		if !ok || j-i < 2 {
			if out != nil {
				out = append(out, spans[i:j]...)
			}
			i = j
			continue
		}
		if out == nil {
			out = append(make([]span, 0, len(spans)), spans[:i]...)
		}
		out = append(out, v...)
		i = j
	}
	if out == nil {
		return spans
	}
	return out
}

// verticalHeads returns spans with the horizontal strings drawn after a run of vertical
// writing (and before the next run) that stand above the run's top moved in front of it, in
// their order: the headings of vertical text, drawn after it, read before it as they stand
// above it. A word break goes with the string after it.
func verticalHeads(spans []span) []span {
	vert := func(s *span) bool { return s.font != nil && s.font.vertical }
	var out []span
	var take []bool
	done := 0 // spans[:done] are in out
	for i := 0; i < len(spans); {
		if !vert(&spans[i]) {
			i++
			continue
		}
		j, top := i, math.Inf(-1)
		for j < len(spans) && (vert(&spans[j]) || spans[j].font == nil && math.IsNaN(spans[j].x)) {
			if y := spans[j].y; vert(&spans[j]) && !math.IsNaN(spans[j].x) && !math.IsNaN(y) && !math.IsInf(y, 0) {
				top = max(top, y)
			}
			j++
		}
		k, heads := j, 0
		take = take[:0]
		for ; k < len(spans) && !vert(&spans[k]); k++ {
			s := &spans[k]
			head := s.upright && s.font != nil && !math.IsNaN(s.x) && strings.TrimSpace(s.text) != "" && s.y > top && !math.IsInf(top, 0)
			if head {
				heads++
				for b := len(take) - 1; b >= 0 && spans[j+b].font == nil && math.IsNaN(spans[j+b].x); b-- {
					take[b] = true
				}
			}
			take = append(take, head)
		}
		if heads == 0 {
			i = k
			continue
		}
		if out == nil {
			out = make([]span, 0, len(spans))
		}
		out = append(out, spans[done:i]...)
		for b, t := range take {
			if t {
				out = append(out, spans[j+b])
			}
		}
		out = append(out, spans[i:j]...)
		for b, t := range take {
			if !t {
				out = append(out, spans[j+b])
			}
		}
		done, i = k, k
	}
	if out == nil {
		return spans
	}
	return append(out, spans[done:]...)
}

// verticalOrder returns a page written vertically only (every string in a vertical font) in
// reading order: its columns right to left, each top to bottom (strings at one height keep
// stream order). ok is false when some string is horizontal.
func verticalOrder(spans []span) (out []span, ok bool) {
	for _, s := range spans {
		if s.font != nil && !s.font.vertical {
			return nil, false
		}
		if s.font == nil && !math.IsNaN(s.x) {
			return nil, false
		}
	}
	for _, s := range spans {
		if s.font != nil && !math.IsNaN(s.x) && !math.IsNaN(s.y) && !math.IsInf(s.x, 0) && !math.IsInf(s.y, 0) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	slices.SortStableFunc(out, func(a, b span) int {
		switch {
		case a.x > b.x:
			return -1
		case a.x < b.x:
			return 1
		}
		return 0
	})
	// Columns: strings whose x lies within 0.6 em of the column's first.
	for i := 0; i < len(out); {
		size := out[i].size
		if size <= 0 || math.IsNaN(size) {
			size = 10
		}
		j := i + 1
		for j < len(out) && out[i].x-out[j].x <= 0.6*size {
			j++
		}
		col := out[i:j]
		slices.SortStableFunc(col, func(a, b span) int {
			switch {
			case a.y > b.y:
				return -1
			case a.y < b.y:
				return 1
			}
			return 0
		})
		// one column, one x: spansText joins its strings top to bottom
		for k := range col {
			col[k].x = col[0].x
		}
		i = j
	}
	return out, true
}

// pdfCellText is a table cell's text on one line: its lines joined by a space, a word broken
// with a hyphen at the end of a line joined again.
func pdfCellText(s string) string {
	var out string
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		switch {
		case line == "":
		case out == "":
			out = line
		default:
			if joined, rest, ok := dehyphenate(out, line); ok {
				out = strings.TrimSpace(joined + " " + rest)
			} else {
				out += " " + line
			}
		}
	}
	return out
}

// medianPitch is the median distance between the baselines of consecutive rows (0 for one
// row).
func medianPitch(rows []row) float64 {
	if len(rows) < 2 {
		return 0
	}
	d := make([]float64, len(rows)-1)
	for r := 1; r < len(rows); r++ {
		d[r-1] = rows[r-1].y - rows[r].y
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// splitColumns returns cols with the gaps added, narrower than gutterEm but at least
// narrowGapEm, that no string of any of the table's rows crosses inside one of its columns,
// where both sides hold text in at least half of the table's rows (tableMinRows at least):
// columns set closer than the gaps that found the table (a paper's tight tabular), which
// would otherwise read as one column of two values a cell.
func (l *layout) splitColumns(rows []row, cols []interval) []interval {
	join := l.joins(rows, cols, true)
	n := 0 // the table's rows
	for _, j := range join {
		if !j {
			n++
		}
	}
	need := max(tableMinRows, (n+1)/2)
	var out []interval
	var ext []interval
	for c := 0; c <= len(cols); c++ {
		if c > 0 {
			out = append(out, cols[c-1])
		}
		ext = ext[:0]
		for _, rw := range rows {
			for _, k := range rw.items {
				if l.column(k, cols) == c {
					ext = append(ext, interval{l.items[k].x0, l.items[k].x1})
				}
			}
		}
		slices.SortFunc(ext, func(a, b interval) int { return cmpFloat(a.a, b.a) })
		for i := 1; i < len(ext); i++ {
			if ext[i].a < ext[i-1].b {
				ext[i].b = max(ext[i].b, ext[i-1].b)
				continue
			}
			g := interval{ext[i-1].b, ext[i].a}
			if g.b-g.a < narrowGapEm*l.em {
				ext[i].b = max(ext[i].b, ext[i-1].b)
				continue
			}
			// Rows with text on each side of g.
			left, right := 0, 0
			for r := 0; r < len(rows); {
				e := r + 1
				for e < len(rows) && join[e] {
					e++
				}
				lft, rgt := false, false
				for _, rw := range rows[r:e] {
					for _, k := range rw.items {
						if l.column(k, cols) != c {
							continue
						}
						if l.items[k].x1 <= g.a {
							lft = true
						} else {
							rgt = true
						}
					}
				}
				if lft {
					left++
				}
				if rgt {
					right++
				}
				r = e
			}
			if left >= need && right >= need {
				out = append(out, g)
			}
			ext[i].b = max(ext[i].b, ext[i-1].b)
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Jumbled pages. Some producers (drawing programs, reports laid out as loose boxes) show a
// page's strings in no reading order at all: a label, then a value at the other end of the
// page, then the line above. jumbled tells such a page by its moves up: where at least
// jumbledShare of the moves from one line to another go up the page by more than a line, and
// there are jumbledMoves of them or more, stream order is no reading order, and pageOrder
// reads the page as pdftotext does, line by line from the top, each line left to right.
// Columns drawn one after the other move up once a column, a table drawn column by column once
// a column of its rows, and keep stream order.
const (
	jumbledMoves = 8
	jumbledShare = 1.0 / 3
	footLines    = 4 // lines of a page's foot read in page order (footerOrder)
)

// jumbled reports whether spans, every one upright, move up the page between lines often
// enough that their stream order is no reading order (see above).
func jumbled(spans []span) bool {
	up, moves := 0, 0
	var last *span
	for i := range spans {
		s := &spans[i]
		if math.IsNaN(s.x) {
			continue
		}
		if !s.upright || s.rot != 0 || math.IsInf(s.x, 0) || math.IsNaN(s.y) || math.IsInf(s.y, 0) {
			return false
		}
		if strings.TrimSpace(s.text) == "" {
			continue
		}
		if last != nil {
			size := max(s.size, last.size, 1)
			if dy := s.y - last.y; math.Abs(dy) > 0.4*size {
				moves++
				if dy > 1.5*size {
					up++
				}
			}
		}
		last = s
	}
	return up >= jumbledMoves && float64(up) >= jumbledShare*float64(moves)
}

// footerOrder returns spans with the blocks at the foot of the page in page order. The foot is
// the strings the page draws last that lie below every string drawn before them, on at most
// footLines lines (a footer, a page number, a producer's note in one-point type); a block is a
// run of them that never goes up a line. Where a block stands wholly above the block drawn
// before it (a page number drawn after a note at the very bottom), it is read first; blocks
// side by side (a signature's name beside its details) keep stream order, each block its own.
// Of the feet a page has (any tail of a page drawn top to bottom is one), the shortest that
// goes up a line is taken. Other strings keep stream order.
func footerOrder(spans []span) []span {
	text := func(s *span) bool { return !math.IsNaN(s.x) && strings.TrimSpace(s.text) != "" }
	// above: whether string b stands more than a line above string a.
	above := func(b, a *span) bool { return b.y-a.y > 0.4*max(a.size, b.size, 1) }
	// The last strings of the page, from the end (a foot holds at most maxFoot), and up: the
	// last of them that lies more than a line below the highest string after it.
	const maxFoot = 8 * footLines
	var last [maxFoot + 1]int
	n, up := 0, -1
	hi := -1 // the highest string from i on
	for i := len(spans) - 1; i > 0 && n < len(last); i-- {
		s := &spans[i]
		if !text(s) {
			continue
		}
		if !s.upright || s.rot != 0 || math.IsInf(s.x, 0) || math.IsNaN(s.y) || math.IsInf(s.y, 0) {
			return spans
		}
		if up < 0 && hi >= 0 && above(&spans[hi], s) {
			up = n
		}
		if hi < 0 || s.y > spans[hi].y {
			hi = i
		}
		last[n] = i
		n++
	}
	if up < 0 {
		return spans
	}
	// The foot starts at the last of those strings, up or before it, whose strings from there
	// on all lie below every string before it, one string at least (a page of a few lines is
	// no foot). low: the lowest baseline before last[n-1].
	low := math.Inf(1)
	for i := 0; i < last[n-1]; i++ {
		if s := &spans[i]; text(s) {
			if !s.upright || s.rot != 0 || math.IsInf(s.x, 0) || math.IsNaN(s.y) || math.IsInf(s.y, 0) {
				return spans
			}
			low = min(low, spans[i].y)
		}
	}
	var lows [maxFoot + 1]float64 // lows[k]: the lowest baseline before last[k]
	for k := n - 1; k >= 0; k-- {
		lows[k] = low
		low = min(low, spans[last[k]].y)
	}
	from := -1
	top := math.Inf(-1)
	for k := 0; k < n; k++ {
		top = max(top, spans[last[k]].y)
		if k >= up && top < lows[k] && !math.IsInf(lows[k], 1) {
			from = k
			break
		}
	}
	if from < 0 {
		return spans
	}
	// At most footLines lines.
	var ys [maxFoot + 1]float64
	for k := range from + 1 {
		ys[k] = spans[last[k]].y
	}
	slices.Sort(ys[:from+1])
	lines := 1
	for k := 1; k <= from; k++ {
		if ys[k]-ys[k-1] > 1 {
			lines++
		}
	}
	if lines > footLines {
		return spans
	}
	// The word breaks and blanks just before the foot go with it.
	at := last[from]
	for at > 0 && !text(&spans[at-1]) {
		at--
	}
	// Blocks: a string more than a line above the one before starts a block (and so do the
	// breaks and blanks before it).
	type block struct {
		start, end  int     // spans[start:end]
		top, bottom float64 // highest and lowest baseline
		size        float64 // largest size
	}
	var blocks [maxFoot + 1]block
	nb := 0
	prev := -1
	for i := at; i < len(spans); i++ {
		s := &spans[i]
		if !text(s) {
			continue
		}
		if prev < 0 || above(s, &spans[prev]) {
			start := i
			if prev < 0 {
				start = at
			} else {
				for start > prev+1 && !text(&spans[start-1]) {
					start--
				}
				blocks[nb-1].end = start
			}
			blocks[nb] = block{start: start, top: s.y, bottom: s.y, size: s.size}
			nb++
		}
		b := &blocks[nb-1]
		b.top, b.bottom, b.size = max(b.top, s.y), min(b.bottom, s.y), max(b.size, s.size)
		prev = i
	}
	blocks[nb-1].end = len(spans)
	// A block wholly above the one before it goes first (few blocks: a bubble sort).
	moved := false
	for pass := 0; pass < nb; pass++ {
		swapped := false
		for k := 1; k < nb; k++ {
			a, b := &blocks[k-1], &blocks[k]
			if b.bottom-a.top > 0.4*max(a.size, b.size, 1) {
				*a, *b = *b, *a
				swapped = true
			}
		}
		if !swapped {
			break
		}
		moved = true
	}
	if !moved {
		return spans
	}
	out := slices.Clone(spans[:at])
	for _, b := range blocks[:nb] {
		out = append(out, spans[b.start:b.end]...)
	}
	return out
}

// pageOrder returns spans in page order: lines top to bottom (strings whose baselines lie
// within 0.4 of their size of the line's first), each left to right. A word break goes with the
// string after it, blank text with the string before it.
func pageOrder(spans []span) []span {
	type unit struct{ x, y, size float64 }
	var units []unit
	owner := make([]int, len(spans)) // the unit of each span
	var pending []int                // word breaks waiting for the next string
	for i := range spans {
		s := &spans[i]
		switch {
		case math.IsNaN(s.x):
			pending = append(pending, i)
		case strings.TrimSpace(s.text) == "":
			if len(units) > 0 {
				owner[i] = len(units) - 1
			} else {
				pending = append(pending, i)
			}
		default:
			for _, p := range pending {
				owner[p] = len(units)
			}
			pending = pending[:0]
			owner[i] = len(units)
			units = append(units, unit{s.x, s.y, max(s.size, 1)})
		}
	}
	if len(units) == 0 {
		return spans
	}
	for _, p := range pending {
		owner[p] = len(units) - 1
	}
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(units[b].y, units[a].y) })
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && units[order[i]].y-units[order[j]].y <= 0.4*max(units[order[i]].size, units[order[j]].size) {
			j++
		}
		slices.SortStableFunc(order[i:j], func(a, b int) int { return cmpFloat(units[a].x, units[b].x) })
		i = j
	}
	rank := make([]int, len(units))
	for r, u := range order {
		rank[u] = r
	}
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank[owner[a]] - rank[owner[b]] })
	out := make([]span, len(spans))
	for i, k := range idx {
		out[i] = spans[k]
	}
	return out
}

// header returns how many of the rows above a table (the last rows of above) are its heading,
// set with narrower gaps between its columns than the gaps that found the table (a paper's
// heading cells wider than the numbers below them), and the table's gaps narrowed to let them
// in. A row above belongs to the heading when it lies no further above the next than a row
// at the table's end may (see table), none of its strings crosses a gap of the table whole or
// is as long as a line of running text (columnMinEm), and each gap keeps narrowGapEm at least;
// at most maxHeaderRows rows, and the top ones are left
// out while they fill one column only (a caption's short last line).
func (l *layout) header(above, rows []row, cols []interval) (int, []interval) {
	if len(above) == 0 || len(cols) == 0 {
		return 0, cols
	}
	far := max(farRowsEm*l.em, farPitches*medianPitch(rows))
	cur := slices.Clone(cols)
	next := make([]interval, len(cols))
	var filled []int // columns filled by each heading row, bottom up
	y := rows[0].y
	for r := len(above) - 1; r >= 0 && len(filled) < maxHeaderRows; r-- {
		if above[r].y-y > far {
			break
		}
		copy(next, cur)
		fits := true
		seen := make([]bool, len(cols)+1)
		for _, k := range above[r].items {
			it := &l.items[k]
			if it.x1-it.x0 >= columnMinEm*l.em {
				fits = false // a line of running text, no heading cell
			}
			for g := range next {
				switch gp := &next[g]; {
				case it.x1 <= gp.a || it.x0 >= gp.b:
				case it.x0 <= gp.a && it.x1 >= gp.b, it.x0 > gp.a && it.x1 < gp.b:
					fits = false // across a gap, or inside one
				case it.x0 <= gp.a:
					gp.a = it.x1
				default:
					gp.b = it.x0
				}
			}
		}
		for _, h := range next {
			fits = fits && h.b-h.a >= narrowGapEm*l.em
		}
		if !fits {
			break
		}
		for _, k := range above[r].items {
			seen[l.column(k, next)] = true
		}
		n := 0
		for _, s := range seen {
			if s {
				n++
			}
		}
		filled = append(filled, n)
		cur, next = next, cur
		y = above[r].y
	}
	h := len(filled)
	for h > 0 && filled[h-1] < 2 {
		h--
	}
	if h == 0 {
		return 0, cols
	}
	// The gaps as the rows kept narrow them.
	cur = slices.Clone(cols)
	for r := len(above) - h; r < len(above); r++ {
		for _, k := range above[r].items {
			it := &l.items[k]
			for g := range cur {
				switch gp := &cur[g]; {
				case it.x1 <= gp.a || it.x0 >= gp.b:
				case it.x0 <= gp.a:
					gp.a = it.x1
				default:
					gp.b = it.x0
				}
			}
		}
	}
	return h, cur
}
