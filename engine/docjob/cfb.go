package docjob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	u16 "unicode/utf16"
)

// cfb is a read-only view of an OLE2 compound file (Compound File Binary, [MS-CFB]): the
// container of Outlook .msg files, Excel 97–2003 workbooks and Word 97–2003 documents. It reads
// version 3 (512-byte sectors) and version 4 (4096-byte sectors) files held in memory, with the
// FAT, the DIFAT beyond the header, the mini FAT and the mini stream. Every sector chain is
// bounded by the number of sectors in the file, so a cyclic or damaged chain ends in an error,
// never in a loop or a panic.
type cfb struct {
	data     []byte
	ssz      int      // sector size: 512 or 4096
	fat      []uint32 // next sector of each sector
	minifat  []uint32 // next mini sector of each mini sector
	mini     []byte   // the mini stream (the root entry's stream)
	cutoff   uint64   // streams smaller than this live in the mini stream (4096)
	entries  []cfbEntry
	nsectors int
}

// cfbEntry is one directory entry: a storage (a folder), a stream (a file) or the root.
type cfbEntry struct {
	Name               string
	Type               byte // cfbStorage, cfbStream, cfbRoot (0: unused)
	Left, Right, Child uint32
	Start              uint32
	Size               uint64
}

// Directory entry types and special sector numbers of [MS-CFB].
const (
	cfbStorage = 1
	cfbStream  = 2
	cfbRoot    = 5

	cfbFree       = 0xFFFFFFFF // NOSTREAM / FREESECT
	cfbEndOfChain = 0xFFFFFFFE
	cfbMaxRegSect = 0xFFFFFFFA
)

// errCFB is the reason every damaged compound file gives the person.
var errCFB = reason("the OLE compound file structure is damaged")

// openCFB parses the header, FAT, mini FAT and directory of a compound file. It returns
// errCFB (wrapped with detail for the log) when the structure is inconsistent.
func openCFB(data []byte) (*cfb, error) {
	if len(data) < 512 || !bytes.HasPrefix(data, oleMagic) {
		return nil, errCFB
	}
	le := binary.LittleEndian
	c := &cfb{data: data}
	switch shift := le.Uint16(data[0x1E:]); shift {
	case 9, 12:
		c.ssz = 1 << shift
	default:
		return nil, fmt.Errorf("%w: sector shift %d", errCFB, shift)
	}
	if le.Uint16(data[0x20:]) != 6 {
		return nil, fmt.Errorf("%w: mini sector shift", errCFB)
	}
	c.nsectors = (len(data) - c.ssz) / c.ssz
	if (len(data)-c.ssz)%c.ssz != 0 {
		c.nsectors++ // a last sector cut short: readable up to the end of the data
	}
	nfat := int(le.Uint32(data[0x2C:]))
	firstDir := le.Uint32(data[0x30:])
	c.cutoff = uint64(le.Uint32(data[0x38:]))
	firstMiniFAT := le.Uint32(data[0x3C:])
	firstDIFAT := le.Uint32(data[0x44:])
	if nfat < 0 || nfat > c.nsectors {
		return nil, fmt.Errorf("%w: %d FAT sectors", errCFB, nfat)
	}
	// The FAT's sectors: 109 in the header, the rest in the DIFAT chain.
	var fatSects []uint32
	for i := 0; i < 109 && len(fatSects) < nfat; i++ {
		fatSects = append(fatSects, le.Uint32(data[0x4C+4*i:]))
	}
	per := c.ssz/4 - 1
	for s, n := firstDIFAT, 0; len(fatSects) < nfat && s <= cfbMaxRegSect; n++ {
		if n > c.nsectors {
			return nil, fmt.Errorf("%w: DIFAT chain loops", errCFB)
		}
		b, ok := c.sector(s)
		if !ok {
			return nil, fmt.Errorf("%w: DIFAT sector %d", errCFB, s)
		}
		for i := 0; i < per && len(fatSects) < nfat; i++ {
			fatSects = append(fatSects, le.Uint32(b[4*i:]))
		}
		s = le.Uint32(b[4*per:])
	}
	if len(fatSects) < nfat {
		return nil, fmt.Errorf("%w: FAT sectors missing", errCFB)
	}
	c.fat = make([]uint32, 0, nfat*c.ssz/4)
	for _, s := range fatSects {
		b, ok := c.sector(s)
		if !ok {
			return nil, fmt.Errorf("%w: FAT sector %d", errCFB, s)
		}
		for i := 0; i+4 <= len(b); i += 4 {
			c.fat = append(c.fat, le.Uint32(b[i:]))
		}
	}
	dir, err := c.chain(firstDir, -1)
	if err != nil {
		return nil, fmt.Errorf("%w: directory: %v", errCFB, err)
	}
	for i := 0; i+128 <= len(dir); i += 128 {
		e := dir[i : i+128]
		n := int(le.Uint16(e[64:]))
		if n > 64 {
			n = 64
		}
		u := make([]uint16, 0, n/2)
		for j := 0; j+1 < n; j += 2 {
			if v := le.Uint16(e[j:]); v != 0 {
				u = append(u, v)
			}
		}
		ent := cfbEntry{Name: string(u16.Decode(u)), Type: e[66], Left: le.Uint32(e[68:]), Right: le.Uint32(e[72:]),
			Child: le.Uint32(e[76:]), Start: le.Uint32(e[116:]), Size: le.Uint64(e[120:])}
		if c.ssz == 512 {
			ent.Size &= 0xFFFFFFFF // version 3 files may leave garbage in the high half
		}
		c.entries = append(c.entries, ent)
	}
	if len(c.entries) == 0 || c.entries[0].Type != cfbRoot {
		return nil, fmt.Errorf("%w: no root entry", errCFB)
	}
	if firstMiniFAT <= cfbMaxRegSect {
		b, err := c.chain(firstMiniFAT, -1)
		if err != nil {
			return nil, fmt.Errorf("%w: mini FAT: %v", errCFB, err)
		}
		c.minifat = make([]uint32, len(b)/4)
		for i := range c.minifat {
			c.minifat[i] = le.Uint32(b[4*i:])
		}
	}
	if root := c.entries[0]; root.Start <= cfbMaxRegSect && root.Size > 0 {
		if c.mini, err = c.chain(root.Start, int64(root.Size)); err != nil {
			return nil, fmt.Errorf("%w: mini stream: %v", errCFB, err)
		}
	}
	return c, nil
}

// sector returns sector s's bytes (the last one may be short), or false when s lies outside.
func (c *cfb) sector(s uint32) ([]byte, bool) {
	if s > cfbMaxRegSect || int(s) >= c.nsectors {
		return nil, false
	}
	off := (int(s) + 1) * c.ssz
	end := min(off+c.ssz, len(c.data))
	if off >= end {
		return nil, false
	}
	return c.data[off:end], true
}

// chain reads the sector chain starting at s: size bytes of it, or the whole chain when size
// is negative.
func (c *cfb) chain(s uint32, size int64) ([]byte, error) {
	if size > MaxFileSize || size > int64(len(c.data)) {
		return nil, fmt.Errorf("stream of %d bytes in a file of %d", size, len(c.data))
	}
	var out []byte
	if size >= 0 {
		out = make([]byte, 0, size)
	}
	seen := make([]uint64, c.nsectors/64+1)
	for s != cfbEndOfChain {
		if size >= 0 && int64(len(out)) >= size {
			break
		}
		b, ok := c.sector(s)
		if !ok || int(s) >= len(c.fat) {
			return nil, fmt.Errorf("sector %d out of range", s)
		}
		if seen[s/64]&(1<<(s%64)) != 0 {
			return nil, errors.New("sector chain loops")
		}
		seen[s/64] |= 1 << (s % 64)
		out = append(out, b...)
		s = c.fat[s]
	}
	if size >= 0 {
		if int64(len(out)) < size {
			return nil, errors.New("stream shorter than its size")
		}
		out = out[:size]
	}
	return out, nil
}

// read returns the bytes of stream entry i, from the mini stream when it is small.
func (c *cfb) read(i int) ([]byte, error) {
	if i < 0 || i >= len(c.entries) || c.entries[i].Type != cfbStream {
		return nil, fmt.Errorf("%w: entry %d is not a stream", errCFB, i)
	}
	e := c.entries[i]
	if e.Size == 0 {
		return nil, nil
	}
	if e.Size >= c.cutoff {
		b, err := c.chain(e.Start, int64(e.Size))
		if err != nil {
			return nil, fmt.Errorf("%w: stream %q: %v", errCFB, e.Name, err)
		}
		return b, nil
	}
	out := make([]byte, 0, e.Size)
	s := e.Start
	seen := make([]uint64, len(c.minifat)/64+1)
	for uint64(len(out)) < e.Size {
		if int(s) >= len(c.minifat) || seen[s/64]&(1<<(s%64)) != 0 {
			return nil, fmt.Errorf("%w: mini stream chain of %q", errCFB, e.Name)
		}
		seen[s/64] |= 1 << (s % 64)
		off := int(s) * 64
		if off+64 > len(c.mini) {
			return nil, fmt.Errorf("%w: mini sector %d out of range", errCFB, s)
		}
		out = append(out, c.mini[off:off+64]...)
		s = c.minifat[s]
	}
	return out[:e.Size], nil
}

// stream returns the first stream directly under the root named one of names (compared
// case-insensitively); ok is false when there is none. A large stream whose sectors follow one
// another in the file is returned as a slice of the file itself, without a copy.
func (c *cfb) stream(names ...string) (b []byte, ok bool, err error) {
	if len(c.entries) == 0 {
		return nil, false, nil
	}
	for _, want := range names {
		i := c.find(0, want)
		if i < 0 || c.entries[i].Type != cfbStream {
			continue
		}
		if e := c.entries[i]; e.Size >= c.cutoff {
			if b, ok := c.contiguous(e.Start, int64(e.Size)); ok {
				return b, true, nil
			}
		}
		b, err := c.read(i)
		return b, true, err
	}
	return nil, false, nil
}

// contiguous returns the size bytes of a FAT chain that runs through consecutive sectors as a
// slice of the file itself; ok is false when the chain jumps, ends early or leaves the file.
func (c *cfb) contiguous(start uint32, size int64) ([]byte, bool) {
	need := (size + int64(c.ssz) - 1) / int64(c.ssz)
	off := (int64(start) + 1) * int64(c.ssz)
	if start > cfbMaxRegSect || off+size > int64(len(c.data)) {
		return nil, false
	}
	s := start
	for i := int64(1); i < need; i++ {
		if int(s) >= len(c.fat) || c.fat[s] != s+1 {
			return nil, false
		}
		s++
	}
	return c.data[off : off+size : off+size], true
}

// children returns the entries directly inside storage i, walking its red-black tree of
// siblings in order (at most once per entry, so a damaged tree cannot loop).
func (c *cfb) children(i int) []int {
	if i < 0 || i >= len(c.entries) {
		return nil
	}
	var out []int
	seen := map[uint32]bool{}
	var walk func(id uint32, depth int)
	walk = func(id uint32, depth int) {
		if id == cfbFree || int(id) >= len(c.entries) || seen[id] || depth > 64 {
			return
		}
		seen[id] = true
		walk(c.entries[id].Left, depth+1)
		out = append(out, int(id))
		walk(c.entries[id].Right, depth+1)
	}
	walk(c.entries[i].Child, 0)
	return out
}

// find returns the entry named name (compared case-insensitively, as Windows does) directly
// inside storage i, or -1.
func (c *cfb) find(i int, name string) int {
	for _, k := range c.children(i) {
		if equalFoldASCII(c.entries[k].Name, name) {
			return k
		}
	}
	return -1
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
