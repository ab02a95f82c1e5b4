package docjob

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// layoutDrawing is one hand-written page of text placed string by string: ASCII in Courier
// (F1, 0.6 em a character) and anything else in HeiseiMin-W3 through UniJIS-UCS2-H (F2, not
// embedded: 1 em a Japanese character, half an em an ASCII one), as report generators write
// them.
type layoutDrawing struct{ c bytes.Buffer }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// drawnWidth is the advance of s at size in the font at() chooses.
func drawnWidth(s string, size float64) float64 {
	if isASCII(s) {
		return 0.6 * size * float64(len(s))
	}
	w := 0.0
	for _, r := range s {
		if r < 0x80 {
			w += 0.5
		} else {
			w++
		}
	}
	return w * size
}

// at shows s with its left end at x on the baseline y.
func (d *layoutDrawing) at(x, y, size float64, s string) { d.show(x, y, size, "", s) }

// show shows s at x, y after the text state operators ops (Tc, Tw, Tz, …).
func (d *layoutDrawing) show(x, y, size float64, ops, s string) {
	fmt.Fprintf(&d.c, "BT /%s %g Tf %s 1 0 0 1 %.2f %.2f Tm %s Tj ET\n", fontOf(s), size, ops, x, y, pdfString(s))
}

// fontOf is the font at() shows s in: F1 (Courier) for ASCII, else F2.
func fontOf(s string) string {
	if isASCII(s) {
		return "F1"
	}
	return "F2"
}

// pdfString is s as a string operand of fontOf(s): a literal in Courier, UCS-2 in hex in F2.
func pdfString(s string) string {
	if isASCII(s) {
		return "(" + strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s) + ")"
	}
	return "<" + hex.EncodeToString(ucs2(s)) + ">"
}

func (d *layoutDrawing) pdf() []byte {
	widths := strings.TrimSpace(strings.Repeat("600 ", 95))
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 8 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /FirstChar 32 /LastChar 126 /Widths ["+widths+"] >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /HeiseiMin-W3-UniJIS-UCS2-H /Encoding /UniJIS-UCS2-H /DescendantFonts [6 0 R] >>",
		"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /HeiseiMin-W3 /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 /W [1 95 500] >>",
		"<< /Type /FontDescriptor /FontName /HeiseiMin-W3 /Flags 6 /FontBBox [-123 -257 1001 910] /ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 709 /StemV 69 >>",
		pdfStream(d.c.Bytes()))
}

// wrapText breaks a paragraph into lines no wider than width: between words in English,
// between any two characters in Japanese.
func wrapText(text string, width, size float64) []string {
	var tokens []string
	sep := " "
	if isASCII(text) {
		tokens = strings.Fields(text)
	} else {
		sep = ""
		for _, r := range text {
			tokens = append(tokens, string(r))
		}
	}
	var lines []string
	cur := ""
	for _, t := range tokens {
		next := t
		if cur != "" {
			next = cur + sep + t
		}
		if cur != "" && drawnWidth(next, size) > width {
			lines = append(lines, cur)
			next = t
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// columnLines wraps paragraphs (each a list of sentences) into one column's lines, with an
// empty line between paragraphs.
func columnLines(paras [][]string, width, size float64) []string {
	var out []string
	for i, p := range paras {
		if i > 0 {
			out = append(out, "")
		}
		sep := " "
		if !isASCII(strings.Join(p, "")) {
			sep = ""
		}
		out = append(out, wrapText(strings.Join(p, sep), width, size)...)
	}
	return out
}

// drawColumns draws two columns line by line across both (the left column's line, then the
// right column's line on the same baseline) from y downwards, and returns the y below them.
func (d *layoutDrawing) drawColumns(y, size, gutter float64, left, right [][]string) float64 {
	const x0 = 56.0
	colWidth := (595 - 2*x0 - gutter) / 2
	l, r := columnLines(left, colWidth, size), columnLines(right, colWidth, size)
	for i := 0; i < max(len(l), len(r)); i++ {
		if i < len(l) && l[i] != "" {
			d.at(x0, y, size, l[i])
		}
		if i < len(r) && r[i] != "" {
			d.at(x0+colWidth+gutter, y, size, r[i])
		}
		y -= size * 1.3
	}
	return y
}

func flatten(paras ...[][]string) []string {
	var out []string
	for _, ps := range paras {
		for _, p := range ps {
			out = append(out, p...)
		}
	}
	return out
}

var (
	enLeft = [][]string{
		{"The subsidy supports small businesses that renovate their shops to save energy.", "Applicants must have traded for at least one year before the call opens.", "Sole traders and companies with fewer than twenty staff may apply."},
		{"Each application names one project and one person responsible for it.", "Projects that started before the decision are not eligible."},
	}
	enRight = [][]string{
		{"Applications are accepted from 1 December until Friday 30 January.", "Send the form with two quotes from different suppliers and a floor plan of the shop.", "Incomplete files are returned without review."},
		{"The office answers every applicant within six weeks of the deadline.", "Approved projects must be finished and paid for by the end of the year."},
	}
	jaLeft = [][]string{
		{"本補助金は、省エネルギーのために店舗を改装する小規模事業者を支援するものです。", "申請者は公募開始の一年以上前から事業を営んでいる必要があります。"},
		{"一つの申請につき一つの事業と責任者一名を記載してください。", "交付決定前に着手した事業は対象外です。"},
	}
	jaRight = [][]string{
		{"申請は十二月一日から一月三十日まで受け付けます。", "申請書には異なる業者の見積書二通と店舗の平面図を添付してください。", "書類に不備がある場合は審査せずに返却します。"},
		{"事務局は締切から六週間以内に結果を通知します。", "採択された事業は年度末までに完了し支払いを済ませてください。"},
	}
)

// layoutCase is one page of the reading-order corpus: the PDF and the text it holds, in reading
// order, as units (sentences, table rows, form lines) that a good reading keeps whole.
type layoutCase struct {
	name    string
	data    []byte
	units   []string
	columns bool // two columns drawn line by line: JobDesk must read it better than pdftotext
}

func layoutCorpus() []layoutCase {
	var cases []layoutCase

	var en layoutDrawing
	en.drawColumns(780, 10, 22, enLeft, enRight)
	cases = append(cases, layoutCase{"twocol-en", en.pdf(), flatten(enLeft, enRight), true})

	var ja layoutDrawing
	ja.drawColumns(780, 10, 12, jaLeft, jaRight)
	cases = append(cases, layoutCase{"twocol-ja", ja.pdf(), flatten(jaLeft, jaRight), true})

	// A header spanning both columns, then two columns.
	var hd layoutDrawing
	title := "Guidelines for the 2026 Shop Renovation Subsidy"
	hd.at((595-drawnWidth(title, 16))/2, 790, 16, title)
	intro := "Read both columns before you fill in the application form."
	hd.at(56, 764, 10, intro)
	hd.drawColumns(740, 10, 14, enLeft, enRight)
	cases = append(cases, layoutCase{"header-twocol", hd.pdf(), append([]string{title, intro}, flatten(enLeft, enRight)...), true})

	// A 3×4 table, drawn column by column, between two lines of text.
	var tb layoutDrawing
	caption := "表1 区分ごとの上限額と補助率"
	tb.at(56, 780, 10.5, caption)
	grid := [][]string{
		{"区分", "上限額", "補助率", "締切"},
		{"小規模事業者", "50万円", "2/3", "1月30日"},
		{"中小企業", "200万円", "1/2", "2月27日"},
	}
	xs := []float64{56, 200, 320, 430}
	for c := range grid[0] {
		for r := range grid {
			tb.at(xs[c], 750-float64(r)*20, 10.5, grid[r][c])
		}
	}
	note := "金額は税込みです。"
	tb.at(56, 680, 10.5, note)
	rows := []string{caption}
	for _, r := range grid {
		rows = append(rows, strings.Join(r, " "))
	}
	cases = append(cases, layoutCase{"table", tb.pdf(), append(rows, note), false})

	// A form: labels and their values, row by row.
	var fm layoutDrawing
	form := [][2]string{
		{"Applicant name:", "Hanako Sato"},
		{"Address:", "1-2-3 Kasumigaseki, Chiyoda-ku, Tokyo"},
		{"Phone:", "03-1234-5678"},
		{"Application date:", "Friday 30 January 2026"},
		{"Requested amount:", "500,000 yen"},
		{"Project title:", "Shop front renovation"},
		{"事業者名：", "株式会社サンプル商店"},
	}
	var lines []string
	for i, f := range form {
		y := 780 - float64(i)*18
		fm.at(72, y, 10, f[0])
		fm.at(220, y, 10, f[1])
		lines = append(lines, f[0]+" "+f[1])
	}
	cases = append(cases, layoutCase{"form", fm.pdf(), lines, false})
	return append(cases, spacingCorpus()...)
}

// orderTokens are the words of s for comparing reading orders: Japanese text character by
// character (it has no spaces), and no Markdown table rules.
func orderTokens(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.Trim(f, "|-") == "" {
			continue
		}
		if !isASCII(f) {
			for _, r := range f {
				out = append(out, string(r))
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

// wordScore is the share of want's words read in order in got (longest common subsequence).
func wordScore(got string, units []string) float64 {
	return wordMatch(strings.Join(orderTokens(got), " "), strings.Join(orderTokens(strings.Join(units, " ")), " "))
}

// unitScore is the share of units (sentences, rows) that got reads whole: contiguous, whatever
// line breaks, spaces or table rules it puts between their words.
func unitScore(got string, units []string) float64 {
	squeeze := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) || r == '|' {
				return -1
			}
			return r
		}, s)
	}
	g := squeeze(got)
	whole := 0
	for _, u := range units {
		if strings.Contains(g, squeeze(u)) {
			whole++
		}
	}
	return float64(whole) / float64(len(units))
}

// streamOrder is the page's text read in content-stream order, as JobDesk read every page
// before it looked at the layout.
func streamOrder(t *testing.T, data []byte) string {
	t.Helper()
	return pageText(spansText(spansOf(t, data)))
}

// TestReadingOrderCorpus converts each page of the corpus and compares the reading with
// pdftotext's: words in order (longest common subsequence with the known text) and sentences
// read whole. JobDesk must read every page at least as well, and the two-column pages strictly
// better. (Stream order cuts every sentence of those pages in two. pdftotext 22.12 keeps the
// sentences whole but, where the paragraph breaks of both columns line up, reads the
// paragraphs across the columns: the left one, the right one, the next left one, ….)
func TestReadingOrderCorpus(t *testing.T) {
	_, noPoppler := exec.LookPath("pdftotext")
	for _, c := range layoutCorpus() {
		d, err := Convert(context.Background(), c.data, c.name+".pdf", Options{NoOCR: true})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimPrefix(d.Markdown, "<!-- Page 1 -->\n\n")
		ours, oursU := wordScore(got, c.units), unitScore(got, c.units)
		stream := streamOrder(t, c.data)
		was, wasU := wordScore(stream, c.units), unitScore(stream, c.units)
		if ours < 1 || oursU < 1 {
			t.Errorf("%s: JobDesk reads words %.2f, sentences %.2f:\n%s", c.name, ours, oursU, got)
		}
		if noPoppler != nil {
			t.Logf("%-14s JobDesk words %.2f sentences %.2f | stream order %.2f %.2f (pdftotext not installed)", c.name, ours, oursU, was, wasU)
			continue
		}
		p := filepath.Join(t.TempDir(), c.name+".pdf")
		writeFile(t, p, c.data)
		out, err := exec.Command("pdftotext", "-enc", "UTF-8", p, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		theirs, theirsU := wordScore(string(out), c.units), unitScore(string(out), c.units)
		t.Logf("%-14s JobDesk words %.2f sentences %.2f | pdftotext words %.2f sentences %.2f | stream order words %.2f sentences %.2f",
			c.name, ours, oursU, theirs, theirsU, was, wasU)
		if ours < theirs || oursU < theirsU {
			t.Errorf("%s: JobDesk below pdftotext\nJobDesk:\n%s\npdftotext:\n%s", c.name, got, out)
		}
		if c.columns && ours <= theirs && oursU <= theirsU {
			t.Errorf("%s: JobDesk not better than pdftotext on two columns\nJobDesk:\n%s\npdftotext:\n%s", c.name, got, out)
		}
	}
}

// TestLayoutTable: the table page reads as a Markdown table, Japanese cells without spaces,
// between its caption and its note.
func TestLayoutTable(t *testing.T) {
	for _, c := range layoutCorpus() {
		if c.name != "table" {
			continue
		}
		d, err := Convert(context.Background(), c.data, "table.pdf", Options{NoOCR: true})
		if err != nil {
			t.Fatal(err)
		}
		want := "<!-- Page 1 -->\n\n表1 区分ごとの上限額と補助率\n\n" +
			"| 区分 | 上限額 | 補助率 | 締切 |\n| --- | --- | --- | --- |\n" +
			"| 小規模事業者 | 50万円 | 2/3 | 1月30日 |\n| 中小企業 | 200万円 | 1/2 | 2月27日 |\n\n" +
			"金額は税込みです。\n\n"
		if d.Markdown != want {
			t.Errorf("got\n%s\nwant\n%s", d.Markdown, want)
		}
	}
}

// TestLayoutKeepsStreamOrder: pages with no columns and no table read exactly as in stream
// order: the form (labels and values are no text columns), a numbered list whose numbers stand
// apart from their items, and the two-column corpus page drawn column after column.
func TestLayoutKeepsStreamOrder(t *testing.T) {
	var list layoutDrawing
	for i := 0; i < 8; i++ {
		y := 780 - float64(i)*14
		list.at(56, y, 10, fmt.Sprintf("%d.", i+1))
		list.at(90, y, 10, fmt.Sprintf("Item number %d of the list of documents to attach to the form.", i+1))
	}
	var colAfterCol layoutDrawing
	l, r := columnLines(enLeft, 230, 10), columnLines(enRight, 230, 10)
	for i, s := range l {
		colAfterCol.at(56, 780-13*float64(i), 10, s)
	}
	for i, s := range r {
		colAfterCol.at(308, 780-13*float64(i), 10, s)
	}
	pages := map[string][]byte{"list": list.pdf(), "column after column": colAfterCol.pdf()}
	for _, c := range layoutCorpus() {
		if c.name == "form" {
			pages[c.name] = c.data
		}
	}
	for name, data := range pages {
		spans := spansOf(t, data)
		want := spansText(spans)
		if name == "column after column" {
			var lines []string
			for _, s := range append(l, r...) {
				if s != "" {
					lines = append(lines, s)
				}
			}
			want = strings.Join(lines, "\n")
		}
		if got := layoutText(spans); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestLayoutNoSpacesInJapanese: the Japanese columns read with no space between Japanese
// characters.
func TestLayoutNoSpacesInJapanese(t *testing.T) {
	c := layoutCorpus()[1]
	d, err := Convert(context.Background(), c.data, "ja.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	rs := []rune(d.Markdown)
	for i := 1; i+1 < len(rs); i++ {
		if rs[i] == ' ' && isJapanese(rs[i-1]) && isJapanese(rs[i+1]) {
			t.Errorf("a space between Japanese characters: %q", string(rs[max(0, i-8):min(len(rs), i+8)]))
		}
	}
}
