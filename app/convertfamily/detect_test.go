package convertfamily

import (
	"testing"
)

// TestDetectOfficeFormats: PowerPoint and Excel 97-2003 files are conversions, by content or
// (when the head shows only an OLE container) by name, and bytes of no known type named as a
// converted format are conversions too, so they fail as damaged rather than get a checksum.
func TestDetectOfficeFormats(t *testing.T) {
	ole := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 600)...)
	garbage := []byte("\x00\x01\x02 not a document \x00")
	for _, tc := range []struct {
		name string
		head []byte
		want string
	}{
		{"old.xls", ole, Type}, {"deck.pptx", ole, Type}, {"blob.ole", ole, ""},
		{"fake.pptx", garbage, Type}, {"fake.xls", garbage, Type}, {"fake.pdf", garbage, Type},
		{"fake.bin", garbage, ""},
	} {
		if got := (&Family{}).Detect(tc.name, tc.head); got != tc.want {
			t.Errorf("Detect(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
