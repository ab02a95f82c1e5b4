package docjob

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/text/encoding"
)

// span is one shown string with its position on the page (device space), where it ends
// horizontally (x plus its advance) and its font size. upright: the string runs left to right
// on a horizontal baseline (not a vertical font, not rotated), so its box is x..end.
type span struct {
	x, y, size float64
	end        float64
	text       string
	upright    bool
	// rest: a stretch after the first of a string split at wide runs of spaces (splitWide);
	// continuing a line, it counts as starting where the string does.
	rest bool
	// font is the font the string is shown in (nil for a word-gap mark).
	font *pageFont
	// vend: for a string in a vertical font or rotated, the height its glyphs end at (device
	// space).
	vend float64
	// rot: the string's baseline is turned a quarter up (1) or down (-1), 0 otherwise.
	rot int8
}

type mat [6]float64

var identity = mat{1, 0, 0, 1, 0, 0}

func (m mat) mul(n mat) mat {
	return mat{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// stopPage is the panic value that ends the walk of a content stream early (pageSpans recovers
// it): the context ended, or the page shows more text than is read.
type stopPage struct{ err error }

// maxPageSpans bounds the strings read from one page (a real page shows a few thousand): a
// content stream that expands to millions of text operators (a compression bomb) keeps its
// first maxPageSpans and memory stays bounded.
const maxPageSpans = 200_000

// errPageTooLarge ends a page that shows more than maxPageSpans strings, or has more annotations
// than are read (maxPageForms, annotBudget); the spans read so far are kept.
var errPageTooLarge = errors.New("the page shows more text than JobDesk reads")

// textState is the part of the graphics state that places text (PDF 32000 §9.3): q saves it
// and Q restores it with the transformation matrix.
type textState struct {
	ctm       mat
	font      *pageFont
	size      float64 // Tfs
	leading   float64 // TL
	charSpace float64 // Tc, added to every glyph's advance
	wordSpace float64 // Tw, added to the advance of each single-byte code 32
	scale     float64 // Tz/100, horizontal scaling of advances
}

// kern is a TJ number inside a string shown as one: it moves the glyph at byte offset at by dx
// (text space, scaled by Tz).
type kern struct {
	at int
	dx float64
}

// pageSpans walks a page's content stream, tracking the graphics and text matrices, and returns
// the strings it shows in stream order. Glyphs advance as PDF 32000 §9.4.4 says: by their
// width times the font size, plus the character spacing (Tc), plus the word spacing (Tw) for a
// single-byte code 32, all scaled horizontally by Tz, and TJ's numbers move the next glyph. A
// string whose wide runs of spaces stand for gaps between columns or cells is shown as several
// spans, one per stretch of text (see splitWide). pageSpans checks ctx every 1024 operators and
// stops with ctx's error, so a page of millions of operators does not run on past the deadline.
// It panics on malformed content (callers recover). docFonts keeps the fonts read on earlier pages
// of the document (nil: none kept).
func pageSpans(ctx context.Context, p pdf.Page, docFonts fontCache) (out []span, err error) {
	return pageSpansIn(ctx, p, p.Resources(), docFonts, nil)
}

// annotBudget bounds the time the annotations of one document may take to read, in all. The
// PDF library reads an object kept in a compressed object stream from the stream's start each
// time, so a page of 32,768 link annotations in one stream took 30 s only to learn that none is
// a form field. Once it is spent, the pages whose annotations were not all read are truncated
// (their text is kept; the document is partial, naming them).
var annotBudget = time.Second

// annotClock is the time a document's annotations have taken so far, against annotBudget.
type annotClock struct{ spent time.Duration }

// pageSpansIn is pageSpans for a page whose resources (its own or inherited) are res. clock
// counts the time the document's annotations take (nil: this page's alone). A page with more
// annotations than maxPageForms, or whose annotations outlast annotBudget, keeps the strings
// read and ends with errPageTooLarge.
func pageSpansIn(ctx context.Context, p pdf.Page, res pdf.Value, docFonts fontCache, clock *annotClock) (out []span, err error) {
	if p.V.IsNull() || (p.V.Key("Contents").Kind() == pdf.Null && p.V.Key("Annots").Kind() == pdf.Null) {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			st, ok := r.(stopPage)
			if !ok {
				panic(r)
			}
			err = st.err
		}
	}()
	ops := 0
	fonts := map[string]*pageFont{} // by resource name
	pres := pageFonts{res: res}
	ts := textState{ctm: identity, size: 1, scale: 1}
	tm, tlm := identity, identity
	var stack []textState
	add := func(s span) {
		out = append(out, s)
		if len(out) >= maxPageSpans {
			panic(stopPage{errPageTooLarge})
		}
	}
	// show shows raw, a string of codes (several of a TJ array when kerns are its numbers
	// between them), and moves the text matrix on by its advance.
	var show func(raw string, kerns []kern)
	show = func(raw string, kerns []kern) {
		enc := ts.font
		if enc == nil || raw == "" {
			return
		}
		track := ts.charSpace // in vertical writing a negative spacing moves glyphs apart
		if enc.vertical {
			track = -track
		}
		if ts.size != 0 && track/math.Abs(ts.size) >= wideTracking {
			if n := enc.codeLen(raw); n > 0 && n < len(raw) {
				showSpaced(raw, kerns, enc, func(code string) { show(code, nil) }, func(d float64) {
					if enc.vertical {
						tm = mat{1, 0, 0, 1, 0, d}.mul(tm)
					} else {
						tm = mat{1, 0, 0, 1, d, 0}.mul(tm)
					}
				}, func() {
					out = append(out, span{x: math.NaN(), size: track / math.Abs(ts.size), font: enc})
				})
				return
			}
		}
		s := enc.decode(raw)
		m := tm.mul(ts.ctm)
		adv, vadv, vglyphs := 0.0, 0.0, 0.0
		if enc.vertical {
			// Vertical writing: each glyph moves down by the font's vertical advance (DW2), plus
			// the spacings, and TJ's numbers move the next glyph (PDF 32000 §9.4.4).
			_, codes, spaces := enc.metrics(raw, s)
			vglyphs = float64(codes) * enc.vy * ts.size // the glyphs' own extent, without spacing
			vadv = vglyphs + float64(codes)*ts.charSpace + float64(spaces)*ts.wordSpace
			for _, k := range kerns {
				vadv += k.dx
			}
			if vadv != 0 {
				tm = mat{1, 0, 0, 1, 0, vadv}.mul(tm)
			}
		} else {
			w, codes, spaces := enc.metrics(raw, s)
			adv = (w*ts.size + float64(codes)*ts.charSpace + float64(spaces)*ts.wordSpace) * ts.scale
			for _, k := range kerns {
				adv += k.dx
			}
			if adv != 0 {
				tm = mat{1, 0, 0, 1, adv, 0}.mul(tm)
			}
		}
		if s == "" {
			return
		}
		size := ts.size * math.Hypot(m[2], m[3])
		end := m[4] + adv*math.Hypot(m[0], m[1])
		upright := !enc.vertical && m[0] > 0 && m[3] > 0 && math.Abs(m[1]) <= 0.01*m[0]
		if upright && strings.Contains(s, "  ") && splitWide(&ts, m, size, raw, kerns, add) {
			return
		}
		var rot int8
		vend := m[5] + vglyphs*m[3]
		if !enc.vertical && math.Abs(m[1]) > 2*math.Abs(m[0]) {
			rot = int8(math.Copysign(1, m[1]))
			vend = m[5] + adv*m[1] // the baseline runs up or down the page
		}
		add(span{x: m[4], y: m[5], size: size, end: end, text: s, upright: upright, font: enc, vend: vend, rot: rot})
	}
	num := func(v operand) float64 { return v.num }
	nextLine := func() {
		tlm = mat{1, 0, 0, 1, 0, -ts.leading}.mul(tlm)
		tm = tlm
	}
	var kerns []kern
	forms, formDepth := 0, 0
	var handle func(op string, args []operand)
	// drawForm interprets the content of the form XObject (or annotation appearance) xo, drawn
	// with the extra matrix m, in a graphics state of its own.
	drawForm := func(xo pdf.Value, m mat) {
		if forms >= maxPageForms || formDepth >= maxFormDepth {
			return
		}
		forms++
		formDepth++
		savedTS, savedTm, savedTlm, savedStack, savedFonts, savedRes := ts, tm, tlm, stack, fonts, pres
		if mx := xo.Key("Matrix"); mx.Len() == 6 {
			m = mat{mx.Index(0).Float64(), mx.Index(1).Float64(), mx.Index(2).Float64(),
				mx.Index(3).Float64(), mx.Index(4).Float64(), mx.Index(5).Float64()}.mul(m)
		}
		ts.ctm = m.mul(ts.ctm)
		stack = nil
		if r := xo.Key("Resources"); r.Kind() == pdf.Dict {
			fonts, pres = map[string]*pageFont{}, pageFonts{res: r}
		}
		interpretContent(xo.Reader(), handle)
		ts, tm, tlm, stack, fonts, pres = savedTS, savedTm, savedTlm, savedStack, savedFonts, savedRes
		formDepth--
	}
	handle = func(op string, args []operand) {
		if ops++; ops&1023 == 0 && ctx.Err() != nil {
			panic(stopPage{ctx.Err()})
		}
		n := len(args)
		switch op {
		case "q":
			if len(stack) < 1024 {
				stack = append(stack, ts)
			}
		case "Q":
			if len(stack) > 0 {
				ts = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case "cm":
			if n == 6 {
				ts.ctm = mat{num(args[0]), num(args[1]), num(args[2]), num(args[3]), num(args[4]), num(args[5])}.mul(ts.ctm)
			}
		case "BT":
			tm, tlm = identity, identity
		case "Tf":
			if n == 2 {
				name := args[0].name()
				f, ok := fonts[name]
				if !ok {
					f = docFonts.font(&pres, name)
					fonts[name] = f
				}
				ts.font = f
				ts.size = num(args[1])
			}
		case "TL":
			if n == 1 {
				ts.leading = num(args[0])
			}
		case "Tc":
			if n == 1 {
				ts.charSpace = num(args[0])
			}
		case "Tw":
			if n == 1 {
				ts.wordSpace = num(args[0])
			}
		case "Tz":
			if n == 1 {
				ts.scale = num(args[0]) / 100
			}
		case "Td", "TD":
			if n == 2 {
				tx, ty := num(args[0]), num(args[1])
				if op == "TD" {
					ts.leading = -ty
				}
				tlm = mat{1, 0, 0, 1, tx, ty}.mul(tlm)
				tm = tlm
			}
		case "Tm":
			if n == 6 {
				tlm = mat{num(args[0]), num(args[1]), num(args[2]), num(args[3]), num(args[4]), num(args[5])}
				tm = tlm
			}
		case "Do":
			if n == 1 {
				xo := pres.res.Key("XObject").Key(args[0].name())
				if xo.Kind() == pdf.Stream && xo.Key("Subtype").Name() == "Form" {
					drawForm(xo, identity)
				}
			}
		case "T*":
			nextLine()
		case "Tj":
			if n == 1 {
				show(args[0].string(), nil)
			}
		case "'":
			nextLine()
			if n == 1 {
				show(args[0].string(), nil)
			}
		case "\"":
			if n == 3 {
				ts.wordSpace, ts.charSpace = num(args[0]), num(args[1])
			}
			nextLine()
			if n >= 1 {
				show(args[n-1].string(), nil)
			}
		case "TJ":
			if n == 1 {
				var b strings.Builder
				kerns = kerns[:0]
				for _, x := range args[0].arr {
					if x.kind == opString {
						b.Write(x.bytes)
						continue
					}
					if x.kind != opNumber {
						continue
					}
					// A large negative kerning is a gap between words: from a quarter em always,
					// from tjWordGap em between Latin letters (a tightly set line, where the
					// spaces are only moves), judged again when the lines are joined.
					if gap := -x.num / 1000; b.Len() > 0 && (ts.font == nil || !ts.font.vertical) && (gap > 0.25 || gap >= latinSpaceGap(ts.font) && !endsCJK(ts.font, b.String())) {
						show(b.String(), kerns)
						b.Reset()
						kerns = kerns[:0]
						out = append(out, span{x: math.NaN(), size: gap, font: ts.font})
					}
					if ts.font == nil {
						continue
					}
					if ts.font.vertical {
						dy := -x.num / 1000 * ts.size
						if b.Len() == 0 {
							tm = mat{1, 0, 0, 1, 0, dy}.mul(tm)
						} else {
							kerns = append(kerns, kern{b.Len(), dy})
						}
						continue
					}
					dx := -x.num / 1000 * ts.size * ts.scale
					if b.Len() == 0 {
						// the number moves the next string
						tm = mat{1, 0, 0, 1, dx, 0}.mul(tm)
					} else {
						kerns = append(kerns, kern{b.Len(), dx})
					}
				}
				show(b.String(), kerns)
			}
		}
	}
	if p.V.Key("Contents").Kind() != pdf.Null {
		interpretContent(contentReader(p.V.Key("Contents")), handle)
	}
	// Filled-in form fields and text boxes are drawn by their annotations' appearances. Each
	// one's strings are read where it sits on the page (placeAnnot), not after the page's
	// text: a field's value beside its label.
	annots := p.V.Key("Annots")
	content := len(out)
	var chunks [][2]int // where each annotation's strings start and end in out
	if clock == nil {
		clock = &annotClock{}
	}
	cut := annots.Len() > maxPageForms
	began := time.Now()
	for i := 0; i < annots.Len() && i < maxPageForms; i++ {
		if clock.spent+time.Since(began) > annotBudget {
			cut = true
			break
		}
		a := annots.Index(i)
		if st := a.Key("Subtype").Name(); st != "Widget" && st != "FreeText" {
			continue
		}
		if a.Key("F").Int64()&(2|32) != 0 { // hidden, no view
			continue
		}
		ap := a.Key("AP").Key("N")
		if ap.Kind() == pdf.Dict {
			ap = ap.Key(a.Key("AS").Name())
		}
		rect, bbox := a.Key("Rect"), ap.Key("BBox")
		if ap.Kind() != pdf.Stream || rect.Len() != 4 || bbox.Len() != 4 {
			continue
		}
		rx0, ry0 := math.Min(rect.Index(0).Float64(), rect.Index(2).Float64()), math.Min(rect.Index(1).Float64(), rect.Index(3).Float64())
		// The appearance's box as its own matrix places it (drawForm applies the matrix; the
		// box so placed is mapped onto the annotation's rectangle).
		bx0, by0, bx1, by1 := formBox(ap, bbox)
		sx, sy := 1.0, 1.0
		if bw, rw := bx1-bx0, math.Abs(rect.Index(2).Float64()-rect.Index(0).Float64()); bw > 0 && rw > 0 {
			sx = rw / bw
		}
		if bh, rh := by1-by0, math.Abs(rect.Index(3).Float64()-rect.Index(1).Float64()); bh > 0 && rh > 0 {
			sy = rh / bh
		}
		ts = textState{ctm: identity, size: 1, scale: 1}
		tm, tlm, stack = identity, identity, nil
		fonts, pres = map[string]*pageFont{}, pageFonts{res: res}
		from := len(out)
		drawForm(ap, mat{sx, 0, 0, sy, rx0 - bx0*sx, ry0 - by0*sy})
		if len(out) > from {
			chunks = append(chunks, [2]int{from, len(out)})
		}
	}
	clock.spent += time.Since(began)
	out = placeAnnots(out, content, chunks)
	if cut {
		return out, errPageTooLarge
	}
	return out, nil
}

// formBox is the box bbox of the form XObject xo as xo's matrix places it: the smallest
// upright rectangle holding its four corners so transformed (the box itself when xo has no
// matrix).
func formBox(xo, bbox pdf.Value) (x0, y0, x1, y1 float64) {
	b := [4]float64{bbox.Index(0).Float64(), bbox.Index(1).Float64(), bbox.Index(2).Float64(), bbox.Index(3).Float64()}
	m := identity
	if mx := xo.Key("Matrix"); mx.Len() == 6 {
		for i := range m {
			m[i] = mx.Index(i).Float64()
		}
	}
	x0, y0, x1, y1 = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range [4][2]float64{{b[0], b[1]}, {b[2], b[1]}, {b[0], b[3]}, {b[2], b[3]}} {
		x, y := m[0]*c[0]+m[2]*c[1]+m[4], m[1]*c[0]+m[3]*c[1]+m[5]
		x0, y0, x1, y1 = math.Min(x0, x), math.Min(y0, y), math.Max(x1, x), math.Max(y1, y)
	}
	return x0, y0, x1, y1
}

// placeAnnots returns spans with each chunk of annotation strings (spans[c[0]:c[1]], all after
// the page's own strings spans[:content]) moved to where it sits on the page: after the last
// of the page's strings, in stream order, that lies before it in reading order (above it, or
// on its line to its left). An annotation before all of them goes first; one whose place cannot
// be told (no position, turned text) stays at the end.
func placeAnnots(spans []span, content int, chunks [][2]int) []span {
	if len(chunks) == 0 || content == 0 {
		return spans
	}
	at := make([]int, len(chunks)) // the page string each chunk follows (-1: none)
	moved := false
	for i, c := range chunks {
		at[i] = content - 1
		var a *span
		for k := c[0]; k < c[1]; k++ {
			if s := &spans[k]; !math.IsNaN(s.x) && strings.TrimSpace(s.text) != "" {
				a = s
				break
			}
		}
		if a == nil || !a.upright || math.IsNaN(a.y) || math.IsInf(a.y, 0) || math.IsInf(a.x, 0) {
			continue
		}
		at[i] = -1
		for k := content - 1; k >= 0; k-- {
			s := &spans[k]
			if math.IsNaN(s.x) || !s.upright || strings.TrimSpace(s.text) == "" {
				continue
			}
			if line := sameLine(a, s); !line && s.y > a.y || line && s.x <= a.x {
				at[i] = k
				break
			}
		}
		moved = moved || at[i] != content-1
	}
	if !moved {
		return spans
	}
	out := make([]span, 0, len(spans))
	k := 0
	emit := func(upto int) { // the page's strings up to and including upto
		for ; k <= upto; k++ {
			out = append(out, spans[k])
		}
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return at[x] - at[y] })
	for _, i := range order {
		emit(at[i])
		out = append(out, spans[chunks[i][0]:chunks[i][1]]...)
	}
	emit(content - 1)
	return out
}

// sameLine reports whether strings a and b stand on one line: their baselines lie within 0.4
// of a's size, or the middle of one's letters lies inside the other's (a small field's value
// centred beside a large heading).
func sameLine(a, b *span) bool {
	if math.Abs(a.y-b.y) <= 0.4*max(a.size, 1) {
		return true
	}
	inside := func(s, t *span) bool { // the middle of s inside t
		m := s.y + 0.3*max(s.size, 0)
		return m >= t.y && m <= t.y+0.7*max(t.size, 0)
	}
	return inside(a, b) || inside(b, a)
}

// wideTracking is the character spacing (Tc), in ems, from which every glyph of a string is a
// word of its own: table cells drawn as one string spread out by Tc ("XX" with 5 em between),
// letters set far apart down a vertical line, as pdftotext sees them. Letter-spaced headings
// stay under it.
const wideTracking = 0.5

// showSpaced shows raw code by code (one code a call of one), each code's kerns moving it first
// (move), a word gap (gap) between codes.
func showSpaced(raw string, kerns []kern, f *pageFont, one func(string), move func(float64), gap func()) {
	k := 0
	for at := 0; at < len(raw); {
		n := f.codeLen(raw[at:])
		if n <= 0 {
			n = len(raw) - at
		}
		if at > 0 {
			gap()
		}
		for k < len(kerns) && kerns[k].at <= at {
			move(kerns[k].dx)
			k++
		}
		one(raw[at : at+n])
		at += n
	}
}

// Form XObjects: a page draws at most maxPageForms of them (and annotation appearances), nested
// at most maxFormDepth deep (a form that draws itself stops there).
const (
	maxPageForms = 4096
	maxFormDepth = 8
)

// splitWide shows raw (its text has two spaces in a row), drawn with the text rendering matrix
// m at the device font size size, as one span per stretch of text between wide runs of spaces:
// runs of two spaces or more at least gutterEm wide, the way a page drawn one string per row
// pads the gap between two columns or two table cells. Each span's box (x..end) holds its
// stretch's glyphs only, so the layout sees the gap; its text keeps the spaces around it (a run
// in the middle ends the span before it, a run at the start begins the first one), so the
// page's text is the same wherever the layout finds no columns. It returns false, having added
// nothing, when raw has no wide run or the font's codes cannot be told apart.
func splitWide(ts *textState, m mat, size float64, raw string, kerns []kern, add func(span)) bool {
	f := ts.font
	type glyph struct {
		at         int     // byte offset in raw
		width      float64 // in ems, from the font (0: unknown)
		start, end float64 // where its advance starts and ends in text space, from raw's start
		text       string
		space      bool // the code's text is one space
		single     bool // a single-byte code: word spacing applies to code 32
		wide       bool // in a wide run of spaces
	}
	var glyphs []glyph
	known := false // the font gives the width of some code (else all are estimated)
	for at := 0; at < len(raw); {
		n := f.codeLen(raw[at:])
		if n <= 0 {
			return false
		}
		code := raw[at : at+n]
		t := f.decode(code)
		w, ok := f.codeWidth(code)
		known = known || ok
		glyphs = append(glyphs, glyph{at: at, width: w, text: t, space: t == " ", single: n == 1})
		at += n
	}
	off := 0.0
	k := 0
	for i := range glyphs {
		g := &glyphs[i]
		for k < len(kerns) && kerns[k].at <= g.at {
			off += kerns[k].dx
			k++
		}
		w := g.width
		if !known {
			w = estimateWidth(g.text)
		}
		dx := w*ts.size + ts.charSpace
		if g.single && g.space {
			dx += ts.wordSpace
		}
		g.start, g.end = off, off+dx*ts.scale
		off = g.end
	}
	xs := math.Hypot(m[0], m[1])
	found := false
	for i := 0; i < len(glyphs); {
		if !glyphs[i].space {
			i++
			continue
		}
		j := i
		for j < len(glyphs) && glyphs[j].space {
			j++
		}
		if j-i >= 2 && (glyphs[j-1].end-glyphs[i].start)*xs >= gutterEm*size {
			for g := i; g < j; g++ {
				glyphs[g].wide = true
			}
			found = true
		}
		i = j
	}
	if !found {
		return false
	}
	// The stretches of text between wide runs, each a span: its box from its first glyph to
	// its last, its text through the run after it (the first one's from the string's start).
	var stretches [][2]int // first and last glyph
	for i := 0; i < len(glyphs); {
		if glyphs[i].wide {
			i++
			continue
		}
		j := i
		for j+1 < len(glyphs) && !glyphs[j+1].wide {
			j++
		}
		stretches = append(stretches, [2]int{i, j})
		i = j + 1
	}
	if len(stretches) == 0 {
		return false // spaces only
	}
	for k, st := range stretches {
		from, to := glyphs[st[0]].at, len(raw)
		if k == 0 {
			from = 0
		}
		if k+1 < len(stretches) {
			to = glyphs[stretches[k+1][0]].at
		}
		lo, hi := st[0], st[1]
		for glyphs[lo].space {
			lo++
		}
		for glyphs[hi].space {
			hi--
		}
		x0, x1 := glyphs[lo].start, glyphs[hi].end
		add(span{x: m[4] + x0*m[0], y: m[5] + x0*m[1], size: size, end: m[4] + x1*m[0],
			text: f.decode(raw[from:to]), upright: true, rest: k > 0, font: f})
	}
	return true
}

// spansText joins spans into lines. Stream order is kept as the reading order (producers write
// columns one after the other), and a span continues the current line when it sits on the same
// baseline to the right (horizontal writing) or in the same column below (vertical writing), so
// runs split by font changes, such as digits inside Japanese, stay on one line.
func spansText(spans []span) string {
	var b bytes.Buffer
	var lx, ly, lsize float64
	lrunes := 0
	have := false
	vertical := false
	pendingSpace := false
	var pendingGap float64 // the widest TJ gap since the last string, in ems
	var pendingFont, lastFont *pageFont
	var lend, lvend float64
	lastVertical := false // the last string is in a vertical font
	var lastRot int8
	var lastRune rune
	// A line with right-to-left letters is gathered as segments and written in visual order
	// (left to right) when it ends, whatever order its strings were drawn in: logicalOrder
	// then turns it round. lineStart is where the current line starts in b, lleft its
	// leftmost x.
	var segs []rtlSeg
	lineStart := 0
	var lleft float64
	flush := func() {
		if segs == nil {
			return
		}
		writeRTLSegs(&b, segs)
		segs = nil
	}
	for _, s := range spans {
		if math.IsNaN(s.x) {
			pendingSpace = true
			pendingGap, pendingFont = math.Max(pendingGap, s.size), s.font
			continue
		}
		size := s.size
		if size <= 0 || math.IsNaN(size) || math.IsInf(size, 0) {
			size = 10
		}
		tol := math.Max(size, lsize) * 0.6
		cont := false
		sVertical := s.font != nil && s.font.vertical
		flat := s.upright && s.rot == 0 && !sVertical
		if segs != nil {
			if flat && math.Abs(s.y-ly) <= tol && len(segs) < maxRTLSegs && !overlapsSegs(segs, s, size) {
				segs = append(segs, rtlSeg{x: s.x, end: s.end, size: size, text: s.text, space: pendingSpace && pendingGap > 0.25})
				pendingSpace, pendingGap = false, 0
				continue
			}
			flush()
			lastRot, lastVertical = 0, false
			lx = math.Inf(1) // a new line
		}
		if have {
			dy, dx := s.y-ly, s.x-lx
			switch {
			case s.rot != 0 || lastRot != 0:
				// A turned string continues only a line turned the same way, along it.
				if along := float64(s.rot) * (s.y - lvend); s.rot == lastRot && math.Abs(dx) <= tol && along > -tol/2 && along < 1.5*size {
					cont = true
					if along > size*spaceGap(lastFont, lastRune, s.text) {
						pendingSpace, pendingGap = true, 1
					}
				}
			case sVertical || lastVertical:
				// A vertical font's strings continue only their own column, below the last
				// (tight tracking may overlap it a little).
				if sVertical && lastVertical && math.Abs(dx) <= tol && s.y-lvend < 0.6*size && s.y-lvend > -1.6*size {
					cont, vertical = true, true
				}
			case math.Abs(dy) <= tol && dx >= -tol/2 && !vertical:
				cont = true
			case math.Abs(dx) <= tol && dy < -size*0.3 && dy > -1.6*size && (vertical || (runeLen(s.text) <= 2 && lrunes <= 2)):
				cont, vertical = true, true
			}
		}
		if cont && segs == nil && lastRune == ' ' && lend > 0 && s.x < lend-0.1*size && b.Len() > 1 {
			// A space the next string is drawn over, between CJK characters (a producer that
			// shows each character followed by a space and places the next one on it): no gap.
			prev, _ := utf8.DecodeLastRune(b.Bytes()[:b.Len()-1])
			if first, _ := utf8.DecodeRuneInString(s.text); isJapanese(prev) && isJapanese(first) {
				b.Truncate(b.Len() - 1)
				lastRune = prev
			}
		}
		if cont {
			gap := !vertical && lend > 0 && s.x-lend > size*spaceGap(lastFont, lastRune, s.text)
			if pendingSpace && pendingGap <= 0.25 && pendingGap < spaceGap(pendingFont, lastRune, s.text) {
				pendingSpace = false // a kerning between letters, not a word gap
			}
			if (pendingSpace || gap) && lastRune != ' ' && !strings.HasPrefix(s.text, " ") {
				b.WriteByte(' ')
			}
		} else if have {
			b.WriteByte('\n')
			vertical = false
		}
		if !cont {
			lineStart, lleft = b.Len(), s.x
		}
		lleft = math.Min(lleft, s.x)
		pendingSpace, pendingGap = false, 0
		b.WriteString(s.text)
		if flat && !vertical && hasRTL(s.text) {
			// the line so far (left to right) is its first segment
			line := b.String()[lineStart:]
			segs = []rtlSeg{{x: lleft, end: s.end, size: size, text: line}}
			if s.end <= s.x {
				segs[0].end = 0
			}
			b.Truncate(lineStart)
		}
		if !s.rest || !cont {
			lx = s.x
		}
		ly, lsize, have, lrunes = s.y, size, true, runeLen(s.text)
		lend = s.end
		if s.end <= s.x {
			lend = 0 // no advance known
		}
		lastRune, _ = utf8.DecodeLastRuneInString(s.text)
		lastFont = s.font
		lastVertical, lvend, lastRot = sVertical, s.vend, s.rot
	}
	flush()
	return b.String()
}

// rtlSeg is a string of a line holding right-to-left letters: where it starts and ends (end 0:
// unknown), its font size, its text, and whether a TJ word gap came before it.
type rtlSeg struct {
	x, end, size float64
	text         string
	space        bool
}

// latinOnly reports whether s holds a letter or digit and no right-to-left letter: a word such
// as "Python" inside a right-to-left line, which the line's words stand apart from (a producer
// may draw its space on the wrong side).
func latinOnly(s string) bool {
	has := false
	for _, r := range s {
		if isRTL(r) {
			return false
		}
		has = has || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return has
}

// maxRTLSegs bounds the strings of one right-to-left line (a longer one goes on as a new line).
const maxRTLSegs = 1024

// overlapsSegs reports whether s covers a stretch of the line that one of its strings already
// covers (by more than a third of an em): the words of one line lie side by side, so s starts
// a new line (a producer that draws each line from the same left edge).
func overlapsSegs(segs []rtlSeg, s span, size float64) bool {
	if !(s.end > 0) {
		return false
	}
	a0, a1 := math.Min(s.x, s.end), math.Max(s.x, s.end)
	for _, g := range segs {
		if !(g.end > 0) {
			continue
		}
		b0, b1 := math.Min(g.x, g.end), math.Max(g.x, g.end)
		if math.Min(a1, b1)-math.Max(a0, b0) > size/3 {
			return true
		}
	}
	return false
}

// writeRTLSegs writes a line's segments left to right, a space between two that a gap parts.
func writeRTLSegs(b *bytes.Buffer, segs []rtlSeg) {
	slices.SortStableFunc(segs, func(a, c rtlSeg) int {
		switch {
		case a.x < c.x:
			return -1
		case a.x > c.x:
			return 1
		}
		return 0
	})
	for i, sg := range segs {
		if i > 0 {
			p := segs[i-1]
			gap := sg.space || p.end > 0 && sg.x-p.end > 0.15*math.Max(sg.size, p.size) ||
				latinOnly(p.text) && hasRTL(sg.text) || hasRTL(p.text) && latinOnly(sg.text)
			if gap && !strings.HasSuffix(p.text, " ") && !strings.HasPrefix(sg.text, " ") {
				b.WriteByte(' ')
			}
		}
		b.WriteString(sg.text)
	}
}

// wordGap is the horizontal gap, in ems of the font size, from which a string after the
// character r is a separate word: 0.15 em between Latin words (a space is about 0.25 em;
// letters sit closer than 0.1 em); next to Japanese only a gap of half an em, since Japanese
// typesetting leaves a quarter em between Japanese and Latin characters that is no space; and
// between two Japanese characters only a gap no spacing makes (1.5 em: table cells, not
// characters placed one by one).
func wordGap(r rune, s string) float64 {
	first, _ := utf8.DecodeRuneInString(s)
	switch a, b := isJapanese(r), isJapanese(first); {
	case a && b:
		return 1.5
	case a || b:
		return 0.5
	}
	return 0.15
}

// tjWordGap is the narrowest move between two strings of a TJ array, in ems, that can be a
// word gap (LaTeX sets interword spaces as moves of 0.2–0.35 em; kerning between letters stays
// under 0.07 em).
const tjWordGap = 0.1

// spaceGap is the move, in ems, from which a TJ gap after the character r before s is a space:
// between Latin characters latinSpaceGap, next to CJK text the wider gaps of wordGap.
func spaceGap(f *pageFont, r rune, s string) float64 {
	if g := wordGap(r, s); g > 0.15 {
		return g
	}
	return latinSpaceGap(f)
}

// latinSpaceGap is the narrowest word gap between Latin letters in font f, in ems: half the
// font's own space width (between tjWordGap and 0.3 em), or 0.15 em when it gives none, as
// pdftotext weighs a gap against the font's space.
func latinSpaceGap(f *pageFont) float64 {
	if f != nil && f.spaceEm > 0 {
		return math.Min(0.3, math.Max(tjWordGap, f.spaceEm/2))
	}
	return 0.15
}

// endsCJK reports whether the codes raw of font f end in a CJK character.
func endsCJK(f *pageFont, raw string) bool {
	if f == nil || raw == "" {
		return false
	}
	n := 1
	if f.width > 0 {
		n = f.width
	} else if f.predef != nil {
		n = min(2, len(raw))
	}
	if n > len(raw) {
		n = len(raw)
	}
	r, _ := utf8.DecodeLastRuneInString(f.decode(raw[len(raw)-n:]))
	return isJapanese(r) || (r >= 0xAC00 && r <= 0xD7A3)
}

func isJapanese(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF) || r == 'ー'
}

func runeLen(s string) int { return len([]rune(s)) }

// pageFont decodes the strings a font shows and measures their advances. Its encoder (a
// parsed ToUnicode CMap for most Japanese fonts) is built once, not at every Tf, and the text of
// each character code is remembered, since a CMap lookup scans the map's ranges.
type pageFont struct {
	enc pdf.TextEncoding
	// width is the bytes per code: 1 in a simple font (TrueType, Type1, Type3), 2 in a CID font
	// with Identity-H/V; 0: given by predef (a predefined CMap) or unknown.
	width  int
	predef *predefinedEncoding
	codes  map[string]string // the text of each code, when width > 0 and the memo is on
	// vertical: the font writes top to bottom (an -V encoding); strings do not advance x.
	vertical bool
	// name is the font's BaseFont without a subset tag; symbol: it is a symbol font (its
	// private-use code points are pictures); cjk: a Chinese, Japanese or Korean font (a CJK
	// character collection or predefined CMap); undecodable: no source of its text is known.
	name                     string
	symbol, cjk, undecodable bool
	// Glyph advances in thousandths of an em: widths[code-first] of a simple font, cidWidths
	// (from W) or dw of a CID font; 0 where unknown, estimated from the text.
	first     int
	widths    []float64
	cidWidths map[int]float64
	dw        float64
	spaceEm   float64 // the width of a simple font's space (code 32) in ems, 0 when not given
	// codepage: a simple CJK font, not embedded, with no ToUnicode, whose strings are text in
	// this code page (see decode); nil otherwise.
	codepage encoding.Encoding
	vy       float64 // a vertical font's advance in ems (DW2's second number; -1 by default)
}

// metrics measures raw (its text s) for its advance: the sum of its glyphs' widths in ems, from
// the font's widths when it has them, else estimated from the characters (a full-width
// character 1 em, others half); the number of codes (each takes the character spacing); and the
// number of single-byte codes 32 (each takes the word spacing).
func (f *pageFont) metrics(raw, s string) (w float64, codes, spaces int) {
	switch {
	case len(f.widths) > 0:
		known := false
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if c == ' ' {
				spaces++
			}
			if k := int(c) - f.first; k >= 0 && k < len(f.widths) {
				w += f.widths[k]
				known = true
			}
		}
		if known {
			return w / 1000, len(raw), spaces
		}
		return estimateWidth(s), len(raw), spaces
	case f.width == 2 && (f.dw > 0 || len(f.cidWidths) > 0):
		for i := 0; i+1 < len(raw); i += 2 {
			cw, ok := f.cidWidths[int(raw[i])<<8|int(raw[i+1])]
			if !ok {
				cw = f.dw
			}
			w += cw
		}
		return w / 1000, len(raw) / 2, 0
	case f.width > 0:
		if f.width == 1 {
			spaces = strings.Count(raw, " ")
		}
		return estimateWidth(s), len(raw) / f.width, spaces
	case f.predef != nil:
		for i := 0; i < len(raw); {
			n := f.predef.codeLen(raw[i:])
			if n == 1 && raw[i] == ' ' {
				spaces++
			}
			codes++
			i += n
		}
		return estimateWidth(s), codes, spaces
	}
	return estimateWidth(s), utf8.RuneCountInString(s), 0
}

// codeLen is the length in bytes of the code at the start of s (not empty), or 0 when the font's
// codes cannot be told apart.
func (f *pageFont) codeLen(s string) int {
	switch {
	case f.width > 0:
		return min(f.width, len(s))
	case f.predef != nil:
		return f.predef.codeLen(s)
	}
	return 0
}

// codeWidth is the width in ems of the glyph of code, and whether the font gives it.
func (f *pageFont) codeWidth(code string) (float64, bool) {
	switch {
	case len(f.widths) > 0:
		if k := int(code[0]) - f.first; len(code) == 1 && k >= 0 && k < len(f.widths) {
			return f.widths[k] / 1000, true
		}
	case f.width == 2 && len(code) == 2 && (f.dw > 0 || len(f.cidWidths) > 0):
		cw, ok := f.cidWidths[int(code[0])<<8|int(code[1])]
		if !ok {
			cw = f.dw
		}
		return cw / 1000, true
	}
	return 0, false
}

// estimateWidth is the advance of s in ems for a font without widths: a full-width (Japanese)
// character 1 em, others half.
func estimateWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		if isJapanese(r) {
			w++
		} else {
			w += 0.5
		}
	}
	return w
}

// readWidths fills f's advances from a simple font's FirstChar/Widths or a CID font's DW/W.
func (f *pageFont) readWidths(v pdf.Value) {
	if w := v.Key("Widths"); w.Kind() == pdf.Array {
		f.first = int(v.Key("FirstChar").Int64())
		n := min(w.Len(), 256)
		f.widths = make([]float64, n)
		for i := 0; i < n; i++ {
			f.widths[i] = w.Index(i).Float64()
		}
		if k := 32 - f.first; k >= 0 && k < n && f.widths[k] > 0 {
			f.spaceEm = f.widths[k] / 1000
		}
		return
	}
	desc := v.Key("DescendantFonts").Index(0)
	if desc.IsNull() {
		return
	}
	f.dw = 1000
	if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		f.dw = dw.Float64()
	}
	w := desc.Key("W")
	for i, budget := 0, 1<<16; i < w.Len() && budget > 0; {
		c := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			if f.cidWidths == nil {
				f.cidWidths = map[int]float64{}
			}
			for k := 0; k < next.Len() && budget > 0; k++ {
				f.cidWidths[c+k] = next.Index(k).Float64()
				budget--
			}
			i += 2
			continue
		}
		c2, wd := int(w.Index(i+1).Int64()), w.Index(i+2).Float64()
		if f.cidWidths == nil {
			f.cidWidths = map[int]float64{}
		}
		for k := c; k <= c2 && budget > 0; k++ {
			f.cidWidths[k] = wd
			budget--
		}
		i += 3
	}
}

// fontCache holds a document's fonts across its pages, so the pages that share a font parse its
// encoding (a ToUnicode CMap) once and share its memo of codes. A font is found by its
// dictionary as written (its entries, with the objects it refers to by number), and by its
// name in a page's font resources as written, so a page whose resources an earlier page had
// finds its fonts without reading them again.
type fontCache map[string]*pageFont

// maxFontKey bounds the dictionaries fontCache keeps fonts by: a font of a larger one (widths
// written inline by the thousand) is read again on each page.
const maxFontKey = 16 << 10

// pageFonts are the font resources of one page, read when a string is first shown.
type pageFonts struct {
	res  pdf.Value // the page's resources
	read bool
	dict pdf.Value // the page's /Font resources
	key  string    // dict as written
}

// font returns the pageFont of the font named name in the page's resources.
func (c fontCache) font(res *pageFonts, name string) *pageFont {
	if !res.read {
		res.dict, res.read = res.res.Key("Font"), true
		if c != nil {
			res.key = res.dict.String()
		}
	}
	if c == nil || len(res.key) > maxFontKey {
		return newPageFont(pdf.Font{V: res.dict.Key(name)})
	}
	byName := "r" + res.key + "\x00" + name
	if pf, ok := c[byName]; ok {
		return pf
	}
	v := res.dict.Key(name)
	key := "f" + v.String()
	if v.Kind() != pdf.Dict || len(key) > maxFontKey {
		return newPageFont(pdf.Font{V: v})
	}
	pf, ok := c[key]
	if !ok {
		pf = newPageFont(pdf.Font{V: v})
		c[key] = pf
	}
	c[byName] = pf
	return pf
}

func newPageFont(f pdf.Font) *pageFont {
	encName := f.V.Key("Encoding").Name()
	pf := &pageFont{vertical: encName == "V" || strings.HasSuffix(encName, "-V")}
	defer pf.readVertical(f.V)
	name, cp := fontDisplayName(baseFontName(f.V.Key("BaseFont").Name()))
	pf.name = name
	pf.symbol = symbolFontName(pf.name)
	pf.readWidths(f.V)
	if f.V.Key("Subtype").Name() == "Type0" {
		pf.classifyType0(f.V)
	}
	if f.V.Key("Subtype").Name() == "Type0" {
		// The reader knows only Identity-H with a ToUnicode map: composite fonts are decoded
		// here, through the ToUnicode map, the predefined CMap and the character collection.
		if e := newType0Encoding(f.V, pf.symbol); e != nil {
			pf.enc = e
			pf.undecodable = !e.decodable()
			pf.vertical = pf.vertical || e.vertical
			pf.cjk = pf.cjk || cjkOrderings[e.ordering]
			if e.identity {
				pf.width = 2
				if cacheCodes {
					pf.codes = map[string]string{}
				}
			} else {
				pf.predef = e.predef
			}
			return pf
		}
	}
	pf.enc = f.Encoder()
	switch f.V.Key("Subtype").Name() {
	case "TrueType", "Type1", "MMType1":
		if cp != nil && !pf.symbol && f.V.Key("ToUnicode").Kind() != pdf.Stream && !embedded(f.V.Key("FontDescriptor")) {
			pf.codepage = cp
		}
		if e := newSimpleEncoding(f.V, pf.symbol, pf.enc); e != nil {
			pf.enc = e
		}
		pf.width = 1
	case "Type3":
		pf.width = 1
	case "Type0":
		if e := f.V.Key("Encoding").Name(); e == "Identity-H" || e == "Identity-V" {
			pf.width = 2
		}
	}
	if pf.width > 0 && cacheCodes {
		pf.codes = map[string]string{}
	}
	return pf
}

// cacheCodes turns the per-code memo on (tests compare with it off).
var cacheCodes = true

func (f *pageFont) decode(raw string) string {
	if f == nil || f.enc == nil {
		return ""
	}
	if f.codepage != nil && !isASCII7(raw) && !latinWords(raw) {
		// A CJK font that is not embedded and has no ToUnicode: its bytes are its code page's
		// (宋体 showing GBK), not single-byte codes, where they decode as such to CJK text
		// and do not read as Latin words with a few accented letters ("Pérez").
		if s, ok := strictDecode(f.codepage, []byte(raw)); ok && codePageText(s) {
			return s
		}
	}
	if f.width == 0 || len(raw)%f.width != 0 {
		return f.enc.Decode(raw)
	}
	_, composite := f.enc.(*type0Encoding) // it turns right-to-left ligatures round itself
	if f.codes == nil && composite {
		return f.enc.Decode(raw)
	}
	var b strings.Builder
	b.Grow(len(raw) * (f.width + 1) / 2) // one byte a code in Latin text, three from two in Japanese
	for i := 0; i < len(raw); i += f.width {
		c := raw[i : i+f.width]
		s, ok := f.codes[c]
		if !ok {
			s = f.enc.Decode(c)
			if !composite {
				s = rtlGlyph(s)
			}
			if f.codes != nil {
				f.codes[c] = s
			}
		}
		b.WriteString(s)
	}
	return b.String()
}

// codeLen is the length in bytes of the code at the start of s (not empty) in the predefined
// CMap.
func (e *predefinedEncoding) codeLen(s string) int {
	switch e.unicode {
	case "UCS2":
		return min(2, len(s))
	case "UTF16":
		if len(s) >= 4 && s[0] >= 0xD8 && s[0] <= 0xDB {
			return 4
		}
		return min(2, len(s))
	case "UTF32":
		return min(4, len(s))
	case "UTF8":
		_, n := utf8.DecodeRuneInString(s)
		return n
	}
	return e.cmap.codeLen(s)
}

// readVertical sets the vertical advance of a vertical font v from its descendant's DW2.
func (f *pageFont) readVertical(v pdf.Value) {
	if !f.vertical {
		return
	}
	f.vy = -1
	if dw2 := v.Key("DescendantFonts").Index(0).Key("DW2"); dw2.Len() == 2 {
		if y := dw2.Index(1).Float64() / 1000; y < 0 && y > -10 {
			f.vy = y
		}
	}
}

// embedded reports whether a font descriptor holds the font's program.
func embedded(desc pdf.Value) bool {
	return desc.Key("FontFile").Kind() == pdf.Stream || desc.Key("FontFile2").Kind() == pdf.Stream ||
		desc.Key("FontFile3").Kind() == pdf.Stream
}

// isASCII7 reports whether s holds bytes below 0x80 only.
func isASCII7(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// codePageText reports whether s, decoded from a CJK code page, reads as such: every character
// beyond ASCII a CJK one (ideographs, kana, Hangul, CJK and full-width punctuation, general
// punctuation such as …), none a Latin-1 or Latin Extended letter.
func codePageText(s string) bool {
	some := false
	for _, r := range s {
		switch {
		case r < 0x80:
		case r < 0x2000:
			return false
		default:
			some = true
		}
	}
	return some
}

// latinWords reports whether raw, read byte by byte, is mostly Latin letters: more than twice
// as many ASCII letters as bytes that would be accented letters (0xC0 and up).
func latinWords(raw string) bool {
	letters, accented := 0, 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c >= 0xC0:
			accented++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters++
		}
	}
	return letters > 2*accented
}
