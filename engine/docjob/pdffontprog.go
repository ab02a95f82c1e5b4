package docjob

import (
	"encoding/binary"
	"io"

	"github.com/ledongthuc/pdf"
)

// Embedded font programs, read for the text of a composite font that has no ToUnicode map and
// names no character collection JobDesk has a table for (Ordering "Identity"):
//
//   - a CID-keyed CFF program (FontFile3, CIDFontType0C, or the CFF table of an OpenType font)
//     names its own collection in its ROS (Registry-Ordering-Supplement): Adobe-Japan1 slides
//     exported with Identity in the PDF read through the Japan1 table;
//   - a TrueType program (FontFile2, or OpenType) maps Unicode to glyphs in its cmap table: read
//     backwards, it gives each glyph's text (the CID is the glyph, or CIDToGIDMap says which).

// maxFontProgram bounds the bytes of an embedded font program that are read.
const maxFontProgram = 16 << 20

// fontProgram returns the embedded program of a CID font (its FontFile2 or FontFile3 stream),
// or nil.
func fontProgram(desc pdf.Value) []byte {
	fd := desc.Key("FontDescriptor")
	for _, k := range []string{"FontFile2", "FontFile3"} {
		if s := fd.Key(k); s.Kind() == pdf.Stream {
			var data []byte
			if safeCall(func() error {
				var err error
				data, err = io.ReadAll(io.LimitReader(s.Reader(), maxFontProgram))
				return err
			}) != nil {
				return nil
			}
			return data
		}
	}
	return nil
}

// sfntTable returns the table tag of an sfnt (TrueType or OpenType) font, or nil.
func sfntTable(data []byte, tag string) []byte {
	if len(data) < 12 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(data[4:]))
	for i := 0; i < n; i++ {
		rec := 12 + 16*i
		if rec+16 > len(data) {
			return nil
		}
		if string(data[rec:rec+4]) == tag {
			off, length := int(binary.BigEndian.Uint32(data[rec+8:])), int(binary.BigEndian.Uint32(data[rec+12:]))
			if off < 0 || length < 0 || off > len(data) || length > len(data)-off {
				return nil
			}
			return data[off : off+length]
		}
	}
	return nil
}

// glyphText reads an sfnt's cmap table backwards: glyph → the lowest code point mapped to it
// (a Windows Unicode subtable, format 4 or 12). nil when there is none.
func glyphText(data []byte) map[uint16]rune {
	cm := sfntTable(data, "cmap")
	if len(cm) < 4 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(cm[2:]))
	best, bestRank := -1, 0
	for i := 0; i < n; i++ {
		rec := 4 + 8*i
		if rec+8 > len(cm) {
			break
		}
		pid, eid := binary.BigEndian.Uint16(cm[rec:]), binary.BigEndian.Uint16(cm[rec+2:])
		off := int(binary.BigEndian.Uint32(cm[rec+4:]))
		rank := 0
		switch {
		case pid == 3 && eid == 10:
			rank = 4
		case pid == 0 && (eid == 4 || eid == 6):
			rank = 3
		case pid == 3 && eid == 1:
			rank = 2
		case pid == 0:
			rank = 1
		}
		if rank > bestRank && off < len(cm) {
			best, bestRank = off, rank
		}
	}
	if best < 0 || best+4 > len(cm) {
		return nil
	}
	sub := cm[best:]
	out := map[uint16]rune{}
	budget := 1 << 18 // codes looked at: a cmap covers the BMP once, a hostile one no more
	put := func(r rune, g uint32) {
		if g == 0 || g > 0xFFFF || r <= 0 {
			return
		}
		if old, ok := out[uint16(g)]; !ok || r < old {
			out[uint16(g)] = r
		}
	}
	switch binary.BigEndian.Uint16(sub) {
	case 4:
		if len(sub) < 14 {
			return nil
		}
		segs := int(binary.BigEndian.Uint16(sub[6:])) / 2
		if 16+8*segs > len(sub) {
			return nil
		}
		ends, starts := sub[14:], sub[16+2*segs:]
		deltas, ranges := sub[16+4*segs:], sub[16+6*segs:]
		for s := 0; s < segs; s++ {
			end, start := int(binary.BigEndian.Uint16(ends[2*s:])), int(binary.BigEndian.Uint16(starts[2*s:]))
			delta, ro := binary.BigEndian.Uint16(deltas[2*s:]), int(binary.BigEndian.Uint16(ranges[2*s:]))
			if start > end || end == 0xFFFF && start == 0xFFFF {
				continue
			}
			for c := start; c <= end && budget > 0; c++ {
				budget--
				if ro == 0 {
					put(rune(c), uint32(uint16(c)+delta))
					continue
				}
				at := 16 + 6*segs + 2*s + ro + 2*(c-start)
				if at+2 > len(sub) {
					break
				}
				if g := binary.BigEndian.Uint16(sub[at:]); g != 0 {
					put(rune(c), uint32(g+delta))
				}
			}
		}
	case 12:
		if len(sub) < 16 {
			return nil
		}
		groups := int(binary.BigEndian.Uint32(sub[12:]))
		for k := 0; k < groups && 16+12*k+12 <= len(sub) && budget > 0; k++ {
			g := sub[16+12*k:]
			start, end, gid := binary.BigEndian.Uint32(g), binary.BigEndian.Uint32(g[4:]), binary.BigEndian.Uint32(g[8:])
			if end < start || end-start > 0x10FFFF {
				continue
			}
			for c := start; c <= end && c <= 0x10FFFF && budget > 0; c++ {
				budget--
				put(rune(c), gid+c-start)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cffOrdering returns the Ordering of a CID-keyed CFF program's ROS (in an OpenType font, of
// its CFF table), or "" when it has none.
func cffOrdering(data []byte) string {
	if len(data) >= 4 && string(data[:4]) == "OTTO" {
		data = sfntTable(data, "CFF ")
	}
	if len(data) < 4 || data[0] != 1 {
		return ""
	}
	p := int(data[2]) // header size
	_, p, ok := cffIndex(data, p)
	if !ok {
		return ""
	}
	top, p, ok := cffIndex(data, p) // Top DICT INDEX
	if !ok || len(top) == 0 {
		return ""
	}
	strs, _, ok := cffIndex(data, p)
	if !ok {
		return ""
	}
	// ROS (operator 12 30) has the operands SID SID number: registry, ordering, supplement.
	ros := cffDict(top[0])[1230]
	if len(ros) < 3 {
		return ""
	}
	sid := ros[len(ros)-2] - 391 // custom strings follow the 391 standard ones
	if sid >= 0 && sid < len(strs) {
		return string(strs[sid])
	}
	return ""
}

// cffIndex reads the CFF INDEX at p: its items and where the data after it starts.
func cffIndex(data []byte, p int) ([][]byte, int, bool) {
	if p+2 > len(data) {
		return nil, 0, false
	}
	count := int(binary.BigEndian.Uint16(data[p:]))
	if count == 0 {
		return nil, p + 2, true
	}
	if p+3 > len(data) {
		return nil, 0, false
	}
	offSize := int(data[p+2])
	if offSize < 1 || offSize > 4 || p+3+(count+1)*offSize > len(data) || count > 1<<16 {
		return nil, 0, false
	}
	off := func(i int) int {
		v := 0
		for k := 0; k < offSize; k++ {
			v = v<<8 | int(data[p+3+i*offSize+k])
		}
		return v
	}
	base := p + 3 + (count+1)*offSize - 1
	items := make([][]byte, count)
	for i := 0; i < count; i++ {
		a, b := base+off(i), base+off(i+1)
		if a < base || b < a || b > len(data) {
			return nil, 0, false
		}
		items[i] = data[a:b]
	}
	return items, base + off(count), true
}
