package docjob

import (
	"encoding/binary"
	"errors"
	"strings"
	utf16std "unicode/utf16"
)

// cfb reads an OLE2 compound file (Microsoft's Compound File Binary format, [MS-CFB]): the
// container of Excel 97–2003 workbooks and other legacy Office files. It reads whole streams by
// name, following the sector chains of the FAT and the mini FAT, and refuses chains that loop,
// run outside the file or are longer than the stream they claim to hold.
type cfb struct {
	data     []byte
	ssz      int      // sector size (512 or 4096)
	fat      []uint32 // sector → next sector
	minifat  []uint32
	mini     []byte // the mini stream (the root entry's data)
	entries  []cfbEntry
	cutoff   uint32
	nsectors int
}

type cfbEntry struct {
	name  string
	typ   byte // 1 storage, 2 stream, 5 root
	start uint32
	size  uint64
}

const (
	cfbEnd  = 0xFFFFFFFE
	cfbFree = 0xFFFFFFFF
)

var errCFB = errors.New("not a valid compound file")

func openCFB(data []byte) (*cfb, error) {
	if len(data) < 512 || string(data[:8]) != string(oleMagic) {
		return nil, errCFB
	}
	le := binary.LittleEndian
	shift := le.Uint16(data[0x1E:])
	if shift != 9 && shift != 12 {
		return nil, errCFB
	}
	c := &cfb{data: data, ssz: 1 << shift, cutoff: le.Uint32(data[0x38:])}
	c.nsectors = (len(data) - c.ssz) / c.ssz
	if (len(data)-c.ssz)%c.ssz != 0 {
		c.nsectors++ // a truncated last sector is read as far as it goes
	}
	// FAT sectors: 109 in the header, the rest in the DIFAT chain
	var fatSecs []uint32
	for i := 0; i < 109; i++ {
		s := le.Uint32(data[0x4C+4*i:])
		if s < cfbEnd-5 {
			fatSecs = append(fatSecs, s)
		}
	}
	next := le.Uint32(data[0x44:])
	for hops := 0; next < cfbEnd-5; hops++ {
		if hops > c.nsectors {
			return nil, errCFB
		}
		sec, ok := c.sector(next)
		if !ok {
			return nil, errCFB
		}
		n := c.ssz/4 - 1
		for i := 0; i < n; i++ {
			if s := le.Uint32(sec[4*i:]); s < cfbEnd-5 {
				fatSecs = append(fatSecs, s)
			}
		}
		next = le.Uint32(sec[4*n:])
	}
	if len(fatSecs) > c.nsectors+1 {
		return nil, errCFB
	}
	for _, s := range fatSecs {
		sec, ok := c.sector(s)
		if !ok {
			return nil, errCFB
		}
		for i := 0; i+4 <= len(sec); i += 4 {
			c.fat = append(c.fat, le.Uint32(sec[i:]))
		}
	}
	dir, err := c.chain(le.Uint32(data[0x30:]), c.fat, nil, -1)
	if err != nil {
		return nil, err
	}
	for i := 0; i+128 <= len(dir); i += 128 {
		e := dir[i : i+128]
		nl := int(le.Uint16(e[64:]))
		if nl > 64 {
			nl = 64
		}
		u := make([]uint16, 0, 32)
		for j := 0; j+1 < nl; j += 2 {
			if ch := le.Uint16(e[j:]); ch != 0 {
				u = append(u, ch)
			}
		}
		c.entries = append(c.entries, cfbEntry{name: string(utf16std.Decode(u)), typ: e[66],
			start: le.Uint32(e[116:]), size: le.Uint64(e[120:]) & 0xFFFFFFFF})
	}
	if len(c.entries) == 0 || c.entries[0].typ != 5 {
		return nil, errCFB
	}
	root := c.entries[0]
	if mf := le.Uint32(data[0x3C:]); mf < cfbEnd-5 {
		b, err := c.chain(mf, c.fat, nil, -1)
		if err != nil {
			return nil, err
		}
		for i := 0; i+4 <= len(b); i += 4 {
			c.minifat = append(c.minifat, le.Uint32(b[i:]))
		}
	}
	if root.start < cfbEnd-5 && root.size > 0 {
		c.mini, err = c.chain(root.start, c.fat, nil, int64(root.size))
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// sector returns sector s's bytes (shorter when the file is truncated); ok is false outside it.
func (c *cfb) sector(s uint32) ([]byte, bool) {
	off := (int64(s) + 1) * int64(c.ssz)
	if int64(s) >= int64(c.nsectors) || off >= int64(len(c.data)) {
		return nil, false
	}
	end := off + int64(c.ssz)
	if end > int64(len(c.data)) {
		end = int64(len(c.data))
	}
	return c.data[off:end], true
}

// chain concatenates the sectors of a chain starting at start in table (the FAT, or the mini
// FAT when from is the mini stream), reading at most size bytes when size >= 0.
func (c *cfb) chain(start uint32, table []uint32, from []byte, size int64) ([]byte, error) {
	secSize := c.ssz
	if from != nil {
		secSize = 64
	}
	limit := int64(len(c.data))
	if from != nil {
		limit = int64(len(from))
	}
	if size > limit {
		return nil, errCFB
	}
	if from == nil && size > 0 {
		if b, ok := c.contiguous(start, table, size); ok {
			return b, nil // the usual layout: no copy of a large stream
		}
	}
	var out []byte
	if size >= 0 {
		out = make([]byte, 0, size)
	}
	s := start
	seen := make([]bool, len(table)+1)
	for s < cfbEnd-5 {
		if int(s) < len(seen) {
			if seen[s] {
				return nil, errors.New("compound file sector chain loops")
			}
			seen[s] = true
		}
		var sec []byte
		if from == nil {
			b, ok := c.sector(s)
			if !ok {
				return nil, errCFB
			}
			sec = b
		} else {
			off := int64(s) * 64
			if off >= int64(len(from)) {
				return nil, errCFB
			}
			sec = from[off:min(off+64, int64(len(from)))]
		}
		out = append(out, sec[:min(len(sec), secSize)]...)
		if size >= 0 && int64(len(out)) >= size {
			return out[:size], nil
		}
		if int(s) >= len(table) {
			return nil, errCFB
		}
		s = table[s]
	}
	if size >= 0 && int64(len(out)) < size {
		return nil, errors.New("compound file stream is shorter than its directory entry says")
	}
	return out, nil
}

// contiguous returns the size bytes of a FAT chain that runs through consecutive sectors as a
// slice of the file itself; ok is false when the chain jumps, ends early or leaves the file.
func (c *cfb) contiguous(start uint32, table []uint32, size int64) ([]byte, bool) {
	need := (size + int64(c.ssz) - 1) / int64(c.ssz)
	off := (int64(start) + 1) * int64(c.ssz)
	if off+size > int64(len(c.data)) {
		return nil, false
	}
	s := start
	for i := int64(1); i < need; i++ {
		if int(s) >= len(table) || table[s] != s+1 {
			return nil, false
		}
		s++
	}
	return c.data[off : off+size : off+size], true
}

// stream returns the first stream named one of names (case-insensitive); ok false when none.
func (c *cfb) stream(names ...string) ([]byte, bool, error) {
	for _, want := range names {
		for _, e := range c.entries {
			if e.typ != 2 || !strings.EqualFold(e.name, want) {
				continue
			}
			if e.size < uint64(c.cutoff) && c.mini != nil {
				b, err := c.chain(e.start, c.minifat, c.mini, int64(e.size))
				return b, true, err
			}
			b, err := c.chain(e.start, c.fat, nil, int64(e.size))
			return b, true, err
		}
	}
	return nil, false, nil
}
