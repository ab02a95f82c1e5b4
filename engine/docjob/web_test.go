package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"

	"jobdesk/engine/job"
)

func sjis(t *testing.T, s string) []byte { return encodeAs(t, japanese.ShiftJIS, s) }

func eucjp(t *testing.T, s string) []byte { return encodeAs(t, japanese.EUCJP, s) }

// encodeAs is s in the encoding e.
func encodeAs(t *testing.T, e encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func convertOK(t *testing.T, data []byte, name string) *Doc {
	t.Helper()
	d, err := Convert(context.Background(), data, name, Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func wantIn(t *testing.T, md string, want []string, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("missing %q in:\n%s", w, md)
		}
	}
	for _, w := range not {
		if strings.Contains(md, w) {
			t.Errorf("must not contain %q:\n%s", w, md)
		}
	}
}

const pageJa = `<!DOCTYPE html>
<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">
<title>社内報 12月号</title><style>body{color:red}</style><script>alert("x")</script></head>
<body><nav><a href="/">ホーム</a> | <a href="/menu">メニュー</a></nav>
<h1>年末のお知らせ</h1>
<p>今年も<strong>大変お世話に</strong>なりました。詳しくは<a href="https://example.jp/news" title="お知らせ一覧">こちら</a>。</p>
<h2>休業日</h2>
<ul><li>12月29日（金）<ul><li>午前のみ営業</li></ul></li><li>1月3日（水）まで</li></ul>
<ol start="3"><li>三番目</li><li>四番目</li></ol>
<table><tr><th>部署</th><th>担当</th></tr><tr><td>総務部</td><td>山田 | 佐藤</td></tr></table>
<p><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB" alt="会社のロゴ"></p>
<blockquote>お客様の声を大切に。</blockquote>
<pre><code class="language-go">fmt.Println("こんにちは")</code></pre>
<div hidden>隠しテキスト</div><form><input value="検索"><button>送信</button></form>
</body></html>`

// A Shift_JIS page (declared in a meta tag) and an EUC-JP page (declared nowhere) become real
// Markdown: headings, emphasis, links with titles, nested and numbered lists, a table, image
// alt text with the data URI cut to its type, a quote and a fenced code block; scripts,
// styles, navigation, forms and hidden elements are dropped.
func TestHTMLJapanesePages(t *testing.T) {
	want := []string{"# 年末のお知らせ", "今年も**大変お世話に**なりました。", `[こちら](https://example.jp/news "お知らせ一覧")`,
		"## 休業日", "* 12月29日（金）\n  * 午前のみ営業\n* 1月3日（水）まで", "3. 三番目\n4. 四番目",
		"| 部署 | 担当 |\n| --- | --- |\n| 総務部 | 山田 \\| 佐藤 |", "![会社のロゴ](data:image/png;base64...)",
		"> お客様の声を大切に。", "```go\nfmt.Println(\"こんにちは\")\n```"}
	not := []string{"alert", "color:red", "ホーム", "メニュー", "隠しテキスト", "送信", "iVBORw0KGgo", "<"}
	d := convertOK(t, sjis(t, pageJa), "news.html")
	if d.Kind != KindHTML || d.Encoding != "shift_jis" {
		t.Errorf("kind %s, encoding %q", d.Kind, d.Encoding)
	}
	wantIn(t, d.Markdown, want, not)
	if st, _ := d.Status(); st != StatusReady {
		t.Errorf("status %s", st)
	}
	euc := strings.Replace(pageJa, `<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">`, "", 1)
	d = convertOK(t, eucjp(t, euc), "page") // no extension: detected from the content
	if d.Kind != KindHTML || d.Encoding != EncEUCJP {
		t.Errorf("EUC-JP page: kind %s, encoding %q", d.Kind, d.Encoding)
	}
	wantIn(t, d.Markdown, want, not)
	// Without its own h1, the page title leads.
	d = convertOK(t, []byte("<html><head><title>題名</title></head><body><p>本文</p></body></html>"), "x.htm")
	wantIn(t, d.Markdown, []string{"# 題名\n\n本文"}, nil)
}

// Only the <main> of a page is kept; search-engine redirect links are written as their target.
func TestHTMLMainAndRedirects(t *testing.T) {
	page := `<html><body><div class="sidebar">サイドバー</div><main><h1>本文</h1>
<p><a href="https://www.bing.com/ck/a?!&&p=abc&u=a1aHR0cHM6Ly9leGFtcGxlLmpwL3BhdGg&ntb=1">結果</a>
<a href="/url?q=https://example.com/x&sa=U">次</a></p></main><footer>フッター</footer></body></html>`
	d := convertOK(t, []byte(page), "r.html")
	wantIn(t, d.Markdown, []string{"# 本文", "[結果](https://example.jp/path)", "[次](https://example.com/x)"},
		[]string{"サイドバー", "フッター", "bing.com/ck"})
}

// Deeply nested markup converts without running out of stack.
func TestHTMLDeepNesting(t *testing.T) {
	page := strings.Repeat("<div><span>", 20000) + "深い" + strings.Repeat("</span></div>", 20000)
	d := convertOK(t, []byte("<html><body>"+page+"</body></html>"), "deep.html")
	wantIn(t, d.Markdown, []string{"深い"}, nil)
}

// makeEPUB writes an EPUB whose spine order differs from its manifest order.
func makeEPUB(t *testing.T, chapters map[string]string, spine []string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.CreateHeader(&zip.FileHeader{Name: "mimetype", Method: zip.Store})
	w.Write([]byte("application/epub+zip"))
	w, _ = z.Create("META-INF/container.xml")
	w.Write([]byte(`<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`))
	var man, sp strings.Builder
	for name := range chapters {
		man.WriteString(`<item id="` + name + `" href="text/` + name + `.xhtml" media-type="application/xhtml+xml"/>`)
	}
	for _, s := range spine {
		sp.WriteString(`<itemref idref="` + s + `"/>`)
	}
	w, _ = z.Create("OEBPS/content.opf")
	w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>業務マニュアル</dc:title><dc:creator>総務部</dc:creator><dc:language>ja</dc:language><dc:description>新人向けの手引き</dc:description><meta property="dcterms:modified">2024-01-01T00:00:00Z</meta></metadata><manifest>` +
		man.String() + `<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/></manifest><spine>` + sp.String() + `</spine></package>`))
	for name, body := range chapters {
		if body == "" {
			continue // listed in the manifest, missing from the book
		}
		w, _ = z.Create("OEBPS/text/" + name + ".xhtml")
		w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>` + name + `</title><link rel="stylesheet" href="s.css"/></head><body>` + body + `</body></html>`))
	}
	z.Close()
	return b.Bytes()
}

// An EPUB gives its title, authors and description, then its chapters in spine order through
// the HTML path; a chapter missing from the book makes it partial, naming the chapter.
func TestEPUBChaptersInSpineOrder(t *testing.T) {
	data := makeEPUB(t, map[string]string{
		"c1": "<h1>第1章 はじめに</h1><p>ようこそ<em>当社</em>へ。</p>",
		"c2": "<h1>第2章 勤怠</h1><ul><li>出勤</li><li>退勤</li></ul>",
	}, []string{"c2", "c1"})
	d := convertOK(t, data, "manual.epub")
	if d.Kind != KindEPUB {
		t.Fatalf("kind %s", d.Kind)
	}
	wantIn(t, d.Markdown, []string{"**Title:** 業務マニュアル", "**Authors:** 総務部", "**Description:** 新人向けの手引き",
		"# 第2章 勤怠", "* 出勤\n* 退勤", "# 第1章 はじめに", "ようこそ*当社*へ。"}, []string{"<", "stylesheet"})
	if strings.Index(d.Markdown, "第2章") > strings.Index(d.Markdown, "第1章") {
		t.Error("chapters are not in spine order")
	}
	if st, _ := d.Status(); st != StatusReady || d.Pages != 2 {
		t.Errorf("status %s, %d chapters", st, d.Pages)
	}
	// the same book renamed .zip is still an EPUB (content first)
	if d := convertOK(t, data, "manual.zip"); d.Kind != KindEPUB {
		t.Errorf("renamed: kind %s", d.Kind)
	}
	broken := makeEPUB(t, map[string]string{"c1": "<p>ある</p>", "c9": ""}, []string{"c1", "c9"})
	d = convertOK(t, broken, "b.epub")
	if st, why := d.Status(); st != StatusPartial || !strings.Contains(why, "OEBPS/text/c9.xhtml") {
		t.Errorf("a missing chapter: %s %q", st, why)
	}
}

// JSON is pretty-printed in a fenced block with its keys in the file's order; JSON that does
// not parse is E004; a notebook becomes its cells with outputs and no notebook metadata.
func TestJSONAndNotebook(t *testing.T) {
	d := convertOK(t, []byte(`{"名前":"山田","id":7,"tags":["a","b"],"zeta":null}`), "data.json")
	wantIn(t, d.Markdown, []string{"```json\n{\n  \"名前\": \"山田\",\n  \"id\": 7,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \"zeta\": null\n}\n```"}, nil)
	if _, err := Convert(context.Background(), []byte(`{"a": 1,`), "bad.json", Options{}); codeOf(err) != job.E004 {
		t.Errorf("invalid JSON: %v", err)
	}
	nb := `{"cells":[{"cell_type":"markdown","metadata":{},"source":["# 分析ノート\n","説明"]},
{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[{"name":"stdout","output_type":"stream","text":["合計 42\n"]}],"source":["print(\"合計\", 42)"]},
{"cell_type":"code","execution_count":2,"metadata":{},"outputs":[{"output_type":"error","ename":"ZeroDivisionError","evalue":"division by zero","traceback":["\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"]}],"source":"1/0"}],
"metadata":{"kernelspec":{"language":"python","name":"python3"}},"nbformat":4,"nbformat_minor":5}`
	d = convertOK(t, []byte(nb), "notes.ipynb")
	if d.Kind != KindNotebook {
		t.Errorf("kind %s", d.Kind)
	}
	wantIn(t, d.Markdown, []string{"# 分析ノート\n説明", "```python\nprint(\"合計\", 42)\n```", "合計 42", "ZeroDivisionError: division by zero"},
		[]string{"nbformat", "kernelspec", "\x1b"})
	// detected by content without the extension
	if d := convertOK(t, []byte(nb), "notes"); d.Kind != KindNotebook {
		t.Errorf("no extension: kind %s", d.Kind)
	}
}

// XML is pretty-printed (a Shift_JIS declaration honoured); RSS and Atom feeds become a list of
// their items with HTML descriptions rendered, never raw source.
func TestXMLAndFeeds(t *testing.T) {
	x := sjis(t, `<?xml version="1.0" encoding="Shift_JIS"?><発注書 番号="12"><品目>ボールペン</品目><数量>3</数量></発注書>`)
	d := convertOK(t, x, "order.xml")
	wantIn(t, d.Markdown, []string{"```xml\n<発注書 番号=\"12\">\n  <品目>ボールペン</品目>\n  <数量>3</数量>\n</発注書>\n```"}, nil)
	if _, err := Convert(context.Background(), []byte(`<a><b></a>`), "bad.xml", Options{}); codeOf(err) != job.E004 {
		t.Errorf("malformed XML: %v", err)
	}
	rss := `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>総務ニュース</title><description>社内の話題</description>
<item><title>年末調整のお願い</title><link>https://example.jp/1</link><pubDate>Mon, 02 Dec 2024 09:00:00 +0900</pubDate><description><![CDATA[<p>書類を<b>12月10日</b>までに提出してください。</p>]]></description></item>
<item><title>忘年会</title><link>https://example.jp/2</link><content:encoded><![CDATA[<ul><li>日時: 12月20日</li></ul>]]></content:encoded></item></channel></rss>`
	d = convertOK(t, []byte(rss), "feed.xml")
	if d.Kind != KindFeed {
		t.Errorf("kind %s", d.Kind)
	}
	wantIn(t, d.Markdown, []string{"# 総務ニュース", "## 年末調整のお願い", "Link: https://example.jp/1", "書類を**12月10日**までに提出してください。",
		"## 忘年会", "* 日時: 12月20日"}, []string{"<rss", "<item", "CDATA", "<p>"})
	atom := `<feed xmlns="http://www.w3.org/2005/Atom"><title>開発ブログ</title><entry><title>リリース 2.0</title><link rel="alternate" href="https://example.jp/r2"/><updated>2024-12-01T00:00:00Z</updated><author><name>鈴木</name></author><summary type="html">&lt;p&gt;新機能の紹介&lt;/p&gt;</summary></entry></feed>`
	d = convertOK(t, []byte(atom), "atom")
	wantIn(t, d.Markdown, []string{"# 開発ブログ", "## リリース 2.0", "Link: https://example.jp/r2", "Author: 鈴木", "新機能の紹介"}, []string{"<feed", "&lt;"})
}

// A file whose name claims a binary format its bytes are not fails E004 "damaged", naming the
// claimed type in both languages, instead of converting as text.
func TestNameClaimsAnotherFormat(t *testing.T) {
	for name, label := range map[string]string{"請求書.pdf": "PDF", "mail.msg": "Outlook mail (MSG)", "book.epub": "EPUB", "scan.png": "image"} {
		_, err := Convert(context.Background(), []byte("ただのテキストです。\nplain text\n"), name, Options{})
		je := job.AsError(err)
		if err == nil || je.Code != job.E004 || !strings.Contains(je.Message, label) || !strings.Contains(je.Cause, "not a") ||
			!strings.Contains(je.MessageJa, "ファイルではありません") {
			t.Errorf("%s: %v (%+v)", name, err, je)
		}
	}
	// a text file named as text stays text, and JSON named .txt stays text
	if d := convertOK(t, []byte(`{"a":1}`), "memo.txt"); d.Kind != KindText {
		t.Errorf("memo.txt: %s", d.Kind)
	}
}

func FuzzHTML(f *testing.F) {
	f.Add([]byte(pageJa))
	f.Add([]byte("<table><tr><td colspan=3><table><tr><td>x</td></tr></table></td></tr></table><ol><li><ul><li>y"))
	f.Fuzz(func(t *testing.T, data []byte) {
		convertHTML(data)
		htmlStreamMarkdown(string(data))
		convertXML(data, KindFeed, nil)
		convertJSON(data, KindNotebook)
	})
}

// A page over largeHTML converts in one pass without a tree (memory a small multiple of the
// page): headings, emphasis, links, lists, tables row by row; scripts, styles and navigation
// dropped — the same constructs as the tree path on the same markup.
func TestHTMLLargePageStreams(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>t</title><script>var secret = 1;</script><style>p{}</style></head><body><nav>メニュー</nav><h1>売上一覧</h1>`)
	b.WriteString(`<p>今月は<b>好調</b>です。<a href="https://example.jp/r" title="x">詳細</a></p><ol start="2"><li>一</li><li>二<ul><li>二の一</li></ul></li></ol><table><tr><th>店舗</th><th>売上</th></tr>`)
	for i := 0; b.Len() < largeHTML+1024; i++ {
		fmt.Fprintf(&b, "<tr><td>店舗%d</td><td>%d</td></tr>", i, i*100)
	}
	b.WriteString(`</table><blockquote>引用です</blockquote><pre>code  kept</pre></body></html>`)
	d := convertOK(t, []byte(b.String()), "big.html")
	wantIn(t, d.Markdown, []string{"# 売上一覧", "今月は**好調**です。[詳細](https://example.jp/r)", "2. 一", "3. 二", "  * 二の一",
		"| 店舗 | 売上 |\n| --- | --- |\n| 店舗0 | 0 |\n| 店舗1 | 100 |", "> 引用です", "```\ncode  kept\n```"},
		[]string{"secret", "p{}", "メニュー", "<td>"})
}

// A memo saved as .txt that starts like a mail header stays text; without an extension it is a
// mail.
func TestMemoWithMailHeaderStaysText(t *testing.T) {
	memo := []byte("To: 営業部各位\nFrom: 総務部\nSubject: 連絡\n\n来週の会議について。\n")
	if k := Detect(memo, "連絡.txt"); k != KindText {
		t.Errorf(".txt: %s", k)
	}
	if k := Detect(memo, "連絡"); k != KindEML {
		t.Errorf("no extension: %s", k)
	}
}

// BenchmarkHTMLPage converts a 300 KB Japanese page (headings, paragraphs with links, a table).
func BenchmarkHTMLPage(b *testing.B) {
	var p strings.Builder
	p.WriteString("<html><head><title>社内ポータル</title><script>var x=1;</script></head><body><nav>メニュー</nav><main>")
	for i := 0; p.Len() < 300<<10; i++ {
		fmt.Fprintf(&p, `<h2>お知らせ %d</h2><p>本日の<b>連絡事項</b>は<a href="/n/%d" title="詳細">こちら</a>をご覧ください。</p><table><tr><th>部署</th><th>件数</th></tr><tr><td>総務</td><td>%d</td></tr></table>`, i, i, i)
	}
	p.WriteString("</main></body></html>")
	data := []byte(p.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Convert(context.Background(), data, "portal.html", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Every converted document reports the kind Detect gives its bytes, so the converter's stored
// result (looked up by kind) is found again for the same file.
func TestConvertedKindIsTheDetectedKind(t *testing.T) {
	files := map[string][]byte{
		"a.html": []byte(pageJa), "b.json": []byte(`{"a":1}`), "c.xml": []byte(`<a><b>1</b></a>`),
		"d.rss": []byte(`<rss version="2.0"><other>x</other></rss>`), // a feed with no channel: shown as XML
		"e.eml": japaneseMail(t), "f.msg": makeMSG(t, false), "g.epub": makeEPUB(t, map[string]string{"c": "<p>x</p>"}, []string{"c"}),
	}
	for name, data := range files {
		d, err := Convert(context.Background(), data, name, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if k := Detect(data, name); d.Kind != k {
			t.Errorf("%s: converted as %s, detected as %s", name, d.Kind, k)
		}
	}
}

// An "Excel" export that is an HTML table saved as .xls converts as the table it is, not as a
// damaged Excel file.
func TestHTMLSavedAsXLS(t *testing.T) {
	page := sjis(t, `<html><head><meta charset="Shift_JIS"></head><body><table><tr><td>科目</td><td>金額</td></tr><tr><td>旅費</td><td>1,200</td></tr></table></body></html>`)
	d := convertOK(t, page, "仕訳.xls")
	wantIn(t, d.Markdown, []string{"| 科目 | 金額 |", "| 旅費 | 1,200 |"}, nil)
}
