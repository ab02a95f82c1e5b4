package docjob

import (
	"io"
	"sort"
	"strings"
	unicode16 "unicode/utf16"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Composite (Type0) fonts. Each code of a string is read to its text from the first source that
// gives plausible text:
//
//  1. the font's ToUnicode map, unless the text it gives is U+FFFD, a control, a private-use or
//     an unassigned code point (a producer's placeholder, not the character);
//  2. the code's CID (the code itself for Identity-H/V, or through the predefined CMap the font
//     names) read through the table of the font's character collection (Adobe-Japan1, -GB1,
//     -CNS1, -Korea1 from CIDSystemInfo's Ordering, or the predefined CMap's own);
//  3. for a Unicode-keyed predefined CMap (UniJIS-UCS2-H, …), the code's own code point.
//
// A code no source reads is U+FFFD, which the plausibility check then reports.

// type0Encoding decodes the strings of one composite font (see above).
type type0Encoding struct {
	identity bool                // Identity-H/V: 2-byte codes, CID = code
	predef   *predefinedEncoding // else the predefined (or embedded) CMap
	vertical bool                // an embedded CMap of WMode 1
	toUni    *toUnicodeMap       // nil: none
	ordering string              // character collection whose table is shipped ("": none)
	symbol   bool                // a symbol font: private-use targets are its pictures
	// The embedded program, read when a code first needs it (no ToUnicode text, no collection):
	// its glyphs' text, and the CID → glyph map (nil: the CID is the glyph).
	desc       pdf.Value
	progRead   bool
	glyphs     map[uint16]rune
	cidToGID   []byte
	hasProgram bool
}

// newType0Encoding returns the decoder of the composite font v, or nil when its encoding is
// neither Identity-H/V nor a predefined CMap JobDesk ships (an embedded CMap stream).
func newType0Encoding(v pdf.Value, symbol bool) *type0Encoding {
	e := &type0Encoding{symbol: symbol}
	name := v.Key("Encoding").Name()
	switch {
	case name == "Identity-H" || name == "Identity-V":
		e.identity = true
	case v.Key("Encoding").Kind() == pdf.Stream:
		m, vertical := readEmbeddedCMap(v.Key("Encoding"))
		if m == nil {
			return nil
		}
		e.predef, e.vertical = &predefinedEncoding{cmap: m}, vertical
	default:
		e.predef = newPredefinedEncoding(name)
		if e.predef == nil {
			return nil
		}
	}
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		e.toUni = readToUnicode(tu)
	}
	e.desc = v.Key("DescendantFonts").Index(0)
	ordering := e.desc.Key("CIDSystemInfo").Key("Ordering").Text()
	if e.predef != nil && hasCollection(e.predef.cmap.ordering) {
		ordering = e.predef.cmap.ordering // the CMap's CIDs are of its own collection
	}
	if hasCollection(ordering) {
		e.ordering = ordering
	}
	if e.ordering == "" && e.toUni == nil && (e.identity || e.predef.unicode == "") {
		e.readProgram() // the only source left: read it now, so decodable knows
	}
	return e
}

// readProgram reads the embedded font program once: a CID-keyed CFF's own collection, else a
// TrueType's glyph → text map.
func (e *type0Encoding) readProgram() {
	if e.progRead {
		return
	}
	e.progRead = true
	prog := fontProgram(e.desc)
	if prog == nil {
		return
	}
	if o := cffOrdering(prog); hasCollection(o) {
		e.ordering = o
		e.hasProgram = true
		return
	}
	if g := glyphText(prog); g != nil {
		e.glyphs = g
		e.hasProgram = true
		if m := e.desc.Key("CIDToGIDMap"); m.Kind() == pdf.Stream {
			_ = safeCall(func() error {
				var err error
				e.cidToGID, err = io.ReadAll(io.LimitReader(m.Reader(), 1<<18))
				return err
			})
		}
	}
}

// decodable reports whether some source of text is known for the font's codes.
func (e *type0Encoding) decodable() bool {
	return e.toUni != nil || e.ordering != "" || (e.predef != nil && e.predef.unicode != "") || e.hasProgram
}

func (e *type0Encoding) codeLen(s string) int {
	if e.identity {
		return min(2, len(s))
	}
	return max(1, e.predef.codeLen(s))
}

// Decode returns the text of raw, a string of codes.
func (e *type0Encoding) Decode(raw string) string {
	var b strings.Builder
	for len(raw) > 0 {
		n := e.codeLen(raw)
		c := raw[:n]
		raw = raw[n:]
		var code uint32
		for k := 0; k < n; k++ {
			code = code<<8 | uint32(c[k])
		}
		var tu string
		haveTU := false
		if e.toUni != nil {
			tu, haveTU = e.toUni.lookup(n, code)
			if haveTU && plausibleTarget(tu, e.symbol) {
				b.WriteString(rtlGlyph(tu))
				continue
			}
		}
		if r := e.fromCollection(c, n, code); r != 0 {
			b.WriteRune(r)
			continue
		}
		if haveTU {
			b.WriteString(tu) // implausible, and nothing better: the check reports it
			continue
		}
		b.WriteRune('\uFFFD')
	}
	return b.String()
}

// fromCollection is the text of one code through its CID, or (Unicode-keyed CMaps) its own code
// point; 0 when neither gives one.
func (e *type0Encoding) fromCollection(c string, n int, code uint32) rune {
	switch {
	case e.identity:
		if n != 2 {
			return 0
		}
		return e.cidRune(code)
	case e.predef.unicode != "":
		cps := unicodeCodes(e.predef.unicode, c)
		if len(cps) != 1 {
			return 0
		}
		cp := cps[0]
		if cid, ok := e.predef.cmap.cid(4, uint32(cp)); ok {
			if t := cidText(e.predef.cmap.ordering, cid); t != 0 {
				return t
			}
		}
		if cp > 0 && utf8.ValidRune(cp) && !badRune(cp, false) {
			return cp
		}
		return 0
	default:
		if cid, ok := e.predef.cmap.cid(n, code); ok {
			return e.cidRune(cid)
		}
		return 0
	}
}

// cidRune is the text of a CID: through the character collection, else the embedded program's
// glyph (the CID is the glyph, or CIDToGIDMap says which); 0 when neither gives one.
func (e *type0Encoding) cidRune(cid uint32) rune {
	if e.ordering == "" {
		e.readProgram()
	}
	if e.ordering != "" {
		return cidText(e.ordering, cid)
	}
	if e.glyphs != nil {
		gid := cid
		if len(e.cidToGID) > 0 {
			if int(2*cid+1) >= len(e.cidToGID) {
				return 0
			}
			gid = uint32(e.cidToGID[2*cid])<<8 | uint32(e.cidToGID[2*cid+1])
		}
		return e.glyphs[uint16(gid)]
	}
	return 0
}

// plausibleTarget: a ToUnicode target that is text (no U+FFFD, control, private-use outside a
// symbol font, or unassigned code point). An empty target stands for nothing and is kept.
func plausibleTarget(s string, symbol bool) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7F || r >= 0x80 && badRune(r, symbol) {
			return false
		}
	}
	return true
}

// toUnicodeMap is a parsed ToUnicode CMap: code (n bytes) → text.
type toUnicodeMap struct {
	chars  map[uint64]string // n<<32 | code
	ranges []tuRange         // sorted by n, then lo
}

type tuRange struct {
	n      int
	lo, hi uint32
	dst    []uint16 // first target, as UTF-16 units (its last unit counts up)
	arr    []string // or one target per code
}

// maxToUnicode bounds the entries read from one ToUnicode map.
const maxToUnicode = 1 << 17

func (m *toUnicodeMap) lookup(n int, code uint32) (string, bool) {
	if s, ok := m.chars[uint64(n)<<32|uint64(code)]; ok {
		return s, true
	}
	i := sort.Search(len(m.ranges), func(i int) bool {
		r := m.ranges[i]
		return r.n > n || (r.n == n && r.hi >= code)
	})
	for ; i < len(m.ranges) && m.ranges[i].n == n && m.ranges[i].lo <= code; i++ {
		r := m.ranges[i]
		if code > r.hi {
			continue
		}
		off := code - r.lo
		if r.arr != nil {
			if int(off) < len(r.arr) {
				return r.arr[off], true
			}
			return "", false
		}
		u := append([]uint16(nil), r.dst...)
		if len(u) > 0 {
			u[len(u)-1] += uint16(off)
		}
		return string(unicode16.Decode(u)), true
	}
	return "", false
}

// readToUnicode parses a ToUnicode CMap stream (bfchar and bfrange sections; codes of 1 to 4
// bytes); nil when it holds no mapping or cannot be read.
func readToUnicode(v pdf.Value) (m *toUnicodeMap) {
	defer func() {
		if recover() != nil {
			m = nil
		}
	}()
	data, err := io.ReadAll(io.LimitReader(v.Reader(), 8<<20))
	if err != nil && len(data) == 0 {
		return nil
	}
	return parseToUnicode(data)
}

// parseToUnicode parses the bytes of a ToUnicode CMap (see readToUnicode).
func parseToUnicode(data []byte) (m *toUnicodeMap) {
	defer func() {
		if recover() != nil {
			m = nil
		}
	}()
	toks := cmapTokens(data)
	m = &toUnicodeMap{chars: map[uint64]string{}}
	count := 0
	hexOf := func(t string) ([]byte, bool) {
		if len(t) < 2 || t[0] != '<' {
			return nil, false
		}
		return decodeHex(t[1 : len(t)-1]), true
	}
	for i := 0; i < len(toks) && count < maxToUnicode; i++ {
		switch toks[i] {
		case "beginbfchar":
			for i++; i+1 < len(toks) && toks[i] != "endbfchar" && count < maxToUnicode; i += 2 {
				src, ok1 := hexOf(toks[i])
				dst, ok2 := hexOf(toks[i+1])
				if !ok1 || !ok2 || len(src) == 0 || len(src) > 4 {
					continue
				}
				m.chars[uint64(len(src))<<32|uint64(bytesCode(src))] = utf16Text(dst)
				count++
			}
		case "beginbfrange":
			for i++; i+2 < len(toks) && toks[i] != "endbfrange" && count < maxToUnicode; {
				lo, ok1 := hexOf(toks[i])
				hi, ok2 := hexOf(toks[i+1])
				if !ok1 || !ok2 || len(lo) == 0 || len(lo) > 4 || len(hi) != len(lo) {
					i++
					continue
				}
				r := tuRange{n: len(lo), lo: bytesCode(lo), hi: bytesCode(hi)}
				if r.hi < r.lo {
					r.lo, r.hi = r.hi, r.lo
				}
				if toks[i+2] == "[" {
					j := i + 3
					for ; j < len(toks) && toks[j] != "]"; j++ {
						d, _ := hexOf(toks[j])
						r.arr = append(r.arr, utf16Text(d))
					}
					i = j + 1
				} else {
					d, _ := hexOf(toks[i+2])
					r.dst = make([]uint16, 0, len(d)/2)
					for k := 0; k+1 < len(d); k += 2 {
						r.dst = append(r.dst, uint16(d[k])<<8|uint16(d[k+1]))
					}
					if len(d) == 1 {
						r.dst = append(r.dst, uint16(d[0]))
					}
					i += 3
				}
				m.ranges = append(m.ranges, r)
				count++
			}
		}
	}
	if len(m.chars) == 0 && len(m.ranges) == 0 {
		return nil
	}
	sort.SliceStable(m.ranges, func(a, b int) bool {
		if m.ranges[a].n != m.ranges[b].n {
			return m.ranges[a].n < m.ranges[b].n
		}
		return m.ranges[a].hi < m.ranges[b].hi
	})
	return m
}

// cmapTokens splits a CMap into tokens: <hex> strings (spaces inside removed), [ and ], and
// words; comments and literal strings are skipped.
func cmapTokens(data []byte) []string {
	var out []string
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '%':
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		case c == '<':
			j := i + 1
			var b strings.Builder
			b.WriteByte('<')
			for j < len(data) && data[j] != '>' {
				if !isSpaceByte(data[j]) {
					b.WriteByte(data[j])
				}
				j++
			}
			b.WriteByte('>')
			out = append(out, b.String())
			i = j + 1
		case c == '[' || c == ']':
			out = append(out, string(c))
			i++
		case c == '(':
			depth, start := 0, i
			for i < len(data) {
				if data[i] == '\\' {
					i += 2
					continue
				}
				if data[i] == '(' {
					depth++
				} else if data[i] == ')' {
					depth--
					if depth == 0 {
						i++
						break
					}
				}
				i++
			}
			out = append(out, string(data[start:min(i, len(data))]))
		case isSpaceByte(c):
			i++
		default:
			j := i
			for j < len(data) && !isSpaceByte(data[j]) && !strings.ContainsRune("<>[]()%", rune(data[j])) {
				j++
			}
			if j == i {
				j++
			}
			out = append(out, string(data[i:j]))
			i = j
		}
	}
	return out
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0
}

func decodeHex(s string) []byte {
	var out []byte
	var hi byte
	half := false
	for i := 0; i < len(s); i++ {
		var v byte
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			continue
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		out = append(out, hi<<4)
	}
	return out
}

func bytesCode(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 | uint32(x)
	}
	return c
}

// utf16Text is the text of a ToUnicode target: UTF-16BE units (one byte: that code point).
func utf16Text(d []byte) string {
	if len(d) == 1 {
		return string(rune(d[0]))
	}
	u := make([]uint16, 0, len(d)/2)
	for k := 0; k+1 < len(d); k += 2 {
		u = append(u, uint16(d[k])<<8|uint16(d[k+1]))
	}
	return string(unicode16.Decode(u))
}
