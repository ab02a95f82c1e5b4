package docjob

import (
	"context"
	"errors"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// span is one shown string with its position on the page (device space), where it ends
// horizontally (x plus its advance) and its font size. upright: the string runs left to right
// on a horizontal baseline (not a vertical font, not rotated), so its box is x..end.
type span struct {
	x, y, size float64
	end        float64
	text       string
	upright    bool
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

// errPageTooLarge ends a page that shows more than maxPageSpans strings; the spans read so far
// are kept.
var errPageTooLarge = errors.New("the page shows more text than JobDesk reads")

// pageSpans walks a page's content stream, tracking the graphics and text matrices, and returns
// the strings it shows in stream order. It checks ctx every 1024 operators and stops with ctx's
// error, so a page of millions of operators does not run on past the deadline. It panics on
// malformed content (callers recover).
func pageSpans(ctx context.Context, p pdf.Page) (out []span, err error) {
	if p.V.IsNull() || p.V.Key("Contents").Kind() == pdf.Null {
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
	fonts := map[string]*pageFont{} // by resource name: a font's encoder is built once per page
	var enc *pageFont
	var fontSize, leading float64 = 1, 0
	ctm, tm, tlm := identity, identity, identity
	var stack []mat
	show := func(raw string) {
		if enc == nil || raw == "" {
			return
		}
		s := enc.decode(raw)
		// The text matrix moves on by the string's advance (horizontal writing), so the next
		// string shown without positioning starts where this one ends.
		adv := 0.0
		if !enc.vertical {
			adv = enc.advance(raw, s) * fontSize
		}
		m := tm.mul(ctm)
		if adv != 0 {
			tm = mat{1, 0, 0, 1, adv, 0}.mul(tm)
		}
		if s == "" {
			return
		}
		size := fontSize * math.Hypot(m[2], m[3])
		end := m[4] + adv*math.Hypot(m[0], m[1])
		upright := !enc.vertical && m[0] > 0 && m[3] > 0 && math.Abs(m[1]) <= 0.01*m[0]
		out = append(out, span{x: m[4], y: m[5], size: size, end: end, text: s, upright: upright})
		if len(out) >= maxPageSpans {
			panic(stopPage{errPageTooLarge})
		}
	}
	num := func(v pdf.Value) float64 { return v.Float64() }
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		if ops++; ops&1023 == 0 && ctx.Err() != nil {
			panic(stopPage{ctx.Err()})
		}
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "q":
			if len(stack) < 1024 {
				stack = append(stack, ctm)
			}
		case "Q":
			if len(stack) > 0 {
				ctm = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case "cm":
			if n == 6 {
				ctm = mat{num(args[0]), num(args[1]), num(args[2]), num(args[3]), num(args[4]), num(args[5])}.mul(ctm)
			}
		case "BT":
			tm, tlm = identity, identity
		case "Tf":
			if n == 2 {
				name := args[0].Name()
				f, ok := fonts[name]
				if !ok {
					f = newPageFont(p.Font(name))
					fonts[name] = f
				}
				enc = f
				fontSize = num(args[1])
			}
		case "TL":
			if n == 1 {
				leading = num(args[0])
			}
		case "Td", "TD":
			if n == 2 {
				tx, ty := num(args[0]), num(args[1])
				if op == "TD" {
					leading = -ty
				}
				tlm = mat{1, 0, 0, 1, tx, ty}.mul(tlm)
				tm = tlm
			}
		case "Tm":
			if n == 6 {
				tlm = mat{num(args[0]), num(args[1]), num(args[2]), num(args[3]), num(args[4]), num(args[5])}
				tm = tlm
			}
		case "T*":
			tlm = mat{1, 0, 0, 1, 0, -leading}.mul(tlm)
			tm = tlm
		case "Tj":
			if n == 1 {
				show(args[0].RawString())
			}
		case "'", "\"":
			tlm = mat{1, 0, 0, 1, 0, -leading}.mul(tlm)
			tm = tlm
			if n >= 1 {
				show(args[n-1].RawString())
			}
		case "TJ":
			if n == 1 {
				var b strings.Builder
				v := args[0]
				for i := 0; i < v.Len(); i++ {
					if x := v.Index(i); x.Kind() == pdf.String {
						b.WriteString(x.RawString())
					} else if x.Kind() == pdf.Integer || x.Kind() == pdf.Real {
						// a large negative kerning is a word gap in Latin text
						if x.Float64() < -250 && b.Len() > 0 {
							show(b.String())
							b.Reset()
							out = append(out, span{x: math.NaN()})
						}
						if b.Len() == 0 && enc != nil && !enc.vertical {
							// the kerning moves the next string (pending ones are shown whole)
							tm = mat{1, 0, 0, 1, -x.Float64() / 1000 * fontSize, 0}.mul(tm)
						}
					}
				}
				show(b.String())
			}
		}
	})
	return out, nil
}

// spansText joins spans into lines. Stream order is kept as the reading order (producers write
// columns one after the other), and a span continues the current line when it sits on the same
// baseline to the right (horizontal writing) or in the same column below (vertical writing), so
// runs split by font changes, such as digits inside Japanese, stay on one line.
func spansText(spans []span) string {
	var b strings.Builder
	var lx, ly, lsize float64
	lrunes := 0
	have := false
	vertical := false
	pendingSpace := false
	var lend float64
	var lastRune rune
	for _, s := range spans {
		if math.IsNaN(s.x) {
			pendingSpace = true
			continue
		}
		size := s.size
		if size <= 0 || math.IsNaN(size) || math.IsInf(size, 0) {
			size = 10
		}
		tol := math.Max(size, lsize) * 0.6
		cont := false
		if have {
			dy, dx := s.y-ly, s.x-lx
			switch {
			case math.Abs(dy) <= tol && dx >= -tol/2 && !vertical:
				cont = true
			case math.Abs(dx) <= tol && dy < -size*0.3 && dy > -1.6*size && (vertical || (runeLen(s.text) <= 2 && lrunes <= 2)):
				cont, vertical = true, true
			}
		}
		if cont {
			gap := !vertical && lend > 0 && s.x-lend > size*wordGap(lastRune, s.text)
			if (pendingSpace || gap) && lastRune != ' ' && !strings.HasPrefix(s.text, " ") {
				b.WriteByte(' ')
			}
		} else if have {
			b.WriteByte('\n')
			vertical = false
		}
		pendingSpace = false
		b.WriteString(s.text)
		lx, ly, lsize, have, lrunes = s.x, s.y, size, true, runeLen(s.text)
		lend = s.end
		if s.end <= s.x {
			lend = 0 // no advance known
		}
		lastRune, _ = utf8.DecodeLastRuneInString(s.text)
	}
	return b.String()
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

func isJapanese(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF) || r == 'ー'
}

func runeLen(s string) int { return len([]rune(s)) }

// pageFont decodes the strings a font shows. Its encoder (a parsed ToUnicode CMap for most
// Japanese fonts) is built once, not at every Tf, and the text of each character code is
// remembered, since a CMap lookup scans the map's ranges: codes are one byte in a simple font
// (TrueType, Type1, Type3) and two in a CID font with Identity-H/V.
type pageFont struct {
	enc   pdf.TextEncoding
	width int // bytes per code; 0: unknown, decode whole strings
	codes map[string]string
	// vertical: the font writes top to bottom (an -V encoding); strings do not advance x.
	vertical bool
	// Glyph advances in thousandths of an em: widths[code-first] of a simple font, cidWidths
	// (from W) or dw of a CID font; 0 where unknown, estimated from the text.
	first     int
	widths    []float64
	cidWidths map[int]float64
	dw        float64
}

// advance is the horizontal advance of raw (its text s) in ems: from the font's widths when it
// has them, else estimated from the characters (a full-width character 1 em, others half).
func (f *pageFont) advance(raw, s string) float64 {
	if f == nil {
		return 0
	}
	sum, known := 0.0, false
	switch {
	case len(f.widths) > 0:
		for i := 0; i < len(raw); i++ {
			if k := int(raw[i]) - f.first; k >= 0 && k < len(f.widths) {
				sum += f.widths[k]
				known = true
			}
		}
	case f.width == 2 && (f.dw > 0 || len(f.cidWidths) > 0):
		for i := 0; i+1 < len(raw); i += 2 {
			w, ok := f.cidWidths[int(raw[i])<<8|int(raw[i+1])]
			if !ok {
				w = f.dw
			}
			sum += w
		}
		known = true
	}
	if known {
		return sum / 1000
	}
	for _, r := range s {
		if isJapanese(r) {
			sum += 1
		} else {
			sum += 0.5
		}
	}
	return sum
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

func newPageFont(f pdf.Font) *pageFont {
	pf := &pageFont{vertical: strings.HasSuffix(f.V.Key("Encoding").Name(), "-V")}
	pf.readWidths(f.V)
	if f.V.Key("Subtype").Name() == "Type0" {
		// A predefined CMap named as the encoding (the reader knows only Identity-H):
		// decode through the embedded Adobe-Japan1 tables.
		if p := newPredefinedEncoding(f.V.Key("Encoding").Name()); p != nil {
			pf.enc = p
			return pf
		}
	}
	pf.enc = f.Encoder()
	switch f.V.Key("Subtype").Name() {
	case "TrueType", "Type1", "MMType1", "Type3":
		pf.width = 1
	case "Type0":
		if e := f.V.Key("Encoding").Name(); e == "Identity-H" || e == "Identity-V" {
			pf.width = 2
		}
	}
	if !cacheCodes {
		pf.width = 0
	}
	if pf.width > 0 {
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
	if f.width == 0 || len(raw)%f.width != 0 {
		return f.enc.Decode(raw)
	}
	var b strings.Builder
	for i := 0; i < len(raw); i += f.width {
		c := raw[i : i+f.width]
		s, ok := f.codes[c]
		if !ok {
			s = f.enc.Decode(c)
			f.codes[c] = s
		}
		b.WriteString(s)
	}
	return b.String()
}
