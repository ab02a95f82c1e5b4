package docjob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/job"
)

// TestEmptyFilesFail: a 0-byte file of every document type fails E004 "the file is empty" in
// both languages, through the job handler as through Convert, instead of succeeding as an empty
// document.
func TestEmptyFilesFail(t *testing.T) {
	c, _ := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	for _, name := range []string{"a.pdf", "b.docx", "c.xlsx", "d.zip", "e.png", "f.jpg", "g.txt"} {
		p := filepath.Join(in, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, force := range []bool{false, true, false} { // a stored failure answers the same
			res, err := run(t, c, dataDir, Input{Path: p, Force: force})
			var je *job.Error
			if !errors.As(err, &je) || je.Code != job.E004 || je.Name != ErrNameEmpty ||
				!strings.Contains(je.Message, "the file is empty") || !strings.Contains(je.MessageJa, "ファイルが空です") {
				t.Fatalf("%s: err = %v (result %+v)", name, err, res)
			}
		}
		if _, err := Convert(context.Background(), nil, name, Options{}); codeOf(err) != job.E004 || !strings.Contains(err.Error(), "empty") {
			t.Fatalf("Convert %s: %v", name, err)
		}
	}
	if ErrorCode(ErrNameEmpty) != job.E004 {
		t.Fatal("ErrNameEmpty has no code")
	}
}
