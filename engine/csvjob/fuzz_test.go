package csvjob

import (
	"bytes"
	"encoding/csv"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob/csvtest"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

type rec struct {
	line   int
	fields []string
	unterm bool
}

func readAll(buf []byte, delim byte, line int) []rec {
	r := NewReader(append([]byte(nil), buf...), delim, line)
	var out []rec
	for r.Next() {
		f := make([]string, len(r.Fields))
		for i, b := range r.Fields {
			f[i] = string(b)
		}
		out = append(out, rec{r.RecLine, f, r.Unterminated})
	}
	return out
}

// splitAndRead cuts buf with the validation splitter (fed in pieces of feedSize) and reads each
// chunk on its own, as the chunk processors do.
func splitAndRead(buf []byte, delim byte, chunkSize int64, feedSize int) ([]rec, int64, bool) {
	sp := &lineSplitter{delim: delim, line: 1, chunkSize: chunkSize, chunkStartLine: 1}
	for off := 0; off < len(buf); off += feedSize {
		sp.feed(buf[off:min(off+feedSize, len(buf))], int64(off))
	}
	unterm := sp.finish(int64(len(buf)))
	var out []rec
	for _, c := range sp.chunks {
		out = append(out, readAll(buf[c.Offset:c.Offset+c.Length], delim, c.FirstLine)...)
	}
	return out, sp.rows, unterm
}

// FuzzReader: the reader never panics, and cutting a file into chunks at the splitter's record
// boundaries — with any chunk size and any read-buffer size — yields exactly the records (and
// line numbers) of reading it whole, and the row count validation reports.
func FuzzReader(f *testing.F) {
	seeds := []string{
		"a,b,c\n1,2,3\n",
		"\"a\nb\",c\r\n\"x\"\"y\",z\r",
		"ユーザーID,ログイン回数\r\nU00001,\"5\"\n\n\nU2,3",
		"\"unterminated,1\n2,3\n",
		"a;b|c\td\r\r\n\n\"\"\"\"\n",
		"x\"y,\"z\"w\n\"\",\n,",
	}
	for _, s := range seeds {
		f.Add([]byte(s), byte(','), uint16(3), uint16(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, delim byte, chunk, feed uint16) {
		if delim == '"' || delim == '\n' || delim == '\r' {
			delim = ','
		}
		whole := readAll(data, delim, 1)
		parts, rows, unterm := splitAndRead(data, delim, int64(chunk%64)+1, int(feed%97)+1)
		if !reflect.DeepEqual(whole, parts) {
			t.Fatalf("chunked read differs:\nwhole %v\nparts %v", whole, parts)
		}
		if rows != int64(len(whole)) {
			t.Fatalf("splitter counted %d rows, reader %d", rows, len(whole))
		}
		if unterm != (len(whole) > 0 && whole[len(whole)-1].unterm) {
			t.Fatalf("unterminated: splitter %v, reader %v", unterm, whole)
		}
		for _, r := range whole[:max(len(whole)-1, 0)] {
			if r.unterm {
				t.Fatal("only the last record can be unterminated")
			}
		}
	})
}

// FuzzValidate: validation and chunk parsing of arbitrary bytes return a result or a coded error,
// never panic.
func FuzzValidate(f *testing.F) {
	f.Add([]byte("ユーザーID,ログイン回数,投稿回数\nU00001,1,2\n"))
	f.Add([]byte("\xEF\xBB\xBFユーザーID\tログイン回数\t投稿回数\r\nU00001\t\"1\"\t2"))
	f.Add([]byte("\xFF\xFE\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := dir + "/f.csv"
		csvtest.WriteBytes(t, path, data)
		b := blob.NewMux(blob.Local{})
		s, _, err := runEvents(t, NewProcessor(NewBlobStore(b), b, dir), path, "f-120000", Options{ChunkBytes: 16})
		if err != nil {
			return
		}
		if s.TotalRows != s.SuccessCount+s.ErrorCount {
			t.Fatalf("totals %+v", s)
		}
	})
}

// TestReaderMatchesEncodingCSV: on well-formed CSV the reader returns what encoding/csv returns.
func TestReaderMatchesEncodingCSV(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	alphabet := []string{"a", "ア", ",", "\"", "\n", "\r\n", " ", "1", ";", "|", "\t"}
	for iter := 0; iter < 300; iter++ {
		delim := Delimiters[r.IntN(len(Delimiters))]
		var recs [][]string
		nf := 1 + r.IntN(4)
		for i := 0; i < 1+r.IntN(8); i++ {
			rec := make([]string, nf)
			for j := range rec {
				var b strings.Builder
				for k := 0; k < r.IntN(5); k++ {
					b.WriteString(alphabet[r.IntN(len(alphabet))])
				}
				rec[j] = b.String()
			}
			if nf == 1 && rec[0] == "" {
				rec[0] = "x"
			}
			recs = append(recs, rec)
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Comma = rune(delim)
		w.UseCRLF = r.IntN(2) == 0
		w.WriteAll(recs)
		cr := csv.NewReader(bytes.NewReader(buf.Bytes()))
		cr.Comma = rune(delim)
		want, err := cr.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(buf.Bytes(), delim, 1)
		if len(got) != len(want) {
			t.Fatalf("%q: %d records, want %d", buf.String(), len(got), len(want))
		}
		for i := range want {
			// encoding/csv turns CRLF inside quotes into LF; the reader keeps the bytes.
			g := make([]string, len(got[i].fields))
			for j, s := range got[i].fields {
				g[j] = strings.ReplaceAll(s, "\r\n", "\n")
			}
			if !reflect.DeepEqual(g, want[i]) {
				t.Fatalf("%q record %d: %q, want %q", buf.String(), i, g, want[i])
			}
		}
	}
}

// TestSplitterRandom runs the chunking invariant of FuzzReader on generated files.
func TestSplitterRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	parts := []string{"a", "\"", ",", "\n", "\r", "\r\n", "ア", "\"\"", "x,y"}
	for iter := 0; iter < 2000; iter++ {
		var b strings.Builder
		for k := 0; k < r.IntN(40); k++ {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		data := []byte(b.String())
		whole := readAll(data, ',', 1)
		got, rows, _ := splitAndRead(data, ',', int64(1+r.IntN(20)), 1+r.IntN(30))
		if !reflect.DeepEqual(whole, got) || rows != int64(len(whole)) {
			t.Fatalf("%q: whole %v, parts %v (rows %d)", data, whole, got, rows)
		}
	}
}

// FuzzLooksLikeCSV: the content detector never panics and agrees with itself on a copy.
func FuzzLooksLikeCSV(f *testing.F) {
	f.Add([]byte("ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,3,4\nU00003,5,6\n"))
	f.Add([]byte("a\tb\n\"x\ny\"\t2\n3\t4\n5\t6\n"))
	f.Add([]byte("\xFF\xFEa\x00,\x00b\x00\n\x00"))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := append([]byte(nil), b...)
		if LooksLikeCSV(b) != LooksLikeCSV(c) {
			t.Fatal("not deterministic")
		}
		if !bytes.Equal(b, c) {
			t.Fatal("input modified")
		}
	})
}
