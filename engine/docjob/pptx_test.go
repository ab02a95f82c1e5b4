package docjob

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/job"
)

const (
	pNS   = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	relNS = `xmlns="http://schemas.openxmlformats.org/package/2006/relationships"`
	relT  = `http://schemas.openxmlformats.org/officeDocument/2006/relationships/`
)

// pngBytes is a 1×1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func sp(ph, x, y, body string) string {
	var nv, xfrm string
	if ph != "" {
		nv = `<p:nvPr>` + ph + `</p:nvPr>`
	}
	if x != "" {
		xfrm = `<a:xfrm><a:off x="` + x + `" y="` + y + `"/><a:ext cx="100" cy="100"/></a:xfrm>`
	}
	return `<p:sp><p:nvSpPr><p:cNvPr id="9" name="s"/><p:cNvSpPr/>` + nv + `</p:nvSpPr><p:spPr>` + xfrm + `</p:spPr><p:txBody><a:bodyPr/>` + body + `</p:txBody></p:sp>`
}

func para(text string) string { return `<a:p><a:r><a:t>` + text + `</a:t></a:r></a:p>` }

// makePPTX builds a two-slide presentation whose slide order (slide2.xml first) differs from the
// part names, with a layout, a notes slide, comments, a table, a chart and a picture.
func makePPTX(t testing.TB) []byte {
	t.Helper()
	slide1 := `<p:sld ` + pNS + `><p:cSld><p:spTree>` +
		// body placeholder without its own position: the layout puts it below the title
		sp(`<p:ph idx="1"/>`, "", "", `<a:p><a:r><a:t>売上は前年比</a:t></a:r><a:br/><a:r><a:t>12%増</a:t></a:r></a:p>`+
			`<a:p><a:pPr lvl="1"/><a:r><a:t>東日本が牽引</a:t></a:r></a:p><a:p><a:pPr><a:buNone/></a:pPr><a:r><a:t>補足なし</a:t></a:r></a:p>`) +
		sp(`<p:ph type="title"/>`, "100", "100", para("第3四半期の報告")+para("営業部")) +
		// a group at the bottom with two boxes, the right one written first
		`<p:grpSp><p:nvGrpSpPr><p:cNvPr id="20" name="g"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="9000000"/></a:xfrm></p:grpSpPr>` +
		sp("", "5000000", "9000000", para("右の箱")) + sp("", "100", "9000000", para("左の箱")) + `</p:grpSp>` +
		// a table with a horizontally merged header
		`<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="30" name="t"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="100" y="5000000"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>` +
		`<a:tr><a:tc gridSpan="2"><a:txBody>` + para("地域別") + `</a:txBody></a:tc><a:tc hMerge="1"><a:txBody><a:p/></a:txBody></a:tc></a:tr>` +
		`<a:tr><a:tc><a:txBody>` + para("東日本") + `</a:txBody></a:tc><a:tc><a:txBody>` + para("120") + `</a:txBody></a:tc></a:tr>` +
		`</a:tbl></a:graphicData></a:graphic></p:graphicFrame>` +
		// a SmartArt diagram
		`<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="32" name="d"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="100" y="7000000"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" r:dm="rId4" r:lo="rId5"/></a:graphicData></a:graphic></p:graphicFrame>` +
		`</p:spTree></p:cSld></p:sld>`
	slide2 := `<p:sld ` + pNS + ` show="0"><p:cSld><p:spTree>` +
		sp(`<p:ph type="ctrTitle"/>`, "0", "0", para("グラフと写真")) +
		`<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="31" name="c"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="2000000"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rId3"/></a:graphicData></a:graphic></p:graphicFrame>` +
		`<p:pic><p:nvPicPr><p:cNvPr id="40" name="Picture 4" descr="倉庫の写真"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="rId4"/></p:blipFill><p:spPr><a:xfrm><a:off x="0" y="6000000"/></a:xfrm></p:spPr></p:pic>` +
		`<p:pic><p:nvPicPr><p:cNvPr id="41" name="Picture 5" descr="ロゴ"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:link="rId5"/></p:blipFill><p:spPr><a:xfrm><a:off x="0" y="7000000"/></a:xfrm></p:spPr></p:pic>` +
		`</p:spTree></p:cSld></p:sld>`
	chart := `<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart>` +
		`<c:title><c:tx><c:rich><a:p><a:r><a:t>月別件数</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:barChart>` +
		`<c:ser><c:tx><c:strRef><c:strCache><c:pt idx="0"><c:v>東京</c:v></c:pt></c:strCache></c:strRef></c:tx>` +
		`<c:cat><c:strRef><c:strCache><c:pt idx="0"><c:v>4月</c:v></c:pt><c:pt idx="1"><c:v>5月</c:v></c:pt></c:strCache></c:strRef></c:cat>` +
		`<c:val><c:numRef><c:numCache><c:pt idx="0"><c:v>2003</c:v></c:pt><c:pt idx="1"><c:v>17</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>` +
		`</c:barChart></c:plotArea></c:chart></c:chartSpace>`
	layout := `<p:sldLayout ` + pNS + `><p:cSld><p:spTree>` + sp(`<p:ph type="body" idx="1"/>`, "100", "1500000", "") + `</p:spTree></p:cSld></p:sldLayout>`
	notes := `<p:notes ` + pNS + `><p:cSld><p:spTree>` + sp(`<p:ph type="sldImg"/>`, "", "", "") + sp(`<p:ph type="body" idx="1"/>`, "", "", para("ここで質問を受ける")) + `</p:spTree></p:cSld></p:notes>`
	comments := `<p:cmLst ` + pNS + `><p:cm authorId="0" dt="2024-04-01T10:00:00.000"><p:pos x="0" y="0"/><p:text>数字を確認</p:text></p:cm></p:cmLst>`
	authors := `<p:cmAuthorLst ` + pNS + `><p:cmAuthor id="0" name="山田" initials="Y"/></p:cmAuthorLst>`
	return makeZip(t, []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
		{name: "ppt/presentation.xml", data: []byte(`<p:presentation ` + pNS + `><p:sldIdLst><p:sldId id="256" r:id="rId7"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst></p:presentation>`)},
		{name: "ppt/_rels/presentation.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId2" Type="` + relT + `slide" Target="slides/slide1.xml"/><Relationship Id="rId7" Type="` + relT + `slide" Target="slides/slide2.xml"/></Relationships>`)},
		{name: "ppt/slides/slide1.xml", data: []byte(slide1)},
		{name: "ppt/diagrams/data1.xml", data: []byte(`<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>` +
			`<dgm:pt modelId="0" type="doc"><dgm:t><a:p><a:r><a:t>図全体</a:t></a:r></a:p></dgm:t></dgm:pt>` +
			`<dgm:pt modelId="1"><dgm:t><a:bodyPr/><a:p><a:r><a:t>企画</a:t></a:r></a:p></dgm:t></dgm:pt>` +
			`<dgm:pt modelId="2" type="parTrans"><dgm:t><a:p><a:r><a:t>線</a:t></a:r></a:p></dgm:t></dgm:pt>` +
			`<dgm:pt modelId="3"><dgm:t><a:p><a:r><a:t>開発</a:t></a:r></a:p></dgm:t></dgm:pt></dgm:ptLst></dgm:dataModel>`)},
		{name: "ppt/slides/_rels/slide1.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId4" Type="` + relT + `diagramData" Target="../diagrams/data1.xml"/><Relationship Id="rId1" Type="` + relT + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/><Relationship Id="rId2" Type="` + relT + `notesSlide" Target="../notesSlides/notesSlide1.xml"/><Relationship Id="rId3" Type="` + relT + `comments" Target="../comments/comment1.xml"/></Relationships>`)},
		{name: "ppt/slides/slide2.xml", data: []byte(slide2)},
		{name: "ppt/slides/_rels/slide2.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId3" Type="` + relT + `chart" Target="../charts/chart1.xml"/><Relationship Id="rId4" Type="` + relT + `image" Target="../media/image1.png"/><Relationship Id="rId5" Type="` + relT + `image" Target="https://example.jp/logo.png" TargetMode="External"/></Relationships>`)},
		{name: "ppt/slideLayouts/slideLayout1.xml", data: []byte(layout)},
		{name: "ppt/notesSlides/notesSlide1.xml", data: []byte(notes)},
		{name: "ppt/comments/comment1.xml", data: []byte(comments)},
		{name: "ppt/commentAuthors.xml", data: []byte(authors)},
		{name: "ppt/charts/chart1.xml", data: []byte(chart)},
		{name: "ppt/media/image1.png", data: pngBytes},
	})
}

// TestPPTX: slides in the presentation's order, titles, reading order (layout positions, groups
// left to right), lists, merged table cells, SmartArt text, chart data, pictures with alt text,
// notes, comments and hidden slides.
func TestPPTX(t *testing.T) {
	data := makePPTX(t)
	if k := Detect(data, "deck.bin"); k != KindPPTX {
		t.Fatalf("detected %s", k)
	}
	d, err := ConvertKind(context.Background(), data, "deck.pptx", KindPPTX, Options{assetDir: "deck_files"})
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown
	order := []string{
		"<!-- Slide 1 (hidden) -->\n\n## グラフと写真",
		"**月別件数** (Bar chart)", "| | 東京 |", "| 4月 | 2003 |", "| 5月 | 17 |",
		"![倉庫の写真](deck_files/Picture4.png)", "![ロゴ](https://example.jp/logo.png)",
		"<!-- Slide 2 -->\n\n## 第3四半期の報告 営業部",
		"- 売上は前年比 12%増", "  - 東日本が牽引", "\n\n補足なし",
		"| 地域別 | 地域別 |", "| 東日本 | 120 |", "\n\n- 企画\n- 開発\n\n",
		"左の箱", "右の箱",
		"> Comment (山田 (Y), 2024-04-01T10:00:00.000): 数字を確認",
		"### Notes\n\nここで質問を受ける",
	}
	norm := strings.ReplaceAll(md, "|  |", "| |")
	at := 0
	for _, want := range order {
		i := strings.Index(norm[at:], want)
		if i < 0 {
			t.Fatalf("missing (or out of order) %q after offset %d in\n%s", want, at, md)
		}
		at += i + len(want)
	}
	if d.Pages != 2 || len(d.Assets) != 1 || d.Assets[0].Name != "Picture4.png" || string(d.Assets[0].Data) != string(pngBytes) {
		t.Fatalf("pages %d assets %+v", d.Pages, d.Assets)
	}
	if st, _ := d.Status(); st != StatusReady {
		t.Fatalf("status %s", st)
	}
	// without an asset folder the picture is linked by name, to be written beside the Markdown
	d, err = ConvertKind(context.Background(), data, "deck.pptx", KindPPTX, Options{})
	if err != nil || !strings.Contains(d.Markdown, "![倉庫の写真](Picture4.png)") || len(d.Assets) != 1 || d.Assets[0].Name != "Picture4.png" {
		t.Fatalf("no asset dir: %v %+v\n%s", err, d.Assets, d.Markdown)
	}
	// with pictures off (an archive's entry) it keeps its alt text only
	d, err = ConvertKind(context.Background(), data, "deck.pptx", KindPPTX, Options{noAssets: true})
	if err != nil || !strings.Contains(d.Markdown, "[image: 倉庫の写真]") || len(d.Assets) != 0 {
		t.Fatalf("pictures off: %v %+v\n%s", err, d.Assets, d.Markdown)
	}
}

// TestPPTXBadInput: a .pptx that is not one, a package without its presentation part, an
// encrypted one and a part that expands past its declared size all give coded errors.
func TestPPTXBadInput(t *testing.T) {
	ctx := context.Background()
	_, err := Convert(ctx, []byte("this is not a presentation at all \x00\x01\x02"), "deck.pptx", Options{})
	if codeOf(err) != job.E004 || !strings.Contains(err.Error(), "PowerPoint") {
		t.Fatalf("garbage: %v", err)
	}
	if je := job.AsError(err); je == nil || !strings.Contains(je.MessageJa, "PowerPoint") {
		t.Fatalf("no Japanese message: %v", err)
	}
	noPres := makeZip(t, []zipEntry{{name: "[Content_Types].xml", data: []byte("<Types/>")}, {name: "ppt/slides/slide1.xml", data: []byte("<p:sld/>")}})
	_, err = Convert(ctx, noPres, "deck.pptx", Options{})
	if codeOf(err) != job.E004 || !strings.Contains(err.Error(), "ppt/presentation.xml") {
		t.Fatalf("no presentation part: %v", err)
	}
	bomb := makeZip(t, []zipEntry{{name: "[Content_Types].xml", data: []byte("<Types/>")},
		{name: "ppt/presentation.xml", data: []byte("<p:presentation>" + strings.Repeat(" ", 4096) + "</p:presentation>"), declared: 10}})
	_, err = Convert(ctx, bomb, "deck.pptx", Options{})
	if codeOf(err) != job.E003 {
		t.Fatalf("bomb: %v", err)
	}
	enc := append(append([]byte{}, oleMagic...), make([]byte, 600)...)
	enc = append(enc, utf16("EncryptionInfo")...)
	_, err = Convert(ctx, enc, "deck.pptx", Options{})
	if codeOf(err) != job.E005 {
		t.Fatalf("encrypted: %v", err)
	}
}

// TestHandlerWritesPictures: the handler writes a deck's pictures into the folder the Markdown
// links to, beside the Markdown file.
func TestHandlerWritesPictures(t *testing.T) {
	c, _ := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	p := filepath.Join(in, "deck.pptx")
	if err := os.WriteFile(p, makePPTX(t), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := run(t, c, dataDir, Input{Path: p})
	if err != nil || res.Kind != KindPPTX || res.Status != StatusReady {
		t.Fatalf("%+v %v", res, err)
	}
	md, err := os.ReadFile(res.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := AssetDir("deck.pptx", res.SHA256)
	if !strings.Contains(string(md), "("+dir+"/Picture4.png)") {
		t.Fatalf("link missing in\n%s", md)
	}
	img, err := os.ReadFile(filepath.Join(filepath.Dir(res.OutputPath), dir, "Picture4.png"))
	if err != nil || string(img) != string(pngBytes) {
		t.Fatalf("picture not beside the Markdown: %v", err)
	}
}

func TestSafeStem(t *testing.T) {
	for in, want := range map[string]string{"Picture 4": "Picture_4", "図 1": "図_1", "<写真>/1": "写真1", "../../etc": "etc",
		strings.Repeat("a", 60): strings.Repeat("a", 40)} {
		if got := safeStem(in); got != want {
			t.Errorf("safeStem(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPPTXDamagedSlide: a slide that cannot be parsed or whose part is missing is marked, the
// other slides are converted, and the result is partial naming them.
func TestPPTXDamagedSlide(t *testing.T) {
	good := `<p:sld ` + pNS + `><p:cSld><p:spTree>` + sp(`<p:ph type="title"/>`, "0", "0", para("読める")) + `</p:spTree></p:cSld></p:sld>`
	data := makeZip(t, []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<Types/>`)},
		{name: "ppt/presentation.xml", data: []byte(`<p:presentation ` + pNS + `><p:sldIdLst><p:sldId id="256" r:id="rId1"/><p:sldId id="257" r:id="rId2"/><p:sldId id="258" r:id="rId3"/></p:sldIdLst></p:presentation>`)},
		{name: "ppt/_rels/presentation.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `slide" Target="slides/slide1.xml"/><Relationship Id="rId2" Type="` + relT + `slide" Target="slides/slide2.xml"/><Relationship Id="rId3" Type="` + relT + `slide" Target="slides/slide9.xml"/></Relationships>`)},
		{name: "ppt/slides/slide1.xml", data: []byte(good)},
		{name: "ppt/slides/slide2.xml", data: []byte(`<p:sld ` + pNS + `><p:cSld><p:spTree><p:sp>`)},
	})
	d, err := Convert(context.Background(), data, "d.pptx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, why := d.Status()
	if st != StatusPartial || !strings.Contains(why, "2, 3") || !strings.Contains(d.Markdown, "<!-- Slide 1 -->\n\n## 読める") ||
		!strings.Contains(d.Markdown, "<!-- Slide 2 -->\n\n> (this slide could not be read)") || d.ReasonJa() == "" {
		t.Fatalf("status %s %q\n%s", st, why, d.Markdown)
	}
}

// TestPPTXInZip: a deck inside a ZIP converted in-process keeps its pictures' alt text and links
// to no file (the archive's conversion writes no pictures for its entries).
func TestPPTXInZip(t *testing.T) {
	data := makeZip(t, []zipEntry{{name: "deck.pptx", data: makePPTX(t)}})
	d, err := ConvertKind(context.Background(), data, "a.zip", KindZIP, Options{assetDir: "a_files"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "[image: 倉庫の写真]") || strings.Contains(d.Markdown, "a_files/") || len(d.Assets) != 0 {
		t.Fatalf("assets %+v\n%s", d.Assets, d.Markdown)
	}
}

// TestPPTXInMail: a deck attached to a mail keeps its pictures' alt text and links to no file
// (the mail's Markdown holds the attachment's; before, it linked pictures that were never
// written).
func TestPPTXInMail(t *testing.T) {
	mail := "From: a@example.jp\r\nTo: b@example.jp\r\nSubject: deck\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n資料を送ります。\r\n" +
		"--B\r\nContent-Type: application/vnd.openxmlformats-officedocument.presentationml.presentation\r\nContent-Disposition: attachment; filename=deck.pptx\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		b64lines(makePPTX(t)) + "\r\n--B--\r\n"
	d, err := ConvertKind(context.Background(), []byte(mail), "m.eml", KindEML, Options{assetDir: "m_files"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "[image: 倉庫の写真]") || strings.Contains(d.Markdown, "m_files/") || len(d.Assets) != 0 {
		t.Fatalf("assets %+v\n%s", d.Assets, d.Markdown)
	}
}
