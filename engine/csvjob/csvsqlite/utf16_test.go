package csvsqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
)

// TestUTF16WithoutBOM: a UTF-16 file without a byte order mark (little- or big-endian, with
// Japanese in a text column, ideographic spaces included) is detected and loaded like the same
// file with one, not refused as binary.
func TestUTF16WithoutBOM(t *testing.T) {
	for _, enc := range []string{csvtest.EncUTF16LE, csvtest.EncUTF16BE} {
		t.Run(enc, func(t *testing.T) {
			dir := t.TempDir()
			g := csvtest.File{Rows: 3000, Users: 200, Enc: enc, Note: true, EOL: "\r\n", Seed: 5}
			rows := g.MakeRows()
			for i := range rows {
				if i%3 == 0 {
					rows[i].Note = "一　丁目" // U+4E00 and U+3000: a zero byte in the low half
				}
			}
			b := g.Render(g.Header(), g.Records(rows))
			if b[0] != 0xFF && b[0] != 0xFE {
				t.Fatalf("the generated file has no BOM to drop: % x", b[:4])
			}
			path := filepath.Join(dir, "nobom.csv")
			csvtest.WriteBytes(t, path, b[2:])
			db := openDB(t)
			s, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
			if err != nil || s.Status != csvjob.StatusSuccess || s.Encoding != enc || s.TotalRows != int64(len(rows)) {
				t.Fatalf("%+v %v", s, err)
			}
			checkTable(t, db, csvtest.Expected(rows))
		})
	}
}
