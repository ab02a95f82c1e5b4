package docjob

import (
	"encoding/binary"
	"sort"
	"strings"
	u16 "unicode/utf16"
)

// cfbNode is a storage or stream for makeCFB: a stream has Data (possibly empty) and no
// Kids; a storage has Kids.
type cfbNode struct {
	Name    string
	Data    []byte
	Kids    []*cfbNode
	storage bool
}

func cfbStreamNode(name string, data []byte) *cfbNode { return &cfbNode{Name: name, Data: data} }
func cfbStorageNode(name string, kids ...*cfbNode) *cfbNode {
	return &cfbNode{Name: name, Kids: kids, storage: true}
}

// makeCFB writes a version 3 compound file (512-byte sectors) holding root's children: streams
// under 4096 bytes go to the mini stream as Office writes them, larger ones to regular sectors.
// Siblings form a balanced binary tree in the order [MS-CFB] sorts names (length, then
// upper-cased), so any reader that walks the tree finds them.
func makeCFB(kids ...*cfbNode) []byte {
	const ssz = 512
	le := binary.LittleEndian
	type dirent struct {
		node               *cfbNode
		typ                byte
		left, right, child uint32
		start              uint32
		size               uint64
	}
	root := &cfbNode{Name: "Root Entry", Kids: kids, storage: true}
	var ents []*dirent
	var add func(n *cfbNode, typ byte) uint32
	add = func(n *cfbNode, typ byte) uint32 {
		id := uint32(len(ents))
		d := &dirent{node: n, typ: typ, left: cfbFree, right: cfbFree, child: cfbFree}
		ents = append(ents, d)
		if n.storage || typ == cfbRoot {
			ks := append([]*cfbNode(nil), n.Kids...)
			sort.Slice(ks, func(i, j int) bool {
				a, b := strings.ToUpper(ks[i].Name), strings.ToUpper(ks[j].Name)
				if len(a) != len(b) {
					return len(a) < len(b)
				}
				return a < b
			})
			ids := make([]uint32, len(ks))
			for i, k := range ks {
				t := byte(cfbStream)
				if k.storage {
					t = cfbStorage
				}
				ids[i] = add(k, t)
			}
			var tree func(lo, hi int) uint32
			tree = func(lo, hi int) uint32 {
				if lo >= hi {
					return cfbFree
				}
				m := (lo + hi) / 2
				ents[ids[m]].left = tree(lo, m)
				ents[ids[m]].right = tree(m+1, hi)
				return ids[m]
			}
			d.child = tree(0, len(ids))
		}
		return id
	}
	add(root, cfbRoot)

	// Lay out the mini stream and the large streams.
	var mini []byte
	var minifat []uint32
	var big [][]byte
	var bigEnts []*dirent
	for _, d := range ents {
		if d.typ != cfbStream {
			continue
		}
		d.size = uint64(len(d.node.Data))
		if len(d.node.Data) == 0 {
			d.start = cfbEndOfChain
			continue
		}
		if len(d.node.Data) < 4096 {
			d.start = uint32(len(mini) / 64)
			n := (len(d.node.Data) + 63) / 64
			for i := 0; i < n; i++ {
				if i == n-1 {
					minifat = append(minifat, cfbEndOfChain)
				} else {
					minifat = append(minifat, uint32(len(minifat)+1))
				}
			}
			mini = append(mini, d.node.Data...)
			for len(mini)%64 != 0 {
				mini = append(mini, 0)
			}
			continue
		}
		big = append(big, d.node.Data)
		bigEnts = append(bigEnts, d)
	}
	sectors := func(n int) int { return (n + ssz - 1) / ssz }
	nDir := sectors(len(ents) * 128)
	nMiniFAT := sectors(len(minifat) * 4)
	nMini := sectors(len(mini))
	nBig := 0
	for _, b := range big {
		nBig += sectors(len(b))
	}
	nData := nDir + nMiniFAT + nMini + nBig
	nFAT := 1
	for (nFAT+nData+127)/128 > nFAT {
		nFAT++
	}
	if nFAT > 109 {
		panic("makeCFB: file too large for a header-only DIFAT")
	}
	fat := make([]uint32, nFAT*128)
	for i := range fat {
		fat[i] = cfbFree
	}
	next := uint32(0)
	for i := 0; i < nFAT; i++ {
		fat[next] = 0xFFFFFFFD // FATSECT
		next++
	}
	run := func(n int) uint32 {
		if n == 0 {
			return cfbEndOfChain
		}
		start := next
		for i := 0; i < n; i++ {
			if i == n-1 {
				fat[next] = cfbEndOfChain
			} else {
				fat[next] = next + 1
			}
			next++
		}
		return start
	}
	dirStart := run(nDir)
	miniFATStart := run(nMiniFAT)
	miniStart := run(nMini)
	for i, b := range big {
		bigEnts[i].start = run(sectors(len(b)))
	}
	ents[0].start, ents[0].size = miniStart, uint64(len(mini))
	if len(mini) == 0 {
		ents[0].start = cfbEndOfChain
	}

	out := make([]byte, ssz*(1+int(next)))
	h := out[:ssz]
	copy(h, oleMagic)
	le.PutUint16(h[0x18:], 0x3E)
	le.PutUint16(h[0x1A:], 3)
	le.PutUint16(h[0x1C:], 0xFFFE)
	le.PutUint16(h[0x1E:], 9)
	le.PutUint16(h[0x20:], 6)
	le.PutUint32(h[0x2C:], uint32(nFAT))
	le.PutUint32(h[0x30:], dirStart)
	le.PutUint32(h[0x38:], 4096)
	le.PutUint32(h[0x3C:], miniFATStart)
	le.PutUint32(h[0x40:], uint32(nMiniFAT))
	le.PutUint32(h[0x44:], cfbEndOfChain)
	for i := 0; i < 109; i++ {
		v := uint32(cfbFree)
		if i < nFAT {
			v = uint32(i)
		}
		le.PutUint32(h[0x4C+4*i:], v)
	}
	sect := func(s uint32) []byte { return out[ssz*(int(s)+1):] }
	for i, v := range fat {
		le.PutUint32(sect(uint32(i / 128))[4*(i%128):], v)
	}
	dir := sect(dirStart)
	for i, d := range ents {
		e := dir[128*i : 128*i+128]
		u := u16.Encode([]rune(d.node.Name))
		for j, v := range u {
			le.PutUint16(e[2*j:], v)
		}
		le.PutUint16(e[64:], uint16(2*len(u)+2))
		e[66], e[67] = d.typ, 1
		le.PutUint32(e[68:], d.left)
		le.PutUint32(e[72:], d.right)
		le.PutUint32(e[76:], d.child)
		le.PutUint32(e[116:], d.start)
		le.PutUint64(e[120:], d.size)
	}
	for i := len(ents); i < nDir*4; i++ {
		e := dir[128*i : 128*i+128]
		le.PutUint32(e[68:], cfbFree)
		le.PutUint32(e[72:], cfbFree)
		le.PutUint32(e[76:], cfbFree)
	}
	if nMiniFAT > 0 {
		mf := sect(miniFATStart)
		for i := 0; i < nMiniFAT*128; i++ {
			v := uint32(cfbFree)
			if i < len(minifat) {
				v = minifat[i]
			}
			le.PutUint32(mf[4*i:], v)
		}
	}
	if nMini > 0 {
		copy(sect(miniStart), mini)
	}
	for i, b := range big {
		copy(sect(bigEnts[i].start), b)
	}
	return out
}
