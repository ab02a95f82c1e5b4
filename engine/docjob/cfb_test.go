package docjob

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestCFBReadsMiniAndRegularStreams(t *testing.T) {
	big := bytes.Repeat([]byte("大きなストリーム。"), 900) // > 4096 bytes: regular sectors
	small := []byte("small stream in the mini stream")
	data := makeCFB(
		cfbStreamNode("Alpha", small),
		cfbStorageNode("Folder", cfbStreamNode("Inner", []byte("inner")), cfbStreamNode("Empty", nil)),
		cfbStreamNode("Big", big),
	)
	c, err := openCFB(data)
	if err != nil {
		t.Fatal(err)
	}
	read := func(parent int, name string) []byte {
		t.Helper()
		i := c.find(parent, name)
		if i < 0 {
			t.Fatalf("%s not found", name)
		}
		b, err := c.read(i)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := read(0, "alpha"); !bytes.Equal(got, small) {
		t.Errorf("Alpha = %q", got)
	}
	if got := read(0, "Big"); !bytes.Equal(got, big) {
		t.Errorf("Big: %d bytes, want %d", len(got), len(big))
	}
	f := c.find(0, "Folder")
	if f < 0 || c.entries[f].Type != cfbStorage {
		t.Fatal("Folder is not a storage")
	}
	if got := read(f, "Inner"); string(got) != "inner" {
		t.Errorf("Inner = %q", got)
	}
	if got := read(f, "Empty"); len(got) != 0 {
		t.Errorf("Empty = %q", got)
	}
	if n := len(c.children(0)); n != 3 {
		t.Errorf("root has %d children, want 3", n)
	}
}

func TestCFBDamageIsAnErrorNotALoop(t *testing.T) {
	data := makeCFB(cfbStreamNode("Big", bytes.Repeat([]byte{1}, 9000)))
	c, err := openCFB(data)
	if err != nil {
		t.Fatal(err)
	}
	// Make the big stream's chain point back at its own first sector.
	i := c.find(0, "Big")
	start := c.entries[i].Start
	fatSect := binary.LittleEndian.Uint32(data[0x4C:])
	binary.LittleEndian.PutUint32(data[512*(int(fatSect)+1)+4*int(start+3):], start)
	c, err = openCFB(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.read(c.find(0, "Big")); err == nil {
		t.Error("a looping chain read without error")
	}
	for _, cut := range []int{0, 100, 512, 700, 1024} {
		if _, err := openCFB(data[:cut]); err == nil && cut < 1024 {
			t.Errorf("openCFB of %d bytes: no error", cut)
		}
	}
}

func FuzzCFB(f *testing.F) {
	f.Add(makeCFB(cfbStreamNode("A", []byte("x")), cfbStorageNode("S", cfbStreamNode("B", bytes.Repeat([]byte{2}, 5000)))))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := openCFB(data)
		if err != nil {
			return
		}
		for i := range c.entries {
			c.children(i)
			if c.entries[i].Type == cfbStream {
				c.read(i)
			}
		}
	})
}
