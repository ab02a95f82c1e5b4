// Package csvtest generates the CSV files the CSV job's tests and benchmarks read: user logs in
// every encoding, delimiter and line-ending style JobDesk accepts, with their expected per-user
// sums. It is for tests only; it does not import csvjob, so csvjob's own tests can use it.
package csvtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Encodings, spelled as csvjob spells them.
const (
	EncUTF8    = "UTF-8"
	EncUTF8BOM = "UTF-8 BOM"
	EncUTF16LE = "UTF-16LE"
	EncUTF16BE = "UTF-16BE"
	EncCP932   = "Shift_JIS"
	EncEUCJP   = "EUC-JP"
)

// File describes a generated test file.
type File struct {
	Rows     int
	Users    int
	Enc      string // EncUTF8, EncUTF8BOM, EncUTF16LE, EncUTF16BE, EncCP932, EncEUCJP
	Delim    byte
	EOL      string // "\n", "\r\n", "\r", or "mixed"
	Note     bool   // add a free-text 備考 column with quotes, delimiters and line breaks
	QuoteAll bool
	Seed     uint64
}

// Row is one generated row with its expected validity.
type Row struct {
	ID           string
	Login, Posts int64
	Note         string
}

// MakeRows returns deterministic valid rows.
func (g File) MakeRows() []Row {
	r := rand.New(rand.NewPCG(g.Seed, 7))
	out := make([]Row, g.Rows)
	notes := []string{"", "メモ", "東京, 大阪", "改行\nあり", `引用"符"`, "タブ\tあり", "ﾊﾝｶｸ", "表示"}
	for i := range out {
		out[i] = Row{ID: fmt.Sprintf("U%05d", 1+r.IntN(g.Users)), Login: int64(r.IntN(100)), Posts: int64(r.IntN(1000))}
		if g.Note {
			out[i].Note = notes[r.IntN(len(notes))]
		}
	}
	return out
}

// Expected returns the sums per user of rows.
func Expected(rows []Row) map[string][2]int64 {
	m := map[string][2]int64{}
	for _, r := range rows {
		v := m[r.ID]
		v[0] += r.Login
		v[1] += r.Posts
		m[r.ID] = v
	}
	return m
}

func quoteField(s string, delim byte, all bool) string {
	if all || strings.ContainsAny(s, string(delim)+"\"\r\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// Render writes header and records (already strings) in g's dialect and encoding.
func (g File) Render(header []string, records [][]string) []byte {
	g = g.Norm()
	var b strings.Builder
	eols := []string{"\n", "\r\n", "\r"}
	line := 0
	write := func(fields []string) {
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(g.Delim)
			}
			b.WriteString(quoteField(f, g.Delim, g.QuoteAll))
		}
		if g.EOL == "mixed" {
			b.WriteString(eols[line%3])
		} else {
			b.WriteString(g.EOL)
		}
		line++
	}
	write(header)
	for _, r := range records {
		write(r)
	}
	return EncodeAs(g.Enc, b.String())
}

// EncodeAs encodes s (UTF-8) as enc.
func EncodeAs(enc, s string) []byte {
	switch enc {
	case EncUTF8:
		return []byte(s)
	case EncUTF8BOM:
		return append([]byte("\xEF\xBB\xBF"), s...)
	case EncCP932:
		out, _, err := transform.Bytes(japanese.ShiftJIS.NewEncoder(), []byte(s))
		if err != nil {
			panic(err)
		}
		return out
	case EncEUCJP:
		out, _, err := transform.Bytes(japanese.EUCJP.NewEncoder(), []byte(s))
		if err != nil {
			panic(err)
		}
		return out
	case EncUTF16LE:
		out, _, err := transform.Bytes(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder(), []byte(s))
		if err != nil {
			panic(err)
		}
		return out
	case EncUTF16BE:
		out, _, err := transform.Bytes(unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder(), []byte(s))
		if err != nil {
			panic(err)
		}
		return out
	}
	panic("unknown encoding " + enc)
}

// Header is the file's header row.
func (g File) Header() []string {
	h := []string{"ユーザーID", "ログイン回数", "投稿回数"}
	if g.Note {
		h = append(h, "備考")
	}
	return h
}

// Records renders rows as fields.
func (g File) Records(rows []Row) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		rec := []string{r.ID, fmt.Sprint(r.Login), fmt.Sprint(r.Posts)}
		if g.Note {
			rec = append(rec, r.Note)
		}
		out[i] = rec
	}
	return out
}

// Write generates the file in dir and returns its path and rows.
func (g File) Write(t testing.TB, dir, name string) (string, []Row) {
	t.Helper()
	g = g.Norm()
	rows := g.MakeRows()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, g.Render(g.Header(), g.Records(rows)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, rows
}

// WriteRaw writes text (UTF-8) encoded as enc.
func WriteRaw(t testing.TB, dir, name, enc string, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, EncodeAs(enc, text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// BenchRows and BenchUsers size the benchmarks' user log (BenchFile).
const BenchRows, BenchUsers = 1_000_000, 50_000

var benchFiles sync.Map // encoding → path

// BenchFile writes the benchmarks' user log (ユーザーID,ログイン回数,投稿回数; BenchRows rows of
// BenchUsers users) in enc to a temporary folder once per encoding per process, and returns its
// path.
func BenchFile(t testing.TB, enc string) string {
	if p, ok := benchFiles.Load(enc); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "csvtest-bench")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "user-log-1m.csv")
	if err := os.WriteFile(p, BigUserLog(BenchRows, BenchUsers, enc), 0o600); err != nil {
		t.Fatal(err)
	}
	benchFiles.Store(enc, p)
	return p
}

// BigUserLog renders n rows for users users (the benchmark's file) straight into bytes.
func BigUserLog(n, users int, enc string) []byte {
	var b bytes.Buffer
	b.Grow(n * 16)
	b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	r := rand.New(rand.NewPCG(1, 2))
	var num [24]byte
	for i := 0; i < n; i++ {
		b.WriteString(fmt.Sprintf("U%05d", 1+r.IntN(users)))
		b.WriteByte(',')
		b.Write(appendInt(num[:0], r.IntN(100)))
		b.WriteByte(',')
		b.Write(appendInt(num[:0], r.IntN(1000)))
		b.WriteByte('\n')
	}
	if enc == EncUTF8 {
		return b.Bytes()
	}
	return EncodeAs(enc, b.String())
}

func appendInt(b []byte, n int) []byte { return fmt.Appendf(b, "%d", n) }

// MustTime parses a clock time "15:04:05".
func MustTime(hms string) (t time.Time) {
	t, err := time.Parse("15:04:05", hms)
	if err != nil {
		panic(err)
	}
	return t
}

// Norm fills in the defaults: comma, LF, UTF-8.
func (g File) Norm() File {
	if g.Delim == 0 {
		g.Delim = ','
	}
	if g.EOL == "" {
		g.EOL = "\n"
	}
	if g.Enc == "" {
		g.Enc = EncUTF8
	}
	return g
}

// WriteBytes writes b to path.
func WriteBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
