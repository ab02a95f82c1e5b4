package csvjob

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// genFile describes a generated test file.
type genFile struct {
	rows     int
	users    int
	enc      string // EncUTF8, EncUTF8BOM, EncUTF16LE, EncUTF16BE, EncCP932, EncEUCJP
	delim    byte
	eol      string // "\n", "\r\n", "\r", or "mixed"
	note     bool   // add a free-text 備考 column with quotes, delimiters and line breaks
	quoteAll bool
	seed     uint64
}

// genRow is one generated row with its expected validity.
type genRow struct {
	id           string
	login, posts int64
	note         string
}

// makeRows returns deterministic valid rows.
func (g genFile) makeRows() []genRow {
	r := rand.New(rand.NewPCG(g.seed, 7))
	out := make([]genRow, g.rows)
	notes := []string{"", "メモ", "東京, 大阪", "改行\nあり", `引用"符"`, "タブ\tあり", "ﾊﾝｶｸ", "表示"}
	for i := range out {
		out[i] = genRow{id: fmt.Sprintf("U%05d", 1+r.IntN(g.users)), login: int64(r.IntN(100)), posts: int64(r.IntN(1000))}
		if g.note {
			out[i].note = notes[r.IntN(len(notes))]
		}
	}
	return out
}

// expected sums per user of rows.
func expected(rows []genRow) map[string][2]int64 {
	m := map[string][2]int64{}
	for _, r := range rows {
		v := m[r.id]
		v[0] += r.login
		v[1] += r.posts
		m[r.id] = v
	}
	return m
}

func quoteField(s string, delim byte, all bool) string {
	if all || strings.ContainsAny(s, string(delim)+"\"\r\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// render writes header and records (already strings) in g's dialect and encoding.
func (g genFile) render(header []string, records [][]string) []byte {
	g = g.norm()
	var b strings.Builder
	eols := []string{"\n", "\r\n", "\r"}
	line := 0
	write := func(fields []string) {
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(g.delim)
			}
			b.WriteString(quoteField(f, g.delim, g.quoteAll))
		}
		if g.eol == "mixed" {
			b.WriteString(eols[line%3])
		} else {
			b.WriteString(g.eol)
		}
		line++
	}
	write(header)
	for _, r := range records {
		write(r)
	}
	return encodeAs(g.enc, b.String())
}

func encodeAs(enc, s string) []byte {
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

func (g genFile) header() []string {
	h := []string{"ユーザーID", "ログイン回数", "投稿回数"}
	if g.note {
		h = append(h, "備考")
	}
	return h
}

func (g genFile) records(rows []genRow) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		rec := []string{r.id, fmt.Sprint(r.login), fmt.Sprint(r.posts)}
		if g.note {
			rec = append(rec, r.note)
		}
		out[i] = rec
	}
	return out
}

// write generates the file in dir and returns its path and rows.
func (g genFile) write(t testing.TB, dir, name string) (string, []genRow) {
	t.Helper()
	g = g.norm()
	rows := g.makeRows()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, g.render(g.header(), g.records(rows)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, rows
}

// writeRaw writes text (UTF-8) encoded as enc.
func writeRaw(t testing.TB, dir, name, enc string, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, encodeAs(enc, text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// bigUserLog renders n rows for users users (the benchmark's file) straight into bytes.
func bigUserLog(n, users int, enc string) []byte {
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
	return encodeAs(enc, b.String())
}

func appendInt(b []byte, n int) []byte { return fmt.Appendf(b, "%d", n) }

func mustTime(hms string) (t time.Time) {
	t, err := time.Parse("15:04:05", hms)
	if err != nil {
		panic(err)
	}
	return t
}

func (g genFile) norm() genFile {
	if g.delim == 0 {
		g.delim = ','
	}
	if g.eol == "" {
		g.eol = "\n"
	}
	if g.enc == "" {
		g.enc = EncUTF8
	}
	return g
}

func writeBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
