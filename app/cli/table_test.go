package cli

import (
	"fmt"
	"jobdesk/engine/textwidth"
	"strings"
	"testing"
)

// Japanese cells take two terminal cells per character: the next column starts at the same
// screen column on every line.
func TestTableAlignsWideText(t *testing.T) {
	var b strings.Builder
	tw := newTable(&b)
	fmt.Fprintf(tw, "ID\tNAME\tSTATUS\n")
	fmt.Fprintf(tw, "1\t売上データ.csv\tSUCCEEDED\n")
	fmt.Fprintf(tw, "12\treport.pdf\tFAILED\n")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%q", b.String())
	}
	for _, l := range lines {
		status := l[strings.LastIndex(l, "  ")+2:]
		if col := textwidth.Of(strings.TrimSuffix(l, status)); col != textwidth.Of("12  売上データ.csv  ") {
			t.Errorf("%q: STATUS starts at column %d", l, col)
		}
	}
	if strings.HasSuffix(lines[0], " ") {
		t.Errorf("the last cell is padded: %q", lines[0])
	}
}
