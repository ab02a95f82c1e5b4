package csvjob

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/job"
)

// TestRecordOverTheLimit: a record longer than Options.MaxRecordBytes fails validation with
// E006 naming the line it starts on (both languages), whether the long record is one line, a
// quoted field with line breaks, or spans the read buffers; records up to the limit pass.
func TestRecordOverTheLimit(t *testing.T) {
	head := "ユーザーID,ログイン回数,投稿回数\n"
	rows := strings.Repeat("U00001,1,2\n", 50)
	cases := []struct {
		name, text string
		limit      int64
		line       int // 0: passes
	}{
		{"plain long line", head + rows + "U00002,1," + strings.Repeat("7", 5000) + "\n" + rows, 1000, 52},
		{"quoted with line breaks", head + rows + "U00002,1,\"" + strings.Repeat("ab\n", 2000) + "\"\n" + rows, 1000, 52},
		{"long last line without a line break", head + rows + "U00002,1," + strings.Repeat("7", 5000), 1000, 52},
		{"blank lines do not count", head + strings.Repeat("\n", 3000) + rows, 1000, 0},
		{"at the limit", head + rows + "U00002,1," + strings.Repeat("7", 1000-10) + "\n", 1000, 0},
		{"spanning read buffers", head + rows + "U00002,1," + strings.Repeat("7", 3*readBuf) + "\n" + rows, 2*readBuf + 5, 52},
		{"spanning read buffers, quoted", head + rows + "U00002,1,\"" + strings.Repeat("7\"\"", readBuf) + "\"\n" + rows, 2*readBuf + 5, 52},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := csvtest.WriteRaw(t, dir, "long.csv", csvtest.EncUTF8, c.text)
			_, err := Validate(context.Background(), blob.Local{}, path, filepath.Join(dir, "work"), Options{MaxRecordBytes: c.limit})
			if c.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			je := job.AsError(err)
			if je == nil || je.Code != job.E006 || je.Name != "ValidationError" ||
				!strings.Contains(je.Message, "line "+strconv.Itoa(c.line)+" is longer than the limit") || !strings.Contains(je.MessageJa, strconv.Itoa(c.line)+" 行目") {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestRecordOverTheDefaultLimit: with the default limit, a file holding one line longer than
// DefaultMaxRecordBytes is refused with E006.
func TestRecordOverTheDefaultLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a file over 16 MiB")
	}
	dir := t.TempDir()
	text := "ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,1," + strings.Repeat("7", DefaultMaxRecordBytes) + "\nU00003,1,2\n"
	path := csvtest.WriteRaw(t, dir, "long.csv", csvtest.EncUTF8, text)
	_, err := Validate(context.Background(), blob.Local{}, path, filepath.Join(dir, "work"), Options{})
	if je := job.AsError(err); je == nil || je.Code != job.E006 || !strings.Contains(je.Message, "line 3 is longer than the limit of 16") {
		t.Fatalf("got %v", err)
	}
}
