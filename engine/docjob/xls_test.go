package docjob

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	utf16std "unicode/utf16"

	"golang.org/x/text/encoding/japanese"

	"jobdesk/engine/job"
)

// xlsCFB wraps stream as the one stream of an OLE2 compound file, padded to at least 4096
// bytes as Excel pads a workbook stream, so it lives in regular sectors, not the mini stream.
func xlsCFB(t testing.TB, name string, stream []byte) []byte {
	t.Helper()
	padded := append([]byte{}, stream...)
	for len(padded) < 4096 || len(padded)%512 != 0 {
		padded = append(padded, 0)
	}
	return makeCFB(cfbStreamNode(name, padded))
}

// xlsCFBMini stores stream (under 4096 bytes) in the compound file's mini stream, as writers
// other than Excel do for small workbooks.
func xlsCFBMini(t testing.TB, name string, stream []byte) []byte {
	t.Helper()
	if len(stream) >= 4096 {
		t.Fatalf("stream too large for the mini stream: %d", len(stream))
	}
	return makeCFB(cfbStreamNode(name, stream))
}

// biff builds a BIFF8 (or BIFF5) workbook stream record by record.
type biff struct {
	bytes.Buffer
	biff5 bool
}

func (b *biff) rec(typ uint16, body []byte) {
	var h [4]byte
	binary.LittleEndian.PutUint16(h[:], typ)
	binary.LittleEndian.PutUint16(h[2:], uint16(len(body)))
	b.Write(h[:])
	b.Write(body)
}

func le16s(v ...int) []byte {
	out := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
	}
	return out
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// xlStr is a BIFF8 XLUnicodeString with a 16-bit (or 8-bit) count, compressed when it can be.
func xlStr(s string, lenBytes int) []byte {
	u := utf16std.Encode([]rune(s))
	wide := false
	for _, c := range u {
		if c > 0xFF {
			wide = true
		}
	}
	var out []byte
	if lenBytes == 1 {
		out = []byte{byte(len(u))}
	} else {
		out = le16s(len(u))
	}
	if wide {
		out = append(out, 1)
		for _, c := range u {
			out = append(out, byte(c), byte(c>>8))
		}
	} else {
		out = append(out, 0)
		for _, c := range u {
			out = append(out, byte(c))
		}
	}
	return out
}

// sstRecords writes the shared strings as an SST record and CONTINUE records of at most limit
// bytes, breaking strings' characters across records (each continuation starts with a flags
// byte) and giving every string a phonetic block (as Japanese Excel does) that may break too.
func sstRecords(b *biff, strs []string, limit int) {
	var recs [][]byte
	cur := cat(u32(len(strs)), u32(len(strs)))
	flush := func(flag int) {
		recs = append(recs, cur)
		cur = nil
		if flag >= 0 {
			cur = []byte{byte(flag)}
		}
	}
	for _, s := range strs {
		u := utf16std.Encode([]rune(s))
		wide := 0
		for _, c := range u {
			if c > 0xFF {
				wide = 1
			}
		}
		phonetic := []byte{1, 0, 8, 0, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF}
		if len(cur)+7 > limit {
			flush(-1)
		}
		cur = append(cur, le16s(len(u))...)
		cur = append(cur, byte(wide|0x04))
		cur = append(cur, u32(len(phonetic))...)
		for _, c := range u {
			unit := []byte{byte(c)}
			if wide == 1 {
				unit = []byte{byte(c), byte(c >> 8)}
			}
			if len(cur)+len(unit) > limit {
				flush(wide)
			}
			cur = append(cur, unit...)
		}
		for _, x := range phonetic {
			if len(cur)+1 > limit {
				flush(-1)
			}
			cur = append(cur, x)
		}
	}
	recs = append(recs, cur)
	for i, r := range recs {
		typ := uint16(0x003C)
		if i == 0 {
			typ = 0x00FC
		}
		b.rec(typ, r)
	}
}

func u32(v int) []byte {
	out := make([]byte, 4)
	binary.LittleEndian.PutUint32(out, uint32(v))
	return out
}

func f64(v float64) []byte {
	out := make([]byte, 8)
	binary.LittleEndian.PutUint64(out, math.Float64bits(v))
	return out
}

func xf(ifmt int) []byte { return cat(le16s(0, ifmt), make([]byte, 16)) }

// makeXLS builds an old Japanese accounting export: a journal sheet with a merged title, shared
// strings broken across CONTINUE records, dates as yyyy/m/d and as Japanese era dates, amounts
// with thousands separators, a percentage, RK and MULRK numbers, formulas with number and string
// results, a boolean; then a hidden sheet and a chart sheet.
func makeXLS(t testing.TB, filepass bool) []byte {
	t.Helper()
	strs := []string{"仕訳帳（令和6年度）", "日付", "和暦", "勘定科目", "借方金額", "税率", "現金", "売掛金", "普通預金", "摘要はとても長い文字列で、レコードの境目をまたいで続きます。", "ok"}
	var g biff
	g.rec(0x0809, le16s(0x0600, 0x0005, 0, 0, 0, 0, 0, 0))
	if filepass {
		g.rec(0x002F, le16s(1, 1, 1))
	}
	g.rec(0x0042, le16s(1200))
	g.rec(0x041E, cat(le16s(164), xlStr(`[$-411]ggge"年"m"月"d"日"`, 2)))
	for _, f := range []int{0, 14, 164, 3, 9} { // XF 0..4
		g.rec(0x00E0, xf(f))
	}
	boundAt := g.Len()
	sheets := []struct {
		name string
		vis  byte
		typ  byte
	}{{"仕訳", 0, 0}, {"隠し", 1, 0}, {"グラフ1", 0, 2}}
	for _, s := range sheets {
		g.rec(0x0085, cat(u32(0), []byte{s.vis, s.typ}, xlStr(s.name, 1)))
	}
	sstRecords(&g, strs, 37)
	g.rec(0x000A, nil)
	var offsets []int
	// sheet 1
	offsets = append(offsets, g.Len())
	g.rec(0x0809, le16s(0x0600, 0x0010, 0, 0, 0, 0, 0, 0))
	lsst := func(r, c, i int) { g.rec(0x00FD, cat(le16s(r, c, 0), u32(i))) }
	lsst(0, 0, 0)
	g.rec(0x00E5, cat(le16s(1), le16s(0, 0, 0, 3))) // A1:D1 merged
	for c, i := range []int{1, 2, 3, 4, 5} {
		lsst(1, c, i)
	}
	g.rec(0x0203, cat(le16s(2, 0, 1), f64(45383))) // 2024/4/1
	g.rec(0x0203, cat(le16s(2, 1, 2), f64(45383))) // 令和6年4月1日
	lsst(2, 2, 6)
	g.rec(0x0203, cat(le16s(2, 3, 3), f64(1234567)))
	g.rec(0x027E, cat(le16s(2, 4, 4), u32((10<<2)|2|1))) // RK integer 10 / 100 = 0.1 → 10%
	g.rec(0x0203, cat(le16s(3, 0, 1), f64(45384)))
	g.rec(0x0006, cat(le16s(3, 1, 0), []byte{0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 8))) // string result
	g.rec(0x0207, xlStr("売上高", 2))
	lsst(3, 2, 7)
	g.rec(0x00BD, cat(le16s(3, 3), le16s(3), u32((5000<<2)|2), le16s(0), u32((7<<2)|2), le16s(4))) // MULRK D4:E4
	g.rec(0x0006, cat(le16s(4, 3, 3), f64(1239567), make([]byte, 8)))                              // formula number
	lsst(4, 2, 8)
	lsst(4, 0, 9)
	g.rec(0x0205, cat(le16s(4, 4, 0), []byte{1, 0}))
	// a cell comment on D3: the drawing object, its text box with the text in CONTINUE records
	// (split in two, as long texts are), then the NOTE naming the cell and the author
	g.rec(0x005D, cat(le16s(0x15, 0x12, 0x19, 1), make([]byte, 14), le16s(0, 0)))
	note := "経理部:\n請求書の再発行分"
	u := utf16std.Encode([]rune(note))
	g.rec(0x01B6, cat(le16s(0x212, 0), make([]byte, 6), le16s(len(u), 16), make([]byte, 4)))
	half := len(u) / 2
	part := func(us []uint16) []byte {
		out := []byte{1}
		for _, c := range us {
			out = append(out, byte(c), byte(c>>8))
		}
		return out
	}
	g.rec(0x003C, part(u[:half]))
	g.rec(0x003C, part(u[half:]))
	g.rec(0x003C, make([]byte, 16))
	g.rec(0x001C, cat(le16s(2, 3, 0, 1), xlStr("経理部", 2), []byte{0}))
	g.rec(0x000A, nil)
	// sheet 2 (hidden): a LABEL record rather than a shared string
	offsets = append(offsets, g.Len())
	g.rec(0x0809, le16s(0x0600, 0x0010, 0, 0, 0, 0, 0, 0))
	g.rec(0x0204, cat(le16s(0, 0, 0), xlStr("内部メモ", 2)))
	g.rec(0x000A, nil)
	// sheet 3 (chart)
	offsets = append(offsets, g.Len())
	g.rec(0x0809, le16s(0x0600, 0x0020, 0, 0, 0, 0, 0, 0))
	g.rec(0x000A, nil)
	out := g.Bytes()
	at := boundAt
	for _, off := range offsets {
		binary.LittleEndian.PutUint32(out[at+4:], uint32(off))
		at += 4 + int(binary.LittleEndian.Uint16(out[at+2:]))
	}
	return xlsCFB(t, "Workbook", out)
}

// TestXLS reads an Excel 97-2003 accounting export written by the test's own BIFF8 writer.
func TestXLS(t *testing.T) {
	data := makeXLS(t, false)
	if k := Detect(data, "journal.bin"); k != KindXLS {
		t.Fatalf("detected %s", k)
	}
	d, err := Convert(context.Background(), data, "仕訳.xls", Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown
	for _, want := range []string{
		"## 仕訳\n",
		"| 仕訳帳（令和6年度） | 仕訳帳（令和6年度） | 仕訳帳（令和6年度） | 仕訳帳（令和6年度） |",
		"| 日付 | 和暦 | 勘定科目 | 借方金額 | 税率 |",
		"| 2024/4/1 | 令和6年4月1日 | 現金 | 1,234,567 | 10% |",
		"| 2024/4/2 | 売上高 | 売掛金 | 5,000 | 7 |",
		"| 摘要はとても長い文字列で、レコードの境目をまたいで続きます。 |  | 普通預金 | 1,239,567 | TRUE |",
		"| 1,239,567 | TRUE |\n\n> Comment D3 (経理部): 請求書の再発行分\n\n## 隠し",
		"## 隠し (hidden)\n\n| 内部メモ |",
		"## グラフ1\n\n> (chart sheet)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
	if d.Kind != KindXLS || d.Pages != 3 || len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "隠し") {
		t.Fatalf("doc %+v", d)
	}
	if _, err := Convert(context.Background(), makeXLS(t, true), "locked.xls", Options{}); codeOf(err) != job.E005 {
		t.Fatalf("encrypted workbook: %v", err)
	}
}

// TestXLSBiff5ShiftJIS reads an Excel 95 (BIFF5) workbook whose strings are bytes in code page
// 932 (Shift_JIS), in a stream named Book.
func TestXLSBiff5ShiftJIS(t *testing.T) {
	sjis := func(s string) []byte {
		b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var g biff
	g.rec(0x0809, le16s(0x0500, 0x0005, 0, 0))
	g.rec(0x0042, le16s(932))
	name := sjis("得意先")
	boundAt := g.Len()
	g.rec(0x0085, cat(u32(0), []byte{0, 0, byte(len(name))}, name))
	g.rec(0x000A, nil)
	off := g.Len()
	g.rec(0x0809, le16s(0x0500, 0x0010, 0, 0))
	for c, s := range []string{"株式会社表示", "ソフト開発"} { // 表 and ソ have 0x5C as second byte
		b := sjis(s)
		g.rec(0x0204, cat(le16s(0, c, 0), le16s(len(b)), b))
	}
	g.rec(0x000A, nil)
	out := g.Bytes()
	binary.LittleEndian.PutUint32(out[boundAt+4:], uint32(off))
	// a small workbook lives in the compound file's mini stream
	d, err := Convert(context.Background(), xlsCFBMini(t, "Book", out), "old.xls", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "## 得意先") || !strings.Contains(d.Markdown, "| 株式会社表示 | ソフト開発 |") {
		t.Fatalf("got\n%s", d.Markdown)
	}
}

// TestXLSDamaged: garbage named .xls, a truncated workbook and a looping sector chain give E004.
func TestXLSDamaged(t *testing.T) {
	ctx := context.Background()
	if _, err := Convert(ctx, []byte("not a workbook\x00\x01"), "a.xls", Options{}); codeOf(err) != job.E004 || !strings.Contains(err.Error(), "Excel 97-2003") {
		t.Fatalf("garbage: %v", err)
	}
	data := makeXLS(t, false)
	if _, err := Convert(ctx, data[:1200], "a.xls", Options{}); codeOf(err) != job.E004 {
		t.Fatalf("truncated: %v", err)
	}
	loop := append([]byte{}, data...)
	binary.LittleEndian.PutUint32(loop[512+4*3:], 2) // sector 3 points back to sector 2
	if _, err := Convert(ctx, loop, "a.xls", Options{}); codeOf(err) != job.E004 {
		t.Fatalf("loop: %v", err)
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		code string
		want string
	}{
		{45383, "yyyy/m/d", "2024/4/1"}, {45383.5, "yyyy/m/d h:mm", "2024/4/1 12:00"},
		{45383, `[$-411]ggge"年"m"月"d"日"`, "令和6年4月1日"}, {32874, `[$-411]ge.m.d`, "H2.1.1"},
		{0.75, "h:mm:ss", "18:00:00"}, {1234.5, "#,##0.00", "1,234.50"}, {-1234, "#,##0", "-1,234"},
		{0.125, "0.0%", "12.5%"}, {3, "General", "3"}, {0.1 + 0.2, "General", "0.3"},
		{1500, `"¥"#,##0`, "¥1,500"}, {45383, `yyyy"年"m"月"d"日"(aaa)`, "2024年4月1日(月)"},
	} {
		if got := formatNumber(tc.v, tc.code, false); got != tc.want {
			t.Errorf("formatNumber(%v, %q) = %q, want %q", tc.v, tc.code, got, tc.want)
		}
	}
}

// TestXLSOverLimits: cells past BIFF8's grid (a damaged or hostile file) are not read, and the
// conversion says so (partial) instead of passing a shortened sheet off as whole.
func TestXLSOverLimits(t *testing.T) {
	var g biff
	g.rec(0x0809, le16s(0x0600, 0x0005, 0, 0, 0, 0, 0, 0))
	boundAt := g.Len()
	g.rec(0x0085, cat(u32(0), []byte{0, 0}, xlStr("Sheet1", 1)))
	g.rec(0x000A, nil)
	off := g.Len()
	g.rec(0x0809, le16s(0x0600, 0x0010, 0, 0, 0, 0, 0, 0))
	g.rec(0x0204, cat(le16s(0, 0, 0), xlStr("残す", 2)))
	g.rec(0x0204, cat(le16s(1, 300, 0), xlStr("範囲外", 2)))
	g.rec(0x000A, nil)
	out := g.Bytes()
	binary.LittleEndian.PutUint32(out[boundAt+4:], uint32(off))
	d, err := Convert(context.Background(), xlsCFB(t, "Workbook", out), "big.xls", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, why := d.Status(); st != StatusPartial || !strings.Contains(d.Markdown, "残す") || strings.Contains(d.Markdown, "範囲外") || why == "" {
		t.Fatalf("status %s %q\n%s", st, why, d.Markdown)
	}
}
