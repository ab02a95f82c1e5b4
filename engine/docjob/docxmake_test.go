package docjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// makeDOCX builds a minimal Word package from the inner XML of w:body and of w:numbering.
func makeDOCX(t testing.TB, body, numbering string) []byte {
	t.Helper()
	const ns = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
	entries := []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
		{name: "word/document.xml", data: []byte(`<?xml version="1.0"?><w:document ` + ns + `><w:body>` + body + `</w:body></w:document>`)},
	}
	if numbering != "" {
		entries = append(entries, zipEntry{name: "word/numbering.xml", data: []byte(`<?xml version="1.0"?><w:numbering ` + ns + `>` + numbering + `</w:numbering>`)})
	}
	return makeZip(t, entries)
}

// listPara is a paragraph of list numId at level ilvl.
func listPara(numID, ilvl int, text string) string {
	return fmt.Sprintf(`<w:p><w:pPr><w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%d"/></w:numPr></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>`, ilvl, numID, text)
}

// TestDOCXNestedLists: nested items are indented to the parent marker's width (3 under "1. ",
// 2 under "- ", 4 under "10. "), and letter and roman levels are written a. / i. / A. / I.
func TestDOCXNestedLists(t *testing.T) {
	numbering := `<w:abstractNum w:abstractNumId="0">
		<w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl>
		<w:lvl w:ilvl="1"><w:numFmt w:val="lowerLetter"/></w:lvl>
		<w:lvl w:ilvl="2"><w:numFmt w:val="lowerRoman"/></w:lvl></w:abstractNum>
		<w:abstractNum w:abstractNumId="1">
		<w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl>
		<w:lvl w:ilvl="1"><w:numFmt w:val="upperRoman"/></w:lvl>
		<w:lvl w:ilvl="2"><w:numFmt w:val="upperLetter"/></w:lvl></w:abstractNum>
		<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
		<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>`
	var body strings.Builder
	body.WriteString(listPara(1, 0, "第一項"))
	body.WriteString(listPara(1, 1, "小項目その一"))
	body.WriteString(listPara(1, 1, "小項目その二"))
	body.WriteString(listPara(1, 2, "細目"))
	for i := 2; i <= 10; i++ {
		body.WriteString(listPara(1, 0, fmt.Sprintf("項目%d", i)))
	}
	body.WriteString(listPara(1, 1, "十番目の下"))
	body.WriteString(`<w:p><w:r><w:t>区切り</w:t></w:r></w:p>`)
	body.WriteString(listPara(2, 0, "箇条書き"))
	body.WriteString(listPara(2, 1, "ローマ数字"))
	body.WriteString(listPara(2, 1, "ローマ数字二"))
	body.WriteString(listPara(2, 2, "大文字"))
	d, err := Convert(context.Background(), makeDOCX(t, body.String(), numbering), "lists.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n1. 第一項\n", "\n   a. 小項目その一\n", "\n   b. 小項目その二\n", "\n      i. 細目\n",
		"\n10. 項目10\n", "\n    a. 十番目の下\n",
		"\n- 箇条書き\n", "\n  I. ローマ数字\n", "\n  II. ローマ数字二\n", "\n      A. 大文字\n",
	} {
		if !strings.Contains("\n"+d.Markdown, want) {
			t.Errorf("missing %q in\n%s", want, d.Markdown)
		}
	}
}

func TestListMarker(t *testing.T) {
	for _, tc := range []struct {
		f    string
		n    int
		want string
	}{{"decimal", 3, "3."}, {"lowerLetter", 1, "a."}, {"lowerLetter", 27, "aa."}, {"upperLetter", 2, "B."},
		{"lowerRoman", 4, "iv."}, {"upperRoman", 14, "XIV."}, {"decimalFullWidth", 2, "2."}} {
		if got := listMarker(tc.f, tc.n); got != tc.want {
			t.Errorf("listMarker(%s, %d) = %q, want %q", tc.f, tc.n, got, tc.want)
		}
	}
}
