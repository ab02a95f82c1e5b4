package docjob

import (
	"bytes"
	"context"
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"jobdesk/engine/mdtext"
)

// markupLike are document texts that read as Markdown or HTML when written as they are.
var markupLike = []string{
	"<div>", "<m:oMath> の中の数式", "*note*", "# 1", "1. 項目", "12) 項目", "[x](y)", "&lt;",
	"AT&T と &copy; と &#42;", "- 項目", "+ 項目", "> 引用", "---", "===", "| 列 | 列 |", "~~~",
	"`コード`", "2*3*4", "_強調_", "snake_case_name", "C:\\Users\\山田\\", `\*`, "<https://example.jp>",
	"<b>太字</b>と<注意>", "x < y > z", "見出し #", "![絵](a.png)", "**強調**", "a <!-- 注釈 --> b",
	"ｘ＜ｙ と 全角＊", "<?php echo 1; ?>", "</p>",
}

// commonMark renders md as a CommonMark reader with GitHub's extensions (tables,
// strikethrough, autolinks) does.
func commonMark(t testing.TB, md string) string {
	t.Helper()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// shownText is the text a reader shows for rendered HTML: tags dropped, references resolved.
func shownText(h string) string {
	return html.UnescapeString(htmlTag.ReplaceAllString(h, ""))
}

// TestEscapeMarkdownReadsBack: each text, escaped, reads back as itself in CommonMark with
// GitHub's extensions, as one paragraph (no heading, list, quote, table, break, link, image,
// emphasis, code or HTML of its own), and in the forms chosen.
func TestEscapeMarkdownReadsBack(t *testing.T) {
	for _, s := range markupLike {
		md := EscapeMarkdown(s)
		if !strings.Contains(s, "\n") && mdtext.Unescape(md) != s {
			t.Errorf("mdtext.Unescape(%q) = %q, want %q", md, mdtext.Unescape(md), s)
		}
		out := commonMark(t, md)
		if got := strings.TrimSpace(shownText(out)); got != s {
			t.Errorf("%q escaped as %q reads %q", s, md, got)
		}
		if strings.Count(out, "<") != 2 || !strings.HasPrefix(out, "<p>") {
			t.Errorf("%q escaped as %q renders as markup: %s", s, md, out)
		}
	}
	for s, want := range map[string]string{
		"<div>":           "&lt;div&gt;",
		"<m:oMath>":       "&lt;m:oMath&gt;",
		"*note*":          `\*note\*`,
		"# 1":             `\# 1`,
		"1. 項目":           `1\. 項目`,
		"[x](y)":          `\[x\](y)`,
		"&lt;":            "&amp;lt;",
		"x < y > z":       "x < y > z",
		"snake_case_name": "snake_case_name",
		"AT&T":            "AT&T",
		"見出し #":           `見出し \#`,
		"a * b":           "a * b",
		"for _ in":        "for _ in",
		"- 項目":            `\- 項目`,
		"-5℃":             "-5℃",
		"2024.":           `2024\.`, // an empty ordered list item otherwise
		"2024年":           "2024年",
		"<注意>":            "<注意>",
		"ｘ＜ｙ":             "ｘ＜ｙ",
	} {
		if got := EscapeMarkdown(s); got != want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", s, got, want)
		}
	}
	// lines after a line break inside a paragraph are line starts too
	if got := EscapeMarkdown("前置き\n# 1\n1. 項目"); got != "前置き\n\\# 1\n1\\. 項目" {
		t.Errorf("line starts inside a paragraph: %q", got)
	}
}

// docxParas builds a Word document whose paragraphs are texts; a paragraph whose text starts
// with "H1:" is a Heading 1, "LI:" a bulleted list item; a final table holds the first two texts.
func docxParas(t *testing.T, texts []string) []byte {
	t.Helper()
	var body strings.Builder
	run := func(s string) string {
		return `<w:r><w:t xml:space="preserve">` + html.EscapeString(s) + `</w:t></w:r>`
	}
	for _, s := range texts {
		switch {
		case strings.HasPrefix(s, "H1:"):
			body.WriteString(`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr>` + run(s[3:]) + `</w:p>`)
		case strings.HasPrefix(s, "LI:"):
			body.WriteString(`<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>` + run(s[3:]) + `</w:p>`)
		default:
			// split into runs as Word does, mid-text
			h := len(s) / 2
			for h > 0 && !utf8RuneStart(s[h]) {
				h--
			}
			body.WriteString(`<w:p>` + run(s[:h]) + run(s[h:]) + `</w:p>`)
		}
	}
	body.WriteString(`<w:tbl><w:tr><w:tc><w:p>` + run("品名") + `</w:p></w:tc><w:tc><w:p>` + run("備考") + `</w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p>` + run(texts[0]) + `</w:p></w:tc><w:tc><w:p>` + run(texts[1]) + `</w:p></w:tc></w:tr></w:tbl>`)
	styles := `<?xml version="1.0"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
		`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`
	numbering := `<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`
	const ns = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
	return makeZip(t, []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
		{name: "word/document.xml", data: []byte(`<?xml version="1.0"?><w:document ` + ns + `><w:body>` + body.String() + `</w:body></w:document>`)},
		{name: "word/styles.xml", data: []byte(styles)},
		{name: "word/numbering.xml", data: []byte(`<?xml version="1.0"?><w:numbering ` + ns + `>` + numbering + `</w:numbering>`)},
	})
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// checkReadsBack checks that the rendered Markdown out shows each text as the document wrote it.
func checkReadsBack(t *testing.T, md, out string, texts []string) {
	t.Helper()
	shown := shownText(out)
	for _, s := range texts {
		if !strings.Contains(shown, s) {
			t.Errorf("%q is not shown as written; Markdown:\n%s\nrendered:\n%s", s, md, out)
		}
	}
}

// TestDOCXTextLooksLikeMarkup: a Word document's text that looks like HTML or Markdown is
// escaped in its paragraphs, heading, list item and table cells, reads back as written in a
// CommonMark reader, and the converter's own heading, list and table still work.
func TestDOCXTextLooksLikeMarkup(t *testing.T) {
	texts := append([]string{"<div>本文</div>", "<m:oMath> と *注* と [x](y)"}, markupLike...)
	all := append(append([]string{}, texts...), "H1:<見出し> #1 の *注*", "LI:1. 項目の <b>中</b>")
	d, err := Convert(context.Background(), docxParas(t, all), "markup.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown
	for _, want := range []string{"&lt;div&gt;本文&lt;/div&gt;", `&lt;m:oMath&gt; と \*注\* と \[x\](y)`, "\n\\# 1\n", "\n1\\. 項目\n",
		"# <見出し> #1 の \\*注\\*\n", "- 1\\. 項目の &lt;b&gt;中&lt;/b&gt;\n", "| &lt;div&gt;本文&lt;/div&gt; | &lt;m:oMath&gt; と \\*注\\* と \\[x\\](y) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	out := commonMark(t, md)
	checkReadsBack(t, md, out, append(texts, "<見出し> #1 の *注*", "1. 項目の <b>中</b>"))
	for _, want := range []string{"<h1>&lt;見出し&gt; #1 の *注*</h1>", "<li>1. 項目の &lt;b&gt;中&lt;/b&gt;</li>", "<td>&lt;div&gt;本文&lt;/div&gt;</td>"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the rendered document:\n%s", want, out)
		}
	}
	if strings.Count(out, "<h1>") != 1 || strings.Count(out, "<li>") != 1 || strings.Count(out, "<table>") != 1 || strings.Contains(out, "<div>") {
		t.Errorf("the document's text made markup of its own:\n%s", out)
	}
}

// TestPPTXTextLooksLikeMarkup: a slide's title, text, bullet and table cell keep text that
// looks like markup as text.
func TestPPTXTextLooksLikeMarkup(t *testing.T) {
	slide := `<p:sld ` + pNS + `><p:cSld><p:spTree>` +
		sp(`<p:ph type="title"/>`, "0", "0", para("&lt;タイトル&gt; *案*")) +
		sp("", "0", "1000000", para("&lt;div&gt;本文&lt;/div&gt;")+para("# 1 と 1. 項目")+
			`<a:p><a:pPr><a:buChar char="•"/></a:pPr><a:r><a:t>- 二重 [x](y)</a:t></a:r></a:p>`) +
		`<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="30" name="t"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="5000000"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>` +
		`<a:tr><a:tc><a:txBody>` + para("列") + `</a:txBody></a:tc><a:tc><a:txBody>` + para("値") + `</a:txBody></a:tc></a:tr>` +
		`<a:tr><a:tc><a:txBody>` + para("&lt;b&gt;太字&lt;/b&gt;") + `</a:txBody></a:tc><a:tc><a:txBody>` + para("a_b_ と _c_") + `</a:txBody></a:tc></a:tr>` +
		`</a:tbl></a:graphicData></a:graphic></p:graphicFrame></p:spTree></p:cSld></p:sld>`
	data := makeZip(t, []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
		{name: "ppt/presentation.xml", data: []byte(`<p:presentation ` + pNS + `><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>`)},
		{name: "ppt/_rels/presentation.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId2" Type="` + relT + `slide" Target="slides/slide1.xml"/></Relationships>`)},
		{name: "ppt/slides/slide1.xml", data: []byte(slide)},
	})
	d, err := ConvertKind(context.Background(), data, "markup.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown
	for _, want := range []string{"<!-- Slide 1 -->\n\n## <タイトル> \\*案\\*\n", "&lt;div&gt;本文&lt;/div&gt;", "\\# 1 と 1. 項目", "- \\- 二重 \\[x\\](y)\n",
		"| &lt;b&gt;太字&lt;/b&gt; | a_b\\_ と \\_c\\_ |"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	out := commonMark(t, md)
	checkReadsBack(t, md, out, []string{"<タイトル> *案*", "<div>本文</div>", "# 1 と 1. 項目", "- 二重 [x](y)", "<b>太字</b>", "a_b_ と _c_"})
	if strings.Count(out, "<h2>") != 1 || strings.Count(out, "<li>") != 1 || strings.Count(out, "<table>") != 1 || strings.Contains(out, "<div>") || strings.Contains(out, "<b>") {
		t.Errorf("the slide's text made markup of its own:\n%s", out)
	}
}

// TestHTMLTextLooksLikeMarkup: an HTML page's text that looks like markup ("&lt;div&gt;" in
// its source, "*注*", "1. " starting a paragraph) stays text, in the page's paragraphs, list
// items, headings and cells, through the parsed and the streamed path; code keeps its text as
// written; a block inside inline content keeps its own Markdown.
func TestHTMLTextLooksLikeMarkup(t *testing.T) {
	page := `<html><head><title>&lt;題&gt;</title></head><body><h1>&lt;div&gt; の *使い方*</h1>` +
		`<p>&lt;m:oMath&gt; と [x](y) と &amp;lt;</p><p>1. 番号ではない</p><p># 見出しではない<br>- 項目ではない</p>` +
		`<ul><li>&gt; 引用ではない</li></ul><p>コード <code>*x* &lt;y&gt;</code></p><pre>**そのまま** &lt;z&gt;</pre>` +
		`<div><span>前<div><h2>中の見出し</h2></div>後</span></div>` +
		`<table><tr><th>列</th><th>値</th></tr><tr><td>&lt;b&gt;</td><td>_c_</td></tr></table></body></html>`
	texts := []string{"<div> の *使い方*", "<m:oMath> と [x](y) と &lt;", "1. 番号ではない", "# 見出しではない", "- 項目ではない", "> 引用ではない", "*x* <y>", "**そのまま** <z>", "<b>", "_c_"}
	for _, tc := range []struct {
		name string
		md   string
	}{{"parsed", htmlMarkdown(page, true)}, {"streamed", htmlStreamMarkdown(page)}} {
		md := tc.md
		// (the streamed path writes a <br> as a space: its "- " is inside the line)
		for _, want := range []string{"&lt;div&gt; の \\*使い方\\*", "1\\. 番号ではない", "\\# 見出しではない", "項目ではない", "`*x* <y>`", "**そのまま** <z>"} {
			if !strings.Contains(md, want) {
				t.Errorf("%s: no %q in\n%s", tc.name, want, md)
			}
		}
		out := commonMark(t, md)
		checkReadsBack(t, md, out, texts)
		if !strings.Contains(out, "<h1>") || !strings.Contains(out, "<h2>中の見出し</h2>") || strings.Count(out, "<li>") != 1 || strings.Contains(out, "<blockquote>") ||
			strings.Contains(out, "<div>") || strings.Contains(out, "<b>") || strings.Contains(out, "<em>") {
			t.Errorf("%s: the page's text made markup of its own, or its own markup was lost:\n%s\n%s", tc.name, md, out)
		}
	}
}

// TestHTMLBlockInsideLink: a block inside a link (a <div> in an <a>, as search pages write)
// leaves no trace of its own in the link's text.
func TestHTMLBlockInsideLink(t *testing.T) {
	md := htmlMarkdown(`<p><a href="https://example.jp"><div>枠の *中*</div></a></p><h2><span><div>見出し</div></span></h2>`, false)
	if !strings.Contains(md, "[枠の \\*中\\*](https://example.jp)") || !strings.Contains(md, "## 見出し") || strings.Contains(md, blockMark) {
		t.Fatalf("%q", md)
	}
}

// TestCellsLookingLikeMarkup: spreadsheet and CSV cells keep text that looks like markup.
func TestCellsLookingLikeMarkup(t *testing.T) {
	f := excelize.NewFile()
	for cell, v := range map[string]string{"A1": "品名", "B1": "備考", "A2": "<div>箱</div>", "B2": "*至急* [x](y)"} {
		if err := f.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	csv := []byte("品名,備考\n<div>箱</div>,*至急* [x](y)\n")
	for name, data := range map[string][]byte{"cells.xlsx": buf.Bytes(), "cells.csv": csv} {
		d, err := Convert(context.Background(), data, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := `| &lt;div&gt;箱&lt;/div&gt; | \*至急\* \[x\](y) |`; !strings.Contains(d.Markdown, want) {
			t.Errorf("%s: no %q in\n%s", name, want, d.Markdown)
		}
		out := commonMark(t, d.Markdown)
		checkReadsBack(t, d.Markdown, out, []string{"<div>箱</div>", "*至急* [x](y)"})
	}
}

// TestMailAndFeedTextLooksLikeMarkup: a plain mail body and its headers, and a feed's plain
// titles and descriptions, keep text that looks like markup as text.
func TestMailAndFeedTextLooksLikeMarkup(t *testing.T) {
	eml := "From: yamada@example.jp\r\nTo: sato@example.jp\r\nSubject: =?UTF-8?B?" + b64("<件名> *至急*") + "?=\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n<div>本文</div>\r\n\r\n1. 番号ではない\r\n"
	rss := `<?xml version="1.0"?><rss version="2.0"><channel><title>社内 *速報* &amp;amp; 1</title><description>plain [x](y)</description>` +
		`<item><title># 1 号</title><description>1. 番号ではない *注*</description></item></channel></rss>`
	for _, tc := range []struct {
		name  string
		data  string
		texts []string
	}{
		{"m.eml", eml, []string{"<件名> *至急*", "<div>本文</div>", "1. 番号ではない"}},
		{"feed.xml", rss, []string{"社内 *速報* &amp; 1", "plain [x](y)", "# 1 号", "1. 番号ではない *注*"}},
	} {
		d, err := Convert(context.Background(), []byte(tc.data), tc.name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := commonMark(t, d.Markdown)
		checkReadsBack(t, d.Markdown, out, tc.texts)
		if strings.Contains(out, "<div>") || strings.Contains(out, "<em>") || strings.Contains(out, "<ol>") || strings.Contains(out, `<a href="y"`) {
			t.Errorf("%s: the text made markup of its own:\n%s", tc.name, out)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// FuzzEscapeMarkdown: any line of text, escaped, reads back as itself in CommonMark (as one
// paragraph, or nothing for a blank line) and through mdtext.Unescape.
func FuzzEscapeMarkdown(f *testing.F) {
	for _, s := range markupLike {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r\x00") || len(s) > 200 {
			return
		}
		s = strings.TrimSpace(Clean(s))
		if s == "" || strings.ContainsAny(s, "\t\f\v\u0085\u00a0") || strings.ContainsFunc(s, unicode.IsSpace) && strings.Contains(s, "  ") {
			return // white space runs are the reader's to collapse
		}
		md := EscapeMarkdown(s)
		if got := mdtext.Unescape(md); got != s {
			t.Fatalf("mdtext.Unescape(%q) = %q, want %q", md, got, s)
		}
		out := commonMark(t, md)
		if got := strings.TrimSpace(shownText(out)); got != s {
			t.Fatalf("%q escaped as %q reads %q (%s)", s, md, got, out)
		}
	})
}

// FuzzEscapeMarkdownLines: any paragraph of lines (white space runs collapsed, as a reader
// shows them), escaped, reads back line by line as written in CommonMark.
func FuzzEscapeMarkdownLines(f *testing.F) {
	for _, s := range markupLike {
		f.Add(s + "\n" + s)
	}
	f.Add("abc\n---")
	f.Add("abc\n===")
	f.Add("abc\n    code")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 200 {
			return
		}
		var lines []string
		for _, l := range strings.Split(Clean(s), "\n") {
			l = strings.Join(strings.Fields(l), " ")
			if l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			return
		}
		s = strings.Join(lines, "\n")
		md := EscapeMarkdown(s)
		out := commonMark(t, md)
		if got := strings.TrimSpace(shownText(out)); got != s {
			t.Fatalf("%q escaped as %q reads %q (%s)", s, md, got, out)
		}
	})
}
