package docjob

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Simple fonts (Type1, Type 1C, MMType1, TrueType): one byte a code. Each code reads from the
// first source that gives plausible text:
//
//  1. the font's ToUnicode map (unless its target is U+FFFD, a control or private use);
//  2. the name of the code's glyph: the Differences of the font's Encoding, else its base
//     encoding (BaseEncoding, or the encoding the font names), else, for an embedded Type 1C or
//     Type 1 program, the program's own (built-in) encoding, whose Type 1C glyph names come from
//     the program's charset;
//  3. the reader's own decoding of the byte (WinAnsi, MacRoman, PDFDoc, Differences).
//
// A code none of these reads keeps the reader's byte, which the plausibility check then judges.

// simpleEncoding decodes the codes of one simple font (see above).
type simpleEncoding struct {
	toUni    *toUnicodeMap
	names    [256]string // glyph text by code ("" none)
	symbol   bool
	fallback pdf.TextEncoding
}

// newSimpleEncoding returns the decoder of the simple font v, or nil when it knows nothing the
// reader's own decoding (fallback) does not.
func newSimpleEncoding(v pdf.Value, symbol bool, fallback pdf.TextEncoding) *simpleEncoding {
	e := &simpleEncoding{symbol: symbol, fallback: fallback}
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		e.toUni = readToUnicode(tu)
	}
	enc := v.Key("Encoding")
	base := enc.Name()
	if enc.Kind() == pdf.Dict {
		base = enc.Key("BaseEncoding").Name()
	}
	var names [256]string
	switch base {
	case "StandardEncoding":
		names = standardEncodingNames()
	case "WinAnsiEncoding":
		for c, r := range winAnsiHigh {
			names[c+0x80] = string(r)
		}
	case "":
		if v.Key("Subtype").Name() != "TrueType" && enc.Kind() != pdf.Name {
			names = builtinEncodingNames(v.Key("FontDescriptor"))
		}
	}
	known := false
	for c, n := range names {
		if t := glyphNameText(n); t != "" {
			e.names[c], known = t, true
		}
	}
	if d := enc.Key("Differences"); enc.Kind() == pdf.Dict && d.Kind() == pdf.Array {
		code := -1
		for i := 0; i < d.Len() && i < 1024; i++ {
			x := d.Index(i)
			switch x.Kind() {
			case pdf.Integer:
				code = int(x.Int64())
			case pdf.Name:
				if code >= 0 && code < 256 {
					e.names[code] = glyphNameText(x.Name())
					known = known || e.names[code] != ""
				}
				code++
			}
		}
	}
	if e.toUni == nil && !known {
		return nil
	}
	return e
}

// Decode returns the text of raw, one byte a code.
func (e *simpleEncoding) Decode(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if e.toUni != nil {
			if t, ok := e.toUni.lookup(1, uint32(c)); ok && plausibleTarget(t, e.symbol) {
				b.WriteString(t)
				continue
			}
		}
		if t := e.names[c]; t != "" {
			b.WriteString(t)
			continue
		}
		if e.fallback != nil {
			b.WriteString(e.fallback.Decode(raw[i : i+1]))
		}
	}
	return b.String()
}

// winAnsiHigh is WinAnsiEncoding's codes 0x80–0x9F (0: none); its other codes above 0x7F are
// Latin-1's.
var winAnsiHigh = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

// standardEncodingNames is Adobe's StandardEncoding: code → glyph name. Its codes hold the
// standard strings 1–149 in order.
func standardEncodingNames() (names [256]string) {
	sid := 1
	for _, r := range [][2]int{{32, 126}, {161, 175}, {177, 180}, {182, 189}, {191, 191}, {193, 200},
		{202, 203}, {205, 208}, {225, 225}, {227, 227}, {232, 235}, {241, 241}, {245, 245}, {248, 251}} {
		for c := r[0]; c <= r[1]; c++ {
			names[c] = cffStandardStrings[sid]
			sid++
		}
	}
	return names
}

// glyphNameText is the text of the glyph name n, "" when it is not known.
func glyphNameText(n string) string {
	if n == "" || n == ".notdef" {
		return ""
	}
	if i := strings.IndexByte(n, '.'); i > 0 {
		n = n[:i] // a.sc, one.oldstyle: a variant of the character
	}
	if strings.Contains(n, "_") { // f_f_i: a ligature of its parts
		var b strings.Builder
		for _, p := range strings.Split(n, "_") {
			t := glyphNameText(p)
			if t == "" {
				return ""
			}
			b.WriteString(t)
		}
		return b.String()
	}
	if len(n) == 1 && (n[0] >= 'A' && n[0] <= 'Z' || n[0] >= 'a' && n[0] <= 'z') {
		return n
	}
	if r, ok := glyphNameRunes[n]; ok {
		return string(r)
	}
	for d, name := range []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"} {
		if n == name {
			return string(rune('0' + d))
		}
	}
	if h, ok := strings.CutPrefix(n, "uni"); ok && len(h) >= 4 && len(h)%4 == 0 {
		var b strings.Builder
		for k := 0; k < len(h); k += 4 {
			v, err := strconv.ParseUint(h[k:k+4], 16, 16)
			if err != nil || badRune(rune(v), false) || v >= 0xD800 && v <= 0xDFFF {
				return ""
			}
			b.WriteRune(rune(v))
		}
		return b.String()
	}
	if h, ok := strings.CutPrefix(n, "u"); ok && len(h) >= 4 && len(h) <= 6 {
		if v, err := strconv.ParseUint(h, 16, 32); err == nil && utf8.ValidRune(rune(v)) && !badRune(rune(v), false) {
			return string(rune(v))
		}
		return ""
	}
	// Expert-set variants: small capitals, old-style and superior or inferior figures.
	for _, suf := range []string{"small", "oldstyle", "superior", "inferior"} {
		if b, ok := strings.CutSuffix(n, suf); ok && b != "" {
			t := glyphNameText(b)
			if suf == "small" {
				t = strings.ToLower(t)
			}
			return t
		}
	}
	return ""
}

// builtinEncodingNames is the built-in encoding of the font program embedded in the font
// descriptor fd (a Type 1C FontFile3 or a Type 1 FontFile): code → glyph name; none when there is
// no program or it cannot be read.
func builtinEncodingNames(fd pdf.Value) (names [256]string) {
	for _, k := range []string{"FontFile3", "FontFile"} {
		s := fd.Key(k)
		if s.Kind() != pdf.Stream {
			continue
		}
		if k == "FontFile3" && s.Key("Subtype").Name() != "Type1C" {
			return names
		}
		data := streamBytes(s, maxFontProgram)
		if k == "FontFile3" {
			return cffEncodingNames(data)
		}
		return type1EncodingNames(data)
	}
	return names
}

// type1EncodingNames reads the encoding of a Type 1 program from its clear-text part:
// StandardEncoding, or the "dup CODE /name put" entries of its own.
func type1EncodingNames(data []byte) (names [256]string) {
	if i := bytes.Index(data, []byte("eexec")); i >= 0 {
		data = data[:i]
	}
	i := bytes.Index(data, []byte("/Encoding"))
	if i < 0 {
		return names
	}
	data = data[i+len("/Encoding"):]
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("StandardEncoding")) {
		return standardEncodingNames()
	}
	if j := bytes.Index(data, []byte("readonly def")); j >= 0 {
		data = data[:j]
	}
	f := strings.Fields(string(data))
	for k := 0; k+3 < len(f); k++ {
		if f[k] != "dup" || f[k+3] != "put" || !strings.HasPrefix(f[k+2], "/") {
			continue
		}
		if c, err := strconv.Atoi(f[k+1]); err == nil && c >= 0 && c < 256 {
			names[c] = f[k+2][1:]
		}
	}
	return names
}

// cffEncodingNames reads the built-in encoding of a name-keyed CFF program: the code of each
// glyph from its Encoding (Standard, or a table of its own with supplements) and the glyph's
// name from its charset (ISOAdobe, or a table of string numbers). A CID-keyed program has none.
func cffEncodingNames(data []byte) (names [256]string) {
	defer func() {
		if recover() != nil {
			names = [256]string{}
		}
	}()
	if len(data) < 4 || data[0] != 1 {
		return names
	}
	_, p, ok := cffIndex(data, int(data[2]))
	if !ok {
		return names
	}
	top, p, ok := cffIndex(data, p)
	if !ok || len(top) == 0 {
		return names
	}
	strs, _, ok := cffIndex(data, p)
	if !ok {
		return names
	}
	dict := cffDict(top[0])
	if _, cid := dict[1230]; cid {
		return names // ROS: CID-keyed
	}
	sidName := func(sid int) string {
		switch {
		case sid < 0:
			return ""
		case sid < len(cffStandardStrings):
			return cffStandardStrings[sid]
		case sid-len(cffStandardStrings) < len(strs):
			return string(strs[sid-len(cffStandardStrings)])
		}
		return ""
	}
	encOff, csOff := 0, 0
	if v := dict[16]; len(v) > 0 {
		encOff = v[0]
	}
	if v := dict[15]; len(v) > 0 {
		csOff = v[0]
	}
	if encOff == 0 {
		return standardEncodingNames()
	}
	if encOff == 1 || encOff < 0 || encOff >= len(data) {
		return names // the Expert encoding: its glyphs are no plain text
	}
	nGlyphs := 0
	if v := dict[17]; len(v) > 0 && v[0] > 0 && v[0]+2 <= len(data) {
		nGlyphs = int(binary.BigEndian.Uint16(data[v[0]:]))
	}
	// charset: glyph → SID (glyph 0 is .notdef)
	gsid := make([]int, nGlyphs)
	switch {
	case csOff == 0:
		for g := range gsid {
			if g < 229 {
				gsid[g] = g
			}
		}
	case csOff > 2 && csOff < len(data):
		p := csOff + 1
		switch data[csOff] {
		case 0:
			for g := 1; g < nGlyphs && p+2 <= len(data); g++ {
				gsid[g] = int(binary.BigEndian.Uint16(data[p:]))
				p += 2
			}
		case 1, 2:
			wide := data[csOff] == 2
			for g := 1; g < nGlyphs; {
				if p+3 > len(data) || wide && p+4 > len(data) {
					break
				}
				first := int(binary.BigEndian.Uint16(data[p:]))
				left := int(data[p+2])
				p += 3
				if wide {
					left = int(binary.BigEndian.Uint16(data[p-1:]))
					p++
				}
				for k := 0; k <= left && g < nGlyphs; k++ {
					gsid[g] = first + k
					g++
				}
			}
		}
	}
	glyphName := func(g int) string {
		if g <= 0 || g >= len(gsid) {
			return ""
		}
		return sidName(gsid[g])
	}
	p = encOff + 1
	format := data[encOff]
	switch format & 0x7F {
	case 0:
		n := int(data[p])
		p++
		for k := 0; k < n && p < len(data); k++ {
			names[data[p]] = glyphName(k + 1)
			p++
		}
	case 1:
		n := int(data[p])
		p++
		g := 1
		for k := 0; k < n && p+2 <= len(data); k++ {
			first, left := int(data[p]), int(data[p+1])
			p += 2
			for c := first; c <= first+left && c < 256; c++ {
				names[c] = glyphName(g)
				g++
			}
		}
	}
	if format&0x80 != 0 && p < len(data) {
		n := int(data[p])
		p++
		for k := 0; k < n && p+3 <= len(data); k++ {
			names[data[p]] = sidName(int(binary.BigEndian.Uint16(data[p+1:])))
			p += 3
		}
	}
	return names
}

// cffDict reads a CFF DICT: operator (12 x as 1200+x) → its operands (reals read as 0).
func cffDict(d []byte) map[int][]int {
	out := map[int][]int{}
	var ops []int
	for i := 0; i < len(d); {
		b := int(d[i])
		switch {
		case b == 12 && i+1 < len(d):
			out[1200+int(d[i+1])] = ops
			ops = nil
			i += 2
		case b <= 21:
			out[b] = ops
			ops = nil
			i++
		case b == 28 && i+2 < len(d):
			ops = append(ops, int(int16(binary.BigEndian.Uint16(d[i+1:]))))
			i += 3
		case b == 29 && i+4 < len(d):
			ops = append(ops, int(int32(binary.BigEndian.Uint32(d[i+1:]))))
			i += 5
		case b == 30:
			i++
			for i < len(d) && d[i]&0x0F != 0x0F && d[i]&0xF0 != 0xF0 {
				i++
			}
			i++
			ops = append(ops, 0)
		case b >= 32 && b <= 246:
			ops = append(ops, b-139)
			i++
		case b >= 247 && b <= 250 && i+1 < len(d):
			ops = append(ops, (b-247)*256+int(d[i+1])+108)
			i += 2
		case b >= 251 && b <= 254 && i+1 < len(d):
			ops = append(ops, -(b-251)*256-int(d[i+1])-108)
			i += 2
		default:
			return out
		}
	}
	return out
}

// streamBytes reads at most max bytes of the stream s; nil when it cannot be read.
func streamBytes(s pdf.Value, max int64) []byte {
	var data []byte
	if safeCall(func() error {
		var err error
		data, err = io.ReadAll(io.LimitReader(s.Reader(), max))
		return err
	}) != nil && len(data) == 0 {
		return nil
	}
	return data
}
