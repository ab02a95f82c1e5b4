package docjob

import (
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Embedded CMaps: a composite font may carry its encoding as a CMap stream instead of naming a
// predefined one (a producer's subset of UniJIS-UTF8-H, a CMap of its own). The stream's
// codespace ranges, cidrange and cidchar entries give code → CID as a predefined CMap's do;
// usecmap (in the stream or as the dictionary's UseCMap) names a predefined CMap that gives the
// codes the stream does not map; the character collection is the stream's CIDSystemInfo, else
// the one it uses, else the descendant font's.

// maxEmbeddedCMap bounds the entries (single codes and ranges) read from one embedded CMap;
// of ranges that overlap (looked up one by one) at most maxOverlappingRanges are kept.
const (
	maxEmbeddedCMap      = 1 << 17
	maxOverlappingRanges = 1024
)

// readEmbeddedCMap parses the CMap stream v; nil when it maps no code and uses no known CMap.
// vertical reports WMode 1.
func readEmbeddedCMap(v pdf.Value) (m *cidCMap, vertical bool) {
	var data []byte
	if safeCall(func() error {
		var err error
		data, err = io.ReadAll(io.LimitReader(v.Reader(), 8<<20))
		return err
	}) != nil && len(data) == 0 {
		return nil, false
	}
	var parent *cidCMap // a UseCMap stream (a CMap using an embedded one) is not followed
	if u := v.Key("UseCMap"); u.Kind() == pdf.Name {
		parent = loadPredefinedCMap(u.Name())
	}
	m, vertical = parseEmbeddedCMap(data, parent)
	if v.Key("WMode").Int64() == 1 {
		vertical = true
	}
	return m, vertical
}

// loadPredefinedCMap is the shipped CMap name (a vertical one reads as its horizontal one), or
// nil. Unicode-keyed CMaps are not used as a base here (their codes are not byte-keyed).
func loadPredefinedCMap(name string) *cidCMap {
	if name == "H" || name == "V" {
		return loadCMap("H")
	}
	if base, ok := strings.CutSuffix(name, "-V"); ok {
		name = base + "-H"
	}
	if strings.HasPrefix(name, "Uni") || strings.Contains(name, "/") || strings.Contains(name, ".") {
		return nil
	}
	return loadCMap(name)
}

// parseEmbeddedCMap parses the bytes of a CMap (see readEmbeddedCMap); parent is the CMap it
// uses, if known.
func parseEmbeddedCMap(data []byte, parent *cidCMap) (m *cidCMap, vertical bool) {
	defer func() {
		if recover() != nil {
			m, vertical = nil, false
		}
	}()
	toks := cmapTokens(data)
	m = &cidCMap{chars: map[uint64]uint32{}, parent: parent}
	count := 0
	hexOf := func(t string) ([]byte, bool) {
		if len(t) < 2 || t[0] != '<' {
			return nil, false
		}
		b := decodeHex(t[1 : len(t)-1])
		return b, len(b) >= 1 && len(b) <= 4
	}
	cidOf := func(t string) (uint32, bool) {
		n, err := strconv.ParseUint(t, 10, 32)
		return uint32(n), err == nil
	}
	for i := 0; i < len(toks) && count < maxEmbeddedCMap; i++ {
		switch toks[i] {
		case "begincodespacerange":
			for i++; i+1 < len(toks) && toks[i] != "endcodespacerange"; i += 2 {
				lo, ok1 := hexOf(toks[i])
				hi, ok2 := hexOf(toks[i+1])
				if !ok1 || !ok2 || len(lo) != len(hi) {
					continue
				}
				sp := codeSpace{n: len(lo)}
				copy(sp.lo[:], lo)
				copy(sp.hi[:], hi)
				m.spaces = append(m.spaces, sp)
			}
		case "begincidrange":
			for i++; i+2 < len(toks) && toks[i] != "endcidrange" && count < maxEmbeddedCMap; i += 3 {
				lo, ok1 := hexOf(toks[i])
				hi, ok2 := hexOf(toks[i+1])
				cid, ok3 := cidOf(toks[i+2])
				if !ok1 || !ok2 || !ok3 || len(lo) != len(hi) {
					continue
				}
				r := cidRange{n: len(lo), lo: bytesCode(lo), hi: bytesCode(hi), cid: cid}
				if r.lo <= r.hi {
					m.ranges = append(m.ranges, r)
					count++
				}
			}
		case "begincidchar":
			for i++; i+1 < len(toks) && toks[i] != "endcidchar" && count < maxEmbeddedCMap; i += 2 {
				code, ok1 := hexOf(toks[i])
				cid, ok2 := cidOf(toks[i+1])
				if !ok1 || !ok2 {
					continue
				}
				m.chars[uint64(len(code))<<32|uint64(bytesCode(code))] = cid
				count++
			}
		case "usecmap":
			if i > 0 && m.parent == nil && strings.HasPrefix(toks[i-1], "/") {
				m.parent = loadPredefinedCMap(toks[i-1][1:])
			}
		case "/Ordering":
			if i+1 < len(toks) && strings.HasPrefix(toks[i+1], "(") {
				m.ordering = strings.Trim(toks[i+1], "()")
			}
		case "/WMode":
			vertical = i+1 < len(toks) && toks[i+1] == "1"
		}
	}
	sorted := slices.Clone(m.ranges)
	sort.SliceStable(sorted, func(a, b int) bool {
		if sorted[a].n != sorted[b].n {
			return sorted[a].n < sorted[b].n
		}
		return sorted[a].lo < sorted[b].lo
	})
	for k := 1; k < len(sorted); k++ {
		if sorted[k].n == sorted[k-1].n && sorted[k].lo <= sorted[k-1].hi {
			m.linear = true // overlapping ranges: written order decides
			break
		}
	}
	if m.linear {
		m.ranges = m.ranges[:min(len(m.ranges), maxOverlappingRanges)]
	} else {
		m.ranges = sorted
	}
	if m.parent != nil {
		if len(m.spaces) == 0 {
			m.spaces = m.parent.spaces
		}
		if m.ordering == "" {
			m.ordering = m.parent.ordering
		}
	}
	if len(m.chars) == 0 && len(m.ranges) == 0 && m.parent == nil {
		return nil, vertical
	}
	return m, vertical
}
