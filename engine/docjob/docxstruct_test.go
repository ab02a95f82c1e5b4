package docjob

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
)

const wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"`

// makeDOCXParts builds a Word package from the inner XML of w:body and other parts by name.
func makeDOCXParts(t testing.TB, body string, parts map[string]string) []byte {
	t.Helper()
	entries := []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
		{name: "word/document.xml", data: []byte(`<w:document ` + wNS + `><w:body>` + body + `</w:body></w:document>`)},
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		entries = append(entries, zipEntry{name: n, data: []byte(parts[n])})
	}
	return makeZip(t, entries)
}

func wp(style, inner string) string {
	ppr := ""
	if style != "" {
		ppr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return `<w:p>` + ppr + inner + `</w:p>`
}

func wr(text string) string { return `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r>` }

// TestDOCXEquations: OMML becomes LaTeX — inline equations between $…$, a paragraph of
// equations only as display equations, fractions, roots, scripts, n-ary operators, delimiters and
// functions.
func TestDOCXEquations(t *testing.T) {
	mr := func(s string) string { return `<m:r><m:t>` + s + `</m:t></m:r>` }
	quadratic := `<m:oMath>` + mr("x=") + `<m:f><m:num>` + mr("-b±") + `<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/><m:e>` +
		`<m:sSup><m:e>` + mr("b") + `</m:e><m:sup>` + mr("2") + `</m:sup></m:sSup>` + mr("-4ac") + `</m:e></m:rad></m:num><m:den>` + mr("2a") + `</m:den></m:f></m:oMath>`
	sum := `<m:oMath><m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>` + mr("n=1") + `</m:sub><m:sup>` + mr("∞") + `</m:sup><m:e>` +
		`<m:sSub><m:e>` + mr("a") + `</m:e><m:sub>` + mr("n") + `</m:sub></m:sSub><m:func><m:fName>` + mr("sin") + `</m:fName><m:e><m:d><m:e>` + mr("x") + `</m:e></m:d></m:e></m:func></m:e></m:nary></m:oMath>`
	body := wp("", wr("解の公式は ")+quadratic+wr(" です。")) + wp("", sum+sum)
	d, err := Convert(context.Background(), makeDOCXParts(t, body, nil), "math.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`解の公式は $x=\frac{-b \pm \sqrt{b^{2}-4ac}}{2a}$ です。`,
		"\n$$\\sum_{n=1}^{\\infty} a_{n}\\sin\\left(x\\right)$$\n\n$$\\sum",
	} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("missing %q in\n%s", want, d.Markdown)
		}
	}
}

// TestDOCXNumberedHeadings: headings numbered through their style's numbering read 1, 1.1,
// 1.2, 1.2.1, 2; a deeper level restarts under a new parent; Heading 1 sits under the Title.
func TestDOCXNumberedHeadings(t *testing.T) {
	styles := `<w:styles ` + wNS + `>
		<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
		<w:style w:type="paragraph" w:styleId="H1"><w:name w:val="heading 1"/><w:pPr><w:numPr><w:numId w:val="5"/></w:numPr></w:pPr></w:style>
		<w:style w:type="paragraph" w:styleId="H2"><w:name w:val="heading 2"/><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="5"/></w:numPr></w:pPr></w:style>
		<w:style w:type="paragraph" w:styleId="H3"><w:name w:val="heading 3"/><w:pPr><w:numPr><w:numId w:val="5"/></w:numPr></w:pPr></w:style>
		</w:styles>`
	numbering := `<w:numbering ` + wNS + `><w:abstractNum w:abstractNumId="3">
		<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1"/><w:pStyle w:val="H1"/></w:lvl>
		<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
		<w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2.%3"/><w:pStyle w:val="H3"/></w:lvl>
		</w:abstractNum>
		<w:abstractNum w:abstractNumId="4">
		<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
		<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2."/></w:lvl>
		</w:abstractNum>
		<w:num w:numId="5"><w:abstractNumId w:val="3"/></w:num><w:num w:numId="6"><w:abstractNumId w:val="4"/></w:num></w:numbering>`
	body := wp("Title", wr("報告書")) + wp("H1", wr("概要")) + wp("H2", wr("目的")) + wp("H2", wr("範囲")) + wp("H3", wr("対象外")) +
		wp("H1", wr("結果")) + wp("H2", wr("数値")) + listPara(6, 0, "手順") + listPara(6, 1, "準備") + listPara(6, 1, "確認")
	d, err := Convert(context.Background(), makeDOCXParts(t, body, map[string]string{"word/styles.xml": styles, "word/numbering.xml": numbering}), "h.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# 報告書\n\n## 1 概要\n\n### 1.1 目的\n\n### 1.2 範囲\n\n#### 1.2.1 対象外\n\n## 2 結果\n\n### 2.1 数値\n\n1. 手順\n\n   - 1.1. 準備\n\n   - 1.2. 確認\n"
	if d.Markdown != want {
		t.Fatalf("got\n%s\nwant\n%s", d.Markdown, want)
	}
}

// TestDOCXPicturesCommentsCharts: a picture is extracted beside the Markdown and linked with its
// alt text; a chart gives its cached data; comments are listed with author and date; a
// hyperlink keeps its address; a one-cell layout table gives its content as it is.
func TestDOCXPicturesCommentsCharts(t *testing.T) {
	pic := `<w:r><w:drawing><wp:inline><wp:docPr id="1" name="Picture 2" descr="組織図"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:blipFill><a:blip r:embed="rId5"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	chart := `<w:r><w:drawing><wp:inline><wp:docPr id="2" name="Chart 1"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="rId6"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	chartXML := `<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart><c:plotArea><c:lineChart>` +
		`<c:ser><c:tx><c:v>売上</c:v></c:tx><c:cat><c:strLit><c:pt idx="0"><c:v>上期</c:v></c:pt><c:pt idx="1"><c:v>下期</c:v></c:pt></c:strLit></c:cat>` +
		`<c:val><c:numLit><c:pt idx="0"><c:v>4.3</c:v></c:pt><c:pt idx="1"><c:v>2.5</c:v></c:pt></c:numLit></c:val></c:ser></c:lineChart></c:plotArea></c:chart></c:chartSpace>`
	body := wp("", wr("体制は次のとおり。")+pic) +
		wp("", wr("承認済み")+`<w:commentRangeStart w:id="0"/><w:r><w:commentReference w:id="0"/></w:r>`) +
		wp("", chart) +
		wp("", `<w:hyperlink r:id="rId7">`+wr("申請サイト")+`</w:hyperlink>`) +
		`<w:tbl><w:tr><w:tc>` + listPara(1, 0, "枠の中の項目") + `<w:tbl><w:tr><w:tc>` + wp("", wr("A")) + `</w:tc><w:tc>` + wp("", wr("B")) + `</w:tc></w:tr></w:tbl></w:tc></w:tr></w:tbl>`
	rels := `<Relationships ` + relNS + `><Relationship Id="rId5" Type="` + relT + `image" Target="media/image1.png"/>` +
		`<Relationship Id="rId6" Type="` + relT + `chart" Target="charts/chart1.xml"/>` +
		`<Relationship Id="rId7" Type="` + relT + `hyperlink" Target="https://example.jp/shinsei" TargetMode="External"/></Relationships>`
	parts := map[string]string{
		"word/_rels/document.xml.rels": rels,
		"word/media/image1.png":        string(pngBytes),
		"word/charts/chart1.xml":       chartXML,
		"word/comments.xml":            `<w:comments ` + wNS + `><w:comment w:id="0" w:author="佐藤" w:date="2024-05-01T09:00:00Z">` + wp("", wr("金額を再確認")) + `</w:comment></w:comments>`,
		"word/numbering.xml":           `<w:numbering ` + wNS + `><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`,
	}
	d, err := ConvertKind(context.Background(), makeDOCXParts(t, body, parts), "体制.docx", KindDOCX, Options{assetDir: "体制_files"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"体制は次のとおり。\n\n![組織図](体制_files/Picture2.png)",
		"**Line chart**\n\n| | 売上 |\n| --- | --- |\n| 上期 | 4.3 |\n| 下期 | 2.5 |",
		"[申請サイト](https://example.jp/shinsei)",
		"- 枠の中の項目\n\n| A | B |",
		"### Comments\n\n> Comment (佐藤, 2024-05-01T09:00:00Z): 金額を再確認",
	} {
		if !strings.Contains(strings.ReplaceAll(d.Markdown, "|  |", "| |"), want) {
			t.Errorf("missing %q in\n%s", want, d.Markdown)
		}
	}
	if len(d.Assets) != 1 || d.Assets[0].Name != "Picture2.png" {
		t.Fatalf("assets %+v", d.Assets)
	}
}

// TestDOCXCheckboxes: checkbox glyphs become task-list boxes, a checkbox paragraph a list item.
func TestDOCXCheckboxes(t *testing.T) {
	body := wp("", wr("☒ 設計")) + wp("", wr("☐ 文書化")) +
		`<w:tbl><w:tr><w:tc>` + wp("", wr("選択: ☑ 朝食 ☐ 夕食")) + `</w:tc><w:tc>` + wp("", wr("備考")) + `</w:tc></w:tr></w:tbl>`
	d, err := Convert(context.Background(), makeDOCXParts(t, body, nil), "c.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- [x] 設計\n", "- [ ] 文書化\n", "| 選択: [x] 朝食 [ ] 夕食 | 備考 |"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("missing %q in\n%s", want, d.Markdown)
		}
	}
}

// TestDOCXListsInCells: list paragraphs inside a table cell keep their markers.
func TestDOCXListsInCells(t *testing.T) {
	numbering := `<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum>` +
		`<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>` +
		`<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>`
	body := `<w:tbl><w:tr><w:tc>` + wp("", wr("手順")) + listPara(1, 0, "申請") + listPara(1, 0, "審査") + `</w:tc><w:tc>` + listPara(2, 0, "書類") + `</w:tc></w:tr></w:tbl>`
	d, err := Convert(context.Background(), makeDOCX(t, body, numbering), "l.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "| 手順<br>1. 申請<br>2. 審査 | - 書類 |"; !strings.Contains(d.Markdown, want) {
		t.Fatalf("missing %q in\n%s", want, d.Markdown)
	}
}

// TestDOCXChartInCell: a chart drawn in a table cell is written right after its table.
func TestDOCXChartInCell(t *testing.T) {
	chart := `<w:r><w:drawing><wp:inline><wp:docPr id="2" name="Chart 1"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="rId6"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	body := `<w:tbl><w:tr><w:tc>` + wp("", wr("図")) + `</w:tc><w:tc>` + wp("", chart) + `</w:tc></w:tr></w:tbl>` + wp("", wr("本文"))
	parts := map[string]string{
		"word/_rels/document.xml.rels": `<Relationships ` + relNS + `><Relationship Id="rId6" Type="` + relT + `chart" Target="charts/chart1.xml"/></Relationships>`,
		"word/charts/chart1.xml":       `<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart><c:plotArea><c:barChart><c:ser><c:val><c:numLit><c:pt idx="0"><c:v>7</c:v></c:pt></c:numLit></c:val></c:ser></c:barChart></c:plotArea></c:chart></c:chartSpace>`,
	}
	d, err := Convert(context.Background(), makeDOCXParts(t, body, parts), "c.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(d.Markdown, "**Bar chart**"), strings.Index(d.Markdown, "本文"); i < 0 || j < i {
		t.Fatalf("chart not after its table:\n%s", d.Markdown)
	}
}

// TestDOCXRowsBesideTheGrid: a row that starts late (w:gridBefore) or ends early (w:gridAfter)
// keeps its cells under their own columns, and a vertical merge continued in such a row repeats
// the text of its own column.
func TestDOCXRowsBesideTheGrid(t *testing.T) {
	tc := func(pr, text string) string {
		return `<w:tc><w:tcPr>` + pr + `</w:tcPr>` + wp("", wr(text)) + `</w:tc>`
	}
	body := `<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>` +
		`<w:tr>` + tc("", "項目") + tc("", "数量") + tc(`<w:vMerge w:val="restart"/>`, "備考（結合）") + `</w:tr>` +
		`<w:tr><w:trPr><w:gridBefore w:val="2"/></w:trPr>` + tc(`<w:vMerge/>`, "") + `</w:tr>` +
		`<w:tr><w:trPr><w:gridBefore w:val="1"/><w:gridAfter w:val="1"/></w:trPr>` + tc("", "三個") + `</w:tr></w:tbl>`
	d, err := Convert(context.Background(), makeDOCX(t, body, ""), "grid.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "| 項目 | 数量 | 備考（結合） |\n| --- | --- | --- |\n|  |  | 備考（結合） |\n|  | 三個 |  |\n"
	if !strings.Contains(d.Markdown, want) {
		t.Fatalf("missing\n%s\nin\n%s", want, d.Markdown)
	}
}

// TestChartCachedNumbers: a chart's cached numbers are written with the 15 significant digits
// Office shows (4.4000000000000004 in the cache is 4.4), other values as they are.
func TestChartCachedNumbers(t *testing.T) {
	chart := `<w:r><w:drawing><wp:inline><wp:docPr id="2" name="Chart 1"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="rId6"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	pt := func(i int, v string) string { return fmt.Sprintf(`<c:pt idx="%d"><c:v>%s</c:v></c:pt>`, i, v) }
	parts := map[string]string{
		"word/_rels/document.xml.rels": `<Relationships ` + relNS + `><Relationship Id="rId6" Type="` + relT + `chart" Target="charts/chart1.xml"/></Relationships>`,
		"word/charts/chart1.xml": `<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart><c:plotArea><c:barChart><c:ser>` +
			`<c:tx><c:v>売上</c:v></c:tx><c:cat><c:strLit>` + pt(0, "1月") + pt(1, "2月") + pt(2, "3月") + pt(3, "4月") + `</c:strLit></c:cat>` +
			`<c:val><c:numLit>` + pt(0, "4.4000000000000004") + pt(1, "0.30000000000000004") + pt(2, "1234567.5") + pt(3, "-2.0000000000000001E-3") + `</c:numLit></c:val></c:ser></c:barChart></c:plotArea></c:chart></c:chartSpace>`,
	}
	d, err := Convert(context.Background(), makeDOCXParts(t, wp("", chart), parts), "c.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 1月 | 4.4 |", "| 2月 | 0.3 |", "| 3月 | 1234567.5 |", "| 4月 | -0.002 |"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("missing %q in\n%s", want, d.Markdown)
		}
	}
}

// TestDOCXWebPicture: a picture linked from the web (an external image relationship, by
// r:embed or r:link) is an image link to its address, as in PPTX; one linked to a file on the
// author's disk stays its alt text.
func TestDOCXWebPicture(t *testing.T) {
	pic := func(attr, alt string) string {
		return `<w:r><w:drawing><wp:inline><wp:docPr id="1" name="図 1" descr="` + alt + `"/><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip ` + attr + `/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	}
	body := wp("", wr("前")+pic(`r:embed="rId9"`, "社章")) + wp("", pic(`r:link="rId10"`, "")) + wp("", pic(`r:embed="rId11"`, "手元の図"))
	parts := map[string]string{
		"word/_rels/document.xml.rels": `<Relationships ` + relNS + `>` +
			`<Relationship Id="rId9" Type="` + relT + `image" Target="https://example.jp/logo.png" TargetMode="External"/>` +
			`<Relationship Id="rId10" Type="` + relT + `image" Target="http://example.jp/a.gif" TargetMode="External"/>` +
			`<Relationship Id="rId11" Type="` + relT + `image" Target="file:///C:/Users/a/zu.png" TargetMode="External"/></Relationships>`,
	}
	d, err := Convert(context.Background(), makeDOCXParts(t, body, parts), "web.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, d.Markdown, []string{"前\n\n![社章](https://example.jp/logo.png)", "![](http://example.jp/a.gif)", "[image: 手元の図]"}, []string{"file:"})
}
