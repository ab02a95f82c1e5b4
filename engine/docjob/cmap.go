package docjob

import (
	"bufio"
	"compress/gzip"
	"embed"
	"sort"
	"strconv"
	"strings"
	"sync"
	unicode16 "unicode/utf16"
	"unicode/utf8"
)

// Predefined CMaps: older Japanese, Chinese and Korean report generators write text in a font
// JobDesk does not have (HeiseiMin-W3, Ryumin-Light, SimSun, not embedded), naming one of
// Adobe's predefined CMaps as its encoding (90ms-RKSJ-H, UniJIS-UCS2-H, GBK-EUC-H, B5pc-H,
// KSCms-UHC-H, …) and giving no ToUnicode map; others name Identity-H/V and give only their
// character collection (CIDSystemInfo's Ordering). The text is then read code → CID through
// that CMap (or the code is the CID) and CID → Unicode through the collection's table
// (Adobe-Japan1, -GB1, -CNS1, -Korea1), all shipped in cmaps/ (generated from Adobe's files by
// scripts/gencmaps; each collection's licence beside its tables: cmaps/LICENSE for Japan1,
// cmaps/LICENSE-GB1, …), so conversion stays offline.

//go:generate go run ../../scripts/gencmaps -src /usr/share/poppler -out cmaps

//go:embed cmaps/*.gz
var cmapFiles embed.FS

// cidRange maps the codes lo..hi of n bytes to the CIDs cid, cid+1, ….
type cidRange struct {
	n      int
	lo, hi uint32
	cid    uint32
}

// codeSpace is a codespace range of n bytes: each byte of a code lies between lo's and hi's.
type codeSpace struct {
	n      int
	lo, hi [4]byte
}

// cidCMap is a predefined CMap: code → CID in its character collection (ordering).
type cidCMap struct {
	ordering string
	spaces   []codeSpace
	ranges   []cidRange // sorted by n, then lo
	// An embedded CMap: its single codes (n<<32 | code → CID), and the predefined CMap it
	// uses for the codes it does not map (nil: none); linear: its ranges overlap, are kept in
	// the order written and looked up from the last.
	chars  map[uint64]uint32
	parent *cidCMap
	linear bool
}

// cid returns the CID of code (n bytes) and whether the CMap maps it.
func (m *cidCMap) cid(n int, code uint32) (uint32, bool) {
	if m.chars != nil {
		if c, ok := m.chars[uint64(n)<<32|uint64(code)]; ok {
			return c, true
		}
		if m.linear {
			for k := len(m.ranges) - 1; k >= 0; k-- { // a later range wins
				if r := m.ranges[k]; r.n == n && r.lo <= code && code <= r.hi {
					return r.cid + code - r.lo, true
				}
			}
		} else if c, ok := m.rangeCID(n, code); ok {
			return c, true
		}
		if m.parent != nil {
			return m.parent.cid(n, code)
		}
		return 0, false
	}
	return m.rangeCID(n, code)
}

// rangeCID looks code up in the sorted ranges that do not overlap.
func (m *cidCMap) rangeCID(n int, code uint32) (uint32, bool) {
	i := sort.Search(len(m.ranges), func(i int) bool {
		r := m.ranges[i]
		return r.n > n || (r.n == n && r.hi >= code)
	})
	if i < len(m.ranges) && m.ranges[i].n == n && m.ranges[i].lo <= code {
		return m.ranges[i].cid + code - m.ranges[i].lo, true
	}
	return 0, false
}

// codeLen is the length of the code at the start of s: the shortest codespace range it fits,
// or 1 for bytes in none (skipped as undefined).
func (m *cidCMap) codeLen(s string) int {
	for n := 1; n <= 4 && n <= len(s); n++ {
		for _, sp := range m.spaces {
			if sp.n != n {
				continue
			}
			ok := true
			for k := 0; k < n; k++ {
				if s[k] < sp.lo[k] || s[k] > sp.hi[k] {
					ok = false
					break
				}
			}
			if ok {
				return n
			}
		}
	}
	return 1
}

var (
	cmapMu     sync.Mutex
	cmapLoaded = map[string]*cidCMap{}
	ucsMu      sync.Mutex
	ucsLoaded  = map[string][]rune{} // ordering → CID → Unicode (0: none)
)

// loadCMap returns the embedded CMap name (a horizontal one), or nil when it is not shipped.
func loadCMap(name string) *cidCMap {
	cmapMu.Lock()
	defer cmapMu.Unlock()
	if m, ok := cmapLoaded[name]; ok {
		return m
	}
	var m *cidCMap
	if f, err := cmapFiles.Open("cmaps/" + name + ".gz"); err == nil {
		defer f.Close()
		if zr, err := gzip.NewReader(f); err == nil {
			m = &cidCMap{}
			sc := bufio.NewScanner(zr)
			for sc.Scan() {
				fs := strings.Fields(sc.Text())
				switch {
				case len(fs) == 2 && fs[0] == "ordering":
					m.ordering = fs[1]
				case len(fs) == 4 && fs[0] == "space":
					n, _ := strconv.Atoi(fs[1])
					if n < 1 || n > 4 || len(fs[2]) != 2*n || len(fs[3]) != 2*n {
						continue
					}
					sp := codeSpace{n: n}
					for k := 0; k < n; k++ {
						lo, _ := strconv.ParseUint(fs[2][2*k:2*k+2], 16, 8)
						hi, _ := strconv.ParseUint(fs[3][2*k:2*k+2], 16, 8)
						sp.lo[k], sp.hi[k] = byte(lo), byte(hi)
					}
					m.spaces = append(m.spaces, sp)
				case len(fs) == 3:
					lo, _ := strconv.ParseUint(fs[0], 16, 32)
					hi, _ := strconv.ParseUint(fs[1], 16, 32)
					cid, _ := strconv.ParseUint(fs[2], 10, 32)
					m.ranges = append(m.ranges, cidRange{n: len(fs[0]) / 2, lo: uint32(lo), hi: uint32(hi), cid: uint32(cid)})
				}
			}
		}
	}
	cmapLoaded[name] = m
	return m
}

// cidText returns the Unicode text of a CID of the character collection ordering (Japan1, GB1,
// CNS1, Korea1), or 0 when it has none or the collection is not shipped.
func cidText(ordering string, cid uint32) rune {
	t := ucsTable(ordering)
	if int(cid) < len(t) {
		return t[cid]
	}
	return 0
}

// hasCollection reports whether the table of the character collection ordering is shipped.
func hasCollection(ordering string) bool { return len(ucsTable(ordering)) > 0 }

func ucsTable(ordering string) []rune {
	ucsMu.Lock()
	defer ucsMu.Unlock()
	if t, ok := ucsLoaded[ordering]; ok {
		return t
	}
	var t []rune
	if strings.IndexByte(ordering, '/') < 0 && strings.IndexByte(ordering, '.') < 0 && ordering != "" {
		if f, err := cmapFiles.Open("cmaps/Adobe-" + ordering + "-UCS.gz"); err == nil {
			if zr, err := gzip.NewReader(f); err == nil {
				sc := bufio.NewScanner(zr)
				for sc.Scan() {
					v, _ := strconv.ParseUint(strings.TrimSpace(sc.Text()), 16, 32)
					if v == 0xA0 {
						v = ' '
					}
					t = append(t, rune(v))
				}
			}
			f.Close()
		}
	}
	ucsLoaded[ordering] = t
	return t
}

// predefinedEncoding decodes strings shown in a font whose encoding is a predefined CMap.
type predefinedEncoding struct {
	unicode string   // "UCS2", "UTF16", "UTF32", "UTF8" for a Unicode-keyed CMap, else ""
	cmap    *cidCMap // the CMap (Uni…-UTF32-H of its collection for the Unicode-keyed ones)
}

// newPredefinedEncoding returns the decoder of the predefined CMap name, or nil when JobDesk
// does not ship it. A vertical CMap (-V) reads as its horizontal one: vertical glyph variants
// stand for the same text.
func newPredefinedEncoding(name string) *predefinedEncoding {
	if name == "H" || name == "V" { // JIS X 0208 codes, Adobe-Japan1
		if m := loadCMap("H"); m != nil {
			return &predefinedEncoding{cmap: m}
		}
		return nil
	}
	base, ok := strings.CutSuffix(name, "-V")
	if !ok {
		base, ok = strings.CutSuffix(name, "-H")
	}
	if !ok {
		return nil
	}
	for _, uni := range []string{"UniJIS", "UniGB", "UniCNS", "UniKS"} {
		if !strings.HasPrefix(base, uni+"-") {
			continue
		}
		for _, u := range []string{"UCS2", "UTF16", "UTF32", "UTF8"} {
			if strings.HasSuffix(base, "-"+u) || strings.HasSuffix(base, "-"+u+"-HW") {
				if m := loadCMap(uni + "-UTF32-H"); m != nil {
					return &predefinedEncoding{unicode: u, cmap: m}
				}
			}
		}
		return nil
	}
	if m := loadCMap(base + "-H"); m != nil {
		return &predefinedEncoding{cmap: m}
	}
	return nil
}

// Decode returns the text of raw, a string of codes: code → CID through the CMap, CID → Unicode
// through its collection. A Unicode-keyed code whose CID has no text keeps its own code point;
// a byte-keyed code without text reads as U+FFFD (so an unmapped code is seen, not lost).
func (e *predefinedEncoding) Decode(raw string) string {
	var b strings.Builder
	if e.unicode != "" {
		for _, cp := range unicodeCodes(e.unicode, raw) {
			r := cp
			if cid, ok := e.cmap.cid(4, uint32(cp)); ok {
				if t := cidText(e.cmap.ordering, cid); t != 0 {
					r = t
				}
			}
			if r > 0 && utf8.ValidRune(r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	for len(raw) > 0 {
		n := e.cmap.codeLen(raw)
		var code uint32
		for k := 0; k < n; k++ {
			code = code<<8 | uint32(raw[k])
		}
		raw = raw[n:]
		b.WriteRune(e.cidRune(n, code))
	}
	return b.String()
}

// unicodeCodes splits raw into the code points a Unicode-keyed CMap's codes stand for.
func unicodeCodes(form, raw string) []rune {
	var out []rune
	switch form {
	case "UCS2":
		for i := 0; i+1 < len(raw); i += 2 {
			out = append(out, rune(raw[i])<<8|rune(raw[i+1]))
		}
	case "UTF16":
		units := make([]uint16, 0, len(raw)/2)
		for i := 0; i+1 < len(raw); i += 2 {
			units = append(units, uint16(raw[i])<<8|uint16(raw[i+1]))
		}
		out = unicode16.Decode(units)
	case "UTF32":
		for i := 0; i+3 < len(raw); i += 4 {
			out = append(out, rune(raw[i])<<24|rune(raw[i+1])<<16|rune(raw[i+2])<<8|rune(raw[i+3]))
		}
	case "UTF8":
		for _, r := range raw {
			if r != utf8.RuneError {
				out = append(out, r)
			}
		}
	}
	return out
}

// cidRune is the text of a byte-keyed code of n bytes, U+FFFD when it has none.
func (e *predefinedEncoding) cidRune(n int, code uint32) rune {
	if cid, ok := e.cmap.cid(n, code); ok {
		if t := cidText(e.cmap.ordering, cid); t != 0 {
			return t
		}
	}
	return '\uFFFD'
}
