package docjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

const xNS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`

// makeStructXLSX builds a workbook by hand: a sheet with two tables side by side and a third
// under them, a cell comment and a chart drawn on the sheet, then a chart sheet.
func makeStructXLSX(t testing.TB) []byte {
	t.Helper()
	cell := func(ref, v string) string {
		return fmt.Sprintf(`<c r="%s" t="inlineStr"><is><t>%s</t></is></c>`, ref, v)
	}
	num := func(ref string, v int) string { return fmt.Sprintf(`<c r="%s"><v>%d</v></c>`, ref, v) }
	rows := `<row r="1">` + cell("A1", "商品") + cell("B1", "数量") + cell("E1", "担当") + cell("F1", "地区") + `</row>` +
		`<row r="2">` + cell("A2", "りんご") + num("B2", 10) + cell("E2", "田中") + cell("F2", "東") + `</row>` +
		`<row r="3">` + cell("A3", "みかん") + num("B3", 25) + `</row>` +
		`<row r="5">` + cell("A5", "合計") + num("B5", 35) + `</row>`
	sheet := `<worksheet ` + xNS + `><sheetData>` + rows + `</sheetData><drawing r:id="rId2"/><legacyDrawing r:id="rId3"/></worksheet>`
	chart := func(title string) string {
		return `<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart>` +
			`<c:title><c:tx><c:rich><a:p><a:r><a:t>` + title + `</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:pieChart>` +
			`<c:ser><c:tx><c:strRef><c:f>Sheet1!$B$1</c:f><c:strCache><c:pt idx="0"><c:v>数量</c:v></c:pt></c:strCache></c:strRef></c:tx>` +
			`<c:cat><c:strRef><c:f>Sheet1!$A$2:$A$3</c:f><c:strCache><c:pt idx="0"><c:v>りんご</c:v></c:pt><c:pt idx="1"><c:v>みかん</c:v></c:pt></c:strCache></c:strRef></c:cat>` +
			`<c:val><c:numRef><c:f>Sheet1!$B$2:$B$3</c:f><c:numCache><c:pt idx="0"><c:v>10</c:v></c:pt><c:pt idx="1"><c:v>25</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>` +
			`</c:pieChart></c:plotArea></c:chart></c:chartSpace>`
	}
	drawing := `<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
		`<xdr:twoCellAnchor><xdr:graphicFrame><a:graphic><a:graphicData><c:chart r:id="rId1"/></a:graphicData></a:graphic></xdr:graphicFrame></xdr:twoCellAnchor></xdr:wsDr>`
	rel := func(id, typ, target string) string {
		return `<Relationship Id="` + id + `" Type="` + relT + typ + `" Target="` + target + `"/>`
	}
	return makeZip(t, []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
			`<Override PartName="/xl/chartsheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.chartsheet+xml"/>` +
			`<Override PartName="/xl/comments1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"/></Types>`)},
		{name: "_rels/.rels", data: []byte(`<Relationships ` + relNS + `>` + rel("rId1", "officeDocument", "xl/workbook.xml") + `</Relationships>`)},
		{name: "xl/workbook.xml", data: []byte(`<workbook ` + xNS + `><sheets><sheet name="在庫" sheetId="1" r:id="rId1"/><sheet name="グラフ" sheetId="2" r:id="rId2"/></sheets></workbook>`)},
		{name: "xl/_rels/workbook.xml.rels", data: []byte(`<Relationships ` + relNS + `>` + rel("rId1", "worksheet", "worksheets/sheet1.xml") + rel("rId2", "chartsheet", "chartsheets/sheet1.xml") + `</Relationships>`)},
		{name: "xl/worksheets/sheet1.xml", data: []byte(sheet)},
		{name: "xl/worksheets/_rels/sheet1.xml.rels", data: []byte(`<Relationships ` + relNS + `>` + rel("rId2", "drawing", "../drawings/drawing1.xml") + rel("rId3", "vmlDrawing", "../drawings/vmlDrawing1.vml") + rel("rId4", "comments", "../comments1.xml") +
			`<Relationship Id="rId5" Type="http://schemas.microsoft.com/office/2017/10/relationships/threadedComment" Target="../threadedComments/threadedComment1.xml"/></Relationships>`)},
		{name: "xl/threadedComments/threadedComment1.xml", data: []byte(`<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments">` +
			`<threadedComment ref="E2" dT="2024-06-01T09:00:00.00" personId="{P1}" id="{T1}"><text>担当を確認</text></threadedComment>` +
			`<threadedComment ref="E2" dT="2024-06-02T10:00:00.00" personId="{P2}" id="{T2}" parentId="{T1}"><text>確認済み</text></threadedComment></ThreadedComments>`)},
		{name: "xl/persons/person.xml", data: []byte(`<personList xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"><person displayName="高橋" id="{P1}"/><person displayName="伊藤" id="{P2}"/></personList>`)},
		{name: "xl/comments1.xml", data: []byte(`<comments ` + xNS + `><authors><author>鈴木</author></authors><commentList><comment ref="B3" authorId="0"><text><r><t>鈴木:` + "\n" + `入荷待ち</t></r></text></comment></commentList></comments>`)},
		{name: "xl/drawings/vmlDrawing1.vml", data: []byte(`<xml/>`)},
		{name: "xl/drawings/drawing1.xml", data: []byte(drawing)},
		{name: "xl/drawings/_rels/drawing1.xml.rels", data: []byte(`<Relationships ` + relNS + `>` + rel("rId1", "chart", "../charts/chart1.xml") + `</Relationships>`)},
		{name: "xl/charts/chart1.xml", data: []byte(chart("数量の内訳"))},
		{name: "xl/chartsheets/sheet1.xml", data: []byte(`<chartsheet ` + xNS + `><drawing r:id="rId1"/></chartsheet>`)},
		{name: "xl/chartsheets/_rels/sheet1.xml.rels", data: []byte(`<Relationships ` + relNS + `>` + rel("rId1", "drawing", "../drawings/drawing2.xml") + `</Relationships>`)},
		{name: "xl/drawings/drawing2.xml", data: []byte(drawing)},
		{name: "xl/drawings/_rels/drawing2.xml.rels", data: []byte(`<Relationships ` + relNS + `>` + rel("rId1", "chart", "../charts/chart2.xml") + `</Relationships>`)},
		{name: "xl/charts/chart2.xml", data: []byte(chart("グラフシート"))},
	})
}

// TestXLSXStructure: tables side by side and one under the other come out as separate tables,
// the comments (a legacy one and a threaded one with its reply) are listed under them in cell order, and both the drawn chart and the chart sheet give their data.
func TestXLSXStructure(t *testing.T) {
	d, err := Convert(context.Background(), makeStructXLSX(t), "在庫.xlsx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "## 在庫\n\n" +
		"| 商品 | 数量 |\n| --- | --- |\n| りんご | 10 |\n| みかん | 25 |\n\n" +
		"| 担当 | 地区 |\n| --- | --- |\n| 田中 | 東 |\n\n" +
		"| 合計 | 35 |\n| --- | --- |\n\n" +
		"> Comment E2 (高橋, 2024-06-01T09:00:00.00): 担当を確認\n\n" +
		"> Reply E2 (伊藤, 2024-06-02T10:00:00.00): 確認済み\n\n" +
		"> Comment B3 (鈴木): 入荷待ち\n\n" +
		"**数量の内訳** (Pie chart)\n\n| | 数量 |\n| --- | --- |\n| りんご | 10 |\n| みかん | 25 |\n\n\n" +
		"## グラフ\n\n**グラフシート** (Pie chart)"
	got := strings.ReplaceAll(d.Markdown, "|  |", "| |")
	if !strings.HasPrefix(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSplitBlocks(t *testing.T) {
	grid := [][]string{
		{"a", "b", "", "x"},
		{"c", "", "", "y"},
		{},
		{"", "", "p", "q"},
	}
	got := fmt.Sprint(splitBlocks(grid))
	if want := "[[[a b] [c]] [[x] [y]] [[p q]]]"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}
