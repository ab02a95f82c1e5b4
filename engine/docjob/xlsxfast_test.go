package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// compareReaders converts every sheet of data twice, once with the fast reader and once with
// excelize's row iterator only (each on its own File), and fails on any difference in the
// cells. It returns how many sheets the fast reader took.
func compareReaders(t *testing.T, name string, data []byte) int {
	t.Helper()
	open := func() *excelize.File {
		f, err := excelize.OpenReader(bytes.NewReader(data), xlsxOptions())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return f
	}
	fa, fb, fc := open(), open(), open()
	defer fa.Close()
	defer fb.Close()
	defer fc.Close()
	sheets := fa.GetSheetList()
	fast := newFastWorkbook(fa)
	defer fast.close()
	probe := newFastWorkbook(fc)
	defer probe.close()
	taken := 0
	for _, sheet := range sheets {
		if probe != nil && probe.readRows(sheet, func(int, []string) error { return nil }) == nil {
			taken++
		}
		got, errA := sheetRows(context.Background(), fa, sheet, mayHaveMerges(fa, len(sheets)), fast)
		want, errB := sheetRows(context.Background(), fb, sheet, mayHaveMerges(fb, len(sheets)), nil)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%s/%s: fast err %v, iterator err %v", name, sheet, errA, errB)
		}
		var ga, gb strings.Builder
		writeTable(&ga, got)
		writeTable(&gb, want)
		if ga.String() != gb.String() || len(got) != len(want) {
			t.Fatalf("%s/%s: the readers differ\nfast:\n%s\niterator:\n%s", name, sheet, ga.String(), gb.String())
		}
		for i := range got {
			if strings.Join(got[i], "\x00") != strings.Join(want[i], "\x00") || len(got[i]) != len(want[i]) {
				t.Fatalf("%s/%s row %d: fast %q, iterator %q", name, sheet, i, got[i], want[i])
			}
		}
	}
	return taken
}

// withSheetXML returns data (an XLSX) with xl/worksheets/sheet1.xml replaced by a worksheet
// whose sheetData content is body.
func withSheetXML(t *testing.T, data []byte, body string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, e := range zr.File {
		w, err := zw.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if e.Name == "xl/worksheets/sheet1.xml" {
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+"\n"+
				`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac">`+
				body+`</worksheet>`)
			continue
		}
		r, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, r)
		r.Close()
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// baseBook is a workbook with shared strings and styles 1..n for the format codes, for
// withSheetXML to put hand-written sheets into.
func baseBook(t *testing.T, codes []string) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, code := range codes {
		c := code
		id, err := f.NewStyle(&excelize.Style{CustomNumFmt: &c})
		if err != nil || id != i+1 {
			t.Fatalf("style %q: id %d, %v", code, id, err)
		}
	}
	for i, s := range []string{"alpha", " 空白 ", "123", "A&B<C>", "_x0041_", ""} {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		f.SetCellStr("Sheet1", cell, s)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fastCodes are the format codes of the hand-written sheets' styles 1..n.
var fastCodes = []string{`yyyy/mm/dd`, `"￥"#,##0`, `0.0%`, `@`, `"x"@`, `[$-1030411]ggge"年"m"月"d"日"`, `General`, `;;;`, `0.00E+00`, `#,##0;[Red]-#,##0`}

// TestFastReaderMatchesIterator: for the corpus workbook and hand-written sheets, the fast reader
// gives exactly the cells excelize's iterator gives, and takes the sheets it should.
func TestFastReaderMatchesIterator(t *testing.T) {
	if n := compareReaders(t, "book.xlsx", readCorpus(t, "book.xlsx")); n != 2 {
		t.Errorf("book.xlsx: fast reader took %d of 2 sheets", n)
	}
	base := baseBook(t, fastCodes)
	for _, tc := range fastSheets {
		t.Run(tc.name, func(t *testing.T) {
			n := compareReaders(t, tc.name, withSheetXML(t, base, tc.body))
			if (n == 1) != tc.fast {
				t.Errorf("fast reader took %d sheets, want fast=%v", n, tc.fast)
			}
		})
	}
}

// fastSheets are hand-written sheetData elements and whether the fast reader takes them.
var fastSheets = []struct {
	name string
	body string
	fast bool
}{
	{"plain", `<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" s="1"><v>45383</v></c><c r="C1" s="2"><v>-1234.5</v></c></row></sheetData>`, true},
	{"no refs", `<sheetData><row><c t="s"><v>1</v></c><c s="3"><v>0.125</v></c><c/><c s="2"><v>12</v></c></row><row><c><v>1E-5</v></c></row></sheetData>`, true},
	{"gaps and order", `<sheetData><row r="2"><c r="C2"><v>3</v></c><c r="A2"><v>1</v></c></row><row r="5"/><row r="9" spans="1:3" x14ac:dyDescent="0.25"><c r='B9' s='2' t='n'><v>7</v></c></row></sheetData>`, true},
	{"whitespace", "<sheetData>\n  <row r=\"1\">\n    <c r=\"A1\" t=\"str\">\n      <v>A&amp;B &lt;x&gt; &quot;q&quot; &apos;</v>\n    </c>\n  </row>\n</sheetData>", true},
	{"types", `<sheetData><row r="1"><c r="A1" t="b"><v>1</v></c><c r="B1" t="b" s="1"><v>0</v></c><c r="C1" t="e"><v>#N/A</v></c><c r="D1" t="b"><v>2</v></c><c r="E1" t="zz"><v>5</v></c></row></sheetData>`, true},
	{"styled strings", `<sheetData><row r="1"><c r="A1" t="s" s="4"><v>2</v></c><c r="B1" t="s" s="5"><v>0</v></c><c r="C1" t="s" s="1"><v> 1 </v></c><c r="D1" t="s" s="8"><v>3</v></c><c r="E1" t="s"><v>4</v></c></row></sheetData>`, true},
	{"styled empties", `<sheetData><row r="1"><c r="A1" s="5"/><c r="B1" s="1"><v/></c><c r="C1" s="8"><v>5</v></c><c r="D1" s="99"><v>5.50</v></c><c r="E1" s="0"><v>007</v></c></row></sheetData>`, true},
	{"numbers", `<sheetData><row r="1"><c r="A1"><v>123456789012345678</v></c><c r="B1"><v>-0</v></c><c r="C1"><v> 12</v></c><c r="D1"><v>0x1p-2</v></c><c r="E1" s="9"><v>123456.789</v></c><c r="F1" s="10"><v>-98765</v></c><c r="G1" s="6"><v>43586</v></c><c r="H1" s="7"><v>0.1</v></c></row>` +
		`<row r="2"><c r="A2"><v>-123456789012345</v></c><c r="B2" s="2"><v>-123456789012345</v></c><c r="C2" s="2"><v>123456789012345</v></c><c r="D2" s="7"><v>-12345678901</v></c><c r="E2" s="7"><v>12345678901</v></c><c r="F2" s="2"><v>1234567890123456</v></c><c r="G2" s="2"><v>0</v></c><c r="H2" s="2"><v>-0</v></c></row></sheetData>`, true},
	{"formulas", `<sheetData><row r="1"><c r="A1"><v>2</v></c><c r="B1"><f>A1*3</f></c><c r="C1"><f>A1&amp;"x"</f><v></v></c><c r="D1" t="str"><f>A1</f><v>2</v></c><c r="E1"><f t="shared" ref="E1:E2" si="0"/><v>1</v></c></row></sheetData>`, true},
	{"inline strings", `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>x &amp; y</t></is></c><c r="B1" t="inlineStr" s="5"><is><t xml:space="preserve"> 12 </t></is></c><c r="C1" t="inlineStr" s="1"><v>7</v></c><c r="D1" t="inlineStr"><is/></c><c r="E1" t="inlineStr" s="5"><is></is></c><c r="F1" t="inlineStr"><is><t/></is></c><c r="G1" t="s"><is><t>ignored</t></is><v>0</v></c></row></sheetData>`, true},
	{"rich inline string", `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><r><t>x</t></r></is></c></row></sheetData>`, false},
	{"escaped inline string", `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>_x0041_</t></is></c></row></sheetData>`, false},
	{"iso date", `<sheetData><row r="1"><c r="A1" t="d" s="1"><v>2024-04-01T00:00:00Z</v></c></row></sheetData>`, false},
	{"char reference", `<sheetData><row r="1"><c r="A1" t="str"><v>&#65;</v></c></row></sheetData>`, false},
	{"rows backwards", `<sheetData><row r="3"><c r="A3"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row></sheetData>`, false},
	{"prefixed", `<x:sheetData xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:row r="1"><x:c r="A1"><x:v>1</x:v></x:c></x:row></x:sheetData>`, false},
	{"comment", `<sheetData><!-- c --><row r="1"><c r="A1"><v>1</v></c></row></sheetData>`, false},
	{"unknown child", `<sheetData><row r="1"><c r="A1"><v>1</v><extLst/></c></row></sheetData>`, false},
	{"bad style", `<sheetData><row r="1"><c r="A1" s="x"><v>1</v></c></row></sheetData>`, false},
	{"bad ref", `<sheetData><row r="1"><c r="1A"><v>1</v></c></row></sheetData>`, false},
	{"styled error", `<sheetData><row r="1"><c r="A1" t="e" s="2"><v>#DIV/0!</v></c></row></sheetData>`, false},
	{"escaped shared string styled", `<sheetData><row r="1"><c r="A1" t="s" s="4"><v>4</v></c><c r="B1" t="s"><v>4</v></c></row></sheetData>`, true},
	{"shared string out of range", `<sheetData><row r="1"><c r="A1" t="s"><v>99</v></c></row></sheetData>`, false},
	{"formula attributes", `<sheetData><row r="1"><c r="A1"><f t="shared" ref="A1:A2" si="0" aca="false" ca="1"/><v>1</v></c></row></sheetData>`, true},
	{"bad formula index", `<sheetData><row r="1"><c r="A1"><v>2</v></c><c r="B1"><f t="shared" ref="B1:B2" si=".0"/><v>1</v></c></row></sheetData>`, false},
	{"bad formula flag", `<sheetData><row r="1"><c r="A1"><f aca="maybe">1+1</f><v>2</v></c></row></sheetData>`, false},
	{"bad attribute name", `<sheetData><row ~="3"><c r="A3"><v>1</v></c></row></sheetData>`, false},
	{"malformed before sheetData", `</row><sheetData><row r="1"><c r="A1"><v>1</v></c></row></sheetData>`, false},
	{"stray bracket before sheetData", `<<sheetData><row r="1"><c r="A1"><v>1</v></c></row></sheetData>`, false},
	{"empty", `<sheetData/>`, true},
}

// FuzzFastReader: whatever the worksheet XML, the fast reader gives the iterator's cells or
// declines (and never hangs or panics).
func FuzzFastReader(f *testing.F) {
	for _, tc := range fastSheets {
		f.Add(tc.body)
	}
	var base []byte
	f.Fuzz(func(t *testing.T, body string) {
		if base == nil {
			base = baseBook(t, fastCodes)
		}
		compareReaders(t, "fuzz", withSheetXML(t, base, body))
	})
}

// TestFastReaderRandomFormats: random values in many number formats (custom and built-in,
// dates, Japanese eras, currency, percentages, fractions, text) read the same both ways.
func TestFastReaderRandomFormats(t *testing.T) {
	f := excelize.NewFile()
	codes := append([]string{`yyyy"年"m"月"d"日"`, `[$-411]ggge"年"m"月"d"日"`, `h:mm:ss`, `yyyy/m/d h:mm`, `# ?/?`, `0.000`, `#,##0.00`, `[$￥-411]#,##0`, `0%`, `mmm d, yyyy`,
		`#,##0`, `0`, `\¥#,##0`, `[$¥-ja-JP]#,##0" 円"`, `"税込 "0" 円"`, `#,##0;-#,##0`, `00000`, `#,##0,`, `0" 7"`, `"7"0`}, fastCodes...)
	var styles []int
	for _, code := range codes {
		c := code
		id, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &c})
		styles = append(styles, id)
	}
	for _, id := range []int{1, 2, 3, 4, 9, 10, 14, 22, 27, 31, 49, 55, 57, 58} {
		s, _ := f.NewStyle(&excelize.Style{NumFmt: id})
		styles = append(styles, s)
	}
	general, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	styles = append(styles, general)
	rng := rand.New(rand.NewSource(1))
	day := time.Date(1989, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := 1; r <= 400; r++ {
		for c := 1; c <= len(styles); c++ {
			cell, _ := excelize.CoordinatesToCellName(c, r)
			var v any
			switch rng.Intn(9) {
			case 0:
				v = rng.Intn(2000000) - 1000000
			case 7:
				v = rng.Int63n(2e15) - 1e15
			case 8:
				v = (rng.Int63n(2e11) - 1e11) / int64(1+rng.Intn(1000))
			case 1:
				v = rng.NormFloat64() * 1e4
			case 2:
				v = day.Add(time.Duration(rng.Int63n(40 * 365 * 24 * int64(time.Hour))))
			case 3:
				v = fmt.Sprintf("文字%d", rng.Intn(50))
			case 4:
				v = rng.Float64()
			case 5:
				v = float64(rng.Intn(100000)) + 0.5
			default:
				v = nil
			}
			if v != nil {
				f.SetCellValue("Sheet1", cell, v)
			}
			f.SetCellStyle("Sheet1", cell, cell, styles[(c+r)%len(styles)])
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if n := compareReaders(t, "random", buf.Bytes()); n != 1 {
		t.Errorf("fast reader took %d of 1 sheets", n)
	}
	// Again with a memo so small that it and the scratch workbook start over all the time.
	defer func(n int) { maxFormatMemo = n }(maxFormatMemo)
	maxFormatMemo = 500
	if n := compareReaders(t, "random, small memo", buf.Bytes()); n != 1 {
		t.Errorf("small memo: fast reader took %d of 1 sheets", n)
	}
}

// TestFastReaderStreamed: a workbook written by excelize's stream writer (as the benchmark's)
// reads the same both ways and through the fast reader.
func TestFastReaderStreamed(t *testing.T) {
	data := streamedWorkbook(t, 3000, func(r int) string { return fmt.Sprintf("利用者%05d | <&>", r%50) },
		func(r int) []any { return []any{r%3 == 0, float64(r) / 7} })
	if n := compareReaders(t, "streamed", data); n != 1 {
		t.Errorf("fast reader took %d of 1 sheets", n)
	}
}

// TestIntPattern: only General and plain integer formats between literals are shown without
// excelize; everything else (padding, scaling, sections, decimals, percentages, alignment)
// goes through it.
func TestIntPattern(t *testing.T) {
	for code, want := range map[string]bool{
		`General`: true, `general`: true, `0`: true, `#,##0`: true, `"￥"#,##0`: true, `[$￥-411]#,##0`: true,
		`\¥#,##0" 円"`: true, `[$-411]0`: true,
		`00000`: false, `#,##0,`: false, `#,##0;-#,##0`: false, `0.0`: false, `0%`: false, `#,##0_)`: false,
		`[Red]0`: false, `"a"@`: false, `#0`: false, `0 0`: false, `"unterminated`: false, `[$￥-411`: false, ``: false,
	} {
		if _, _, ok := intPattern(code); ok != want {
			t.Errorf("intPattern(%q) = %v, want %v", code, ok, want)
		}
	}
}
