package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// oneSlideDeck builds a presentation of one slide from its shapes (inner XML of p:spTree), the
// slide's relationships and, when notes is not empty, a notes slide with its relationships.
func oneSlideDeck(t testing.TB, shapes, rels, notes, notesRels string) []byte {
	t.Helper()
	slideRels := `<Relationships ` + relNS + `>` + rels
	entries := []zipEntry{
		{name: "[Content_Types].xml", data: []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
		{name: "ppt/presentation.xml", data: []byte(`<p:presentation ` + pNS + `><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`)},
		{name: "ppt/_rels/presentation.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `slide" Target="slides/slide1.xml"/></Relationships>`)},
		{name: "ppt/slides/slide1.xml", data: []byte(`<p:sld ` + pNS + `><p:cSld><p:spTree>` + shapes + `</p:spTree></p:cSld></p:sld>`)},
	}
	if notes != "" {
		slideRels += `<Relationship Id="rIdN" Type="` + relT + `notesSlide" Target="../notesSlides/notesSlide1.xml"/>`
		entries = append(entries,
			zipEntry{name: "ppt/notesSlides/notesSlide1.xml", data: []byte(`<p:notes ` + pNS + `><p:cSld><p:spTree>` + sp(`<p:ph type="body" idx="1"/>`, "", "", notes) + `</p:spTree></p:cSld></p:notes>`)},
			zipEntry{name: "ppt/notesSlides/_rels/notesSlide1.xml.rels", data: []byte(`<Relationships ` + relNS + `>` + notesRels + `</Relationships>`)})
	}
	entries = append(entries, zipEntry{name: "ppt/slides/_rels/slide1.xml.rels", data: []byte(slideRels + `</Relationships>`)})
	return makeZip(t, entries)
}

// TestPPTXLinks: text that links to a web page or a mail address keeps its address as a
// Markdown link, in text frames, table cells and speaker notes (resolved through the notes'
// own relationships); a jump to another slide stays plain text.
func TestPPTXLinks(t *testing.T) {
	link := func(text, id string) string {
		return `<a:r><a:rPr lang="ja-JP"><a:hlinkClick r:id="` + id + `"/></a:rPr><a:t>` + text + `</a:t></a:r>`
	}
	run := func(text string) string { return `<a:r><a:t>` + text + `</a:t></a:r>` }
	shapes := sp(`<p:ph type="title"/>`, "0", "0", para("お問い合わせ")) +
		sp("", "0", "1000000", `<a:p>`+run("詳しくは")+link("申込ページ ", "rId2")+run("をご覧ください。")+`</a:p>`+
			`<a:p>`+link("窓口", "rId3")+run("へ")+`</a:p>`+`<a:p>`+link("次のスライド", "rId4")+`</a:p>`) +
		`<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="30" name="t"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="3000000"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>` +
		`<a:tr><a:tc><a:txBody><a:p>` + run("資料") + `</a:p></a:txBody></a:tc><a:tc><a:txBody><a:p>` + run("所在") + `</a:p></a:txBody></a:tc></a:tr>` +
		`<a:tr><a:tc><a:txBody><a:p>` + run("手引き") + `</a:p></a:txBody></a:tc><a:tc><a:txBody><a:p>` + link("PDF", "rId2") + `</a:p></a:txBody></a:tc></a:tr>` +
		`</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
	rels := `<Relationship Id="rId2" Type="` + relT + `hyperlink" Target="https://example.jp/apply" TargetMode="External"/>` +
		`<Relationship Id="rId3" Type="` + relT + `hyperlink" Target="mailto:info@example.jp" TargetMode="External"/>` +
		`<Relationship Id="rId4" Type="` + relT + `slide" Target="slide2.xml"/>`
	notes := `<a:p>` + run("参考: ") + link("統計", "rId2") + `</a:p>`
	notesRels := `<Relationship Id="rId2" Type="` + relT + `hyperlink" Target="https://example.jp/stats" TargetMode="External"/>`
	d, err := ConvertKind(context.Background(), oneSlideDeck(t, shapes, rels, notes, notesRels), "l.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Slide 1 -->\n\n## お問い合わせ\n\n詳しくは[申込ページ](https://example.jp/apply) をご覧ください。\n\n[窓口](mailto:info@example.jp)へ\n\n次のスライド\n\n" +
		"| 資料 | 所在 |\n| --- | --- |\n| 手引き | [PDF](https://example.jp/apply) |\n\n### Notes\n\n参考: [統計](https://example.jp/stats)\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestSmartArtNesting: a SmartArt diagram's text is a list nested as its parent-child
// connections nest it, each parent's children in their order (not the data's order); a node
// that no connection reaches is still listed.
func TestSmartArtNesting(t *testing.T) {
	pt := func(id, text string) string {
		return `<dgm:pt modelId="` + id + `"><dgm:t><a:bodyPr/><a:p><a:r><a:t>` + text + `</a:t></a:r></a:p></dgm:t></dgm:pt>`
	}
	cxn := func(src, dest, ord string) string {
		return `<dgm:cxn modelId="c` + dest + `" srcId="` + src + `" destId="` + dest + `" srcOrd="` + ord + `" destOrd="0"/>`
	}
	data := `<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>` +
		`<dgm:pt modelId="0" type="doc"><dgm:t><a:p/></dgm:t></dgm:pt>` + pt("5", "出荷") + pt("2", "検品") + pt("1", "受注") + pt("3", "在庫確認") + pt("4", "与信確認") + pt("9", "備考") +
		`<dgm:pt modelId="7" type="pres"/></dgm:ptLst><dgm:cxnLst>` +
		cxn("0", "5", "2") + cxn("0", "1", "0") + cxn("0", "2", "1") + cxn("1", "4", "1") + cxn("1", "3", "0") +
		`<dgm:cxn modelId="p1" type="presOf" srcId="1" destId="7" srcOrd="0" destOrd="0"/></dgm:cxnLst></dgm:dataModel>`
	shapes := `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="32" name="d"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="100" y="100"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" r:dm="rId4"/></a:graphicData></a:graphic></p:graphicFrame>`
	deck := oneSlideDeck(t, shapes, `<Relationship Id="rId4" Type="`+relT+`diagramData" Target="../diagrams/data1.xml"/>`, "", "")
	deck = addZipEntry(t, deck, "ppt/diagrams/data1.xml", data)
	d, err := ConvertKind(context.Background(), deck, "s.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Slide 1 -->\n\n- 受注\n  - 在庫確認\n  - 与信確認\n- 検品\n- 出荷\n- 備考\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// addZipEntry returns the ZIP data with one more entry.
func addZipEntry(t testing.TB, data []byte, name, body string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var entries []zipEntry
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, zipEntry{name: f.Name, data: b})
	}
	return makeZip(t, append(entries, zipEntry{name: name, data: []byte(body)}))
}

// TestPPTXMasterPositions: a body placeholder placed neither on the slide nor in its layout
// stands where the slide master puts the body, so a text box above it reads first.
func TestPPTXMasterPositions(t *testing.T) {
	shapes := sp(`<p:ph type="title"/>`, "0", "0", para("工程表")) + sp(`<p:ph idx="1"/>`, "", "", para("本文の段落")) +
		sp("", "100", "1000000", para("上の注記"))
	deck := oneSlideDeck(t, shapes, `<Relationship Id="rIdL" Type="`+relT+`slideLayout" Target="../slideLayouts/slideLayout1.xml"/>`, "", "")
	deck = addZipEntry(t, deck, "ppt/slideLayouts/slideLayout1.xml", `<p:sldLayout `+pNS+`><p:cSld><p:spTree>`+sp(`<p:ph type="body" idx="1"/>`, "", "", "")+`</p:spTree></p:cSld></p:sldLayout>`)
	deck = addZipEntry(t, deck, "ppt/slideLayouts/_rels/slideLayout1.xml.rels", `<Relationships `+relNS+`><Relationship Id="rId1" Type="`+relT+`slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`)
	deck = addZipEntry(t, deck, "ppt/slideMasters/slideMaster1.xml", `<p:sldMaster `+pNS+`><p:cSld><p:spTree>`+sp(`<p:ph type="title"/>`, "100", "100", "")+sp(`<p:ph type="body" idx="1"/>`, "100", "5000000", "")+`</p:spTree></p:cSld></p:sldMaster>`)
	deck = addZipEntry(t, deck, "ppt/slideMasters/_rels/slideMaster1.xml.rels", `<Relationships `+relNS+`><Relationship Id="rId1" Type="`+relT+`slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>`)
	d, err := ConvertKind(context.Background(), deck, "m.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Slide 1 -->\n\n## 工程表\n\n上の注記\n\n- 本文の段落\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestPPTXSuperSubscript: runs raised or lowered from the baseline keep their position.
func TestPPTXSuperSubscript(t *testing.T) {
	run := func(text, baseline string) string {
		if baseline == "" {
			return `<a:r><a:t>` + text + `</a:t></a:r>`
		}
		return `<a:r><a:rPr baseline="` + baseline + `"/><a:t>` + text + `</a:t></a:r>`
	}
	shapes := sp("", "0", "0", `<a:p>`+run("面積m", "")+run("2", "30000")+run("、CO", "")+run("2", "-25000")+run("排出", "")+`</a:p>`)
	wantSlideMarkdown(t, shapes, "s.pptx", "<!-- Slide 1 -->\n\n面積m<sup>2</sup>、CO<sub>2</sub>排出\n")
}

// TestPPTXEmbeddedObject: an embedded object (here a worksheet) is given as the picture of it
// the slide shows, named after the object when the picture has no alt text.
func TestPPTXEmbeddedObject(t *testing.T) {
	shapes := `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="4" name="Object 3"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="0"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/presentationml/2006/ole"><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">` +
		`<mc:Choice Requires="v"><p:oleObj spid="_x0000_s1026" name="Worksheet" r:id="rId2" progId="Excel.Sheet.12"><p:embed/></p:oleObj></mc:Choice>` +
		`<mc:Fallback><p:oleObj name="Worksheet" r:id="rId2" progId="Excel.Sheet.12"><p:embed/><p:pic><p:nvPicPr><p:cNvPr id="0" name=""/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>` +
		`<p:blipFill><a:blip r:embed="rId3"/></p:blipFill><p:spPr/></p:pic></p:oleObj></mc:Fallback></mc:AlternateContent></a:graphicData></a:graphic></p:graphicFrame>`
	rels := `<Relationship Id="rId2" Type="` + relT + `package" Target="../embeddings/Microsoft_Excel_Worksheet.xlsx"/><Relationship Id="rId3" Type="` + relT + `image" Target="../media/image1.emf"/>`
	deck := addZipEntry(t, oneSlideDeck(t, shapes, rels, "", ""), "ppt/media/image1.emf", "EMF")
	d, err := ConvertKind(context.Background(), deck, "o.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- Slide 1 -->\n\n![Worksheet](image1.emf)\n"; d.Markdown != want || len(d.Assets) != 1 {
		t.Fatalf("got %q want %q, assets %d", d.Markdown, want, len(d.Assets))
	}
}

// TestPPTXPictureFill: a shape filled with a picture gives the picture (named after the shape,
// with its alt text) before the shape's own text; a shape with no properties is no error.
func TestPPTXPictureFill(t *testing.T) {
	shapes := `<p:sp><p:nvSpPr><p:cNvPr id="5" name="Oval 4" descr="担当者の顔写真"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="0" y="0"/></a:xfrm>` +
		`<a:blipFill><a:blip r:embed="rId3"/><a:stretch/></a:blipFill><a:prstGeom prst="ellipse"/></p:spPr><p:txBody><a:bodyPr/>` + para("山田") + `</p:txBody></p:sp>` +
		`<p:sp><p:nvSpPr><p:cNvPr id="6" name="x"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:txBody><a:bodyPr/>` + para("営業部") + `</p:txBody></p:sp>`
	deck := addZipEntry(t, oneSlideDeck(t, shapes, `<Relationship Id="rId3" Type="`+relT+`image" Target="../media/image1.png"/>`, "", ""), "ppt/media/image1.png", string(pngBytes))
	d, err := ConvertKind(context.Background(), deck, "f.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- Slide 1 -->\n\n![担当者の顔写真](Oval4.png)\n\n山田\n\n営業部\n"; d.Markdown != want || len(d.Assets) != 1 {
		t.Fatalf("got %q want %q, assets %d", d.Markdown, want, len(d.Assets))
	}
}

// TestPPTXListStyles: a numbered list that starts at 4 reads 4, 5; a body placeholder whose
// layout takes the bullets off reads as plain paragraphs; a text box whose own list style is
// bulleted reads as a list.
func TestPPTXListStyles(t *testing.T) {
	num := func(text, start string) string {
		at := ""
		if start != "" {
			at = ` startAt="` + start + `"`
		}
		return `<a:p><a:pPr><a:buAutoNum type="arabicPeriod"` + at + `/></a:pPr><a:r><a:t>` + text + `</a:t></a:r></a:p>`
	}
	shapes := sp(`<p:ph type="title"/>`, "0", "0", para("第2部")) +
		sp(`<p:ph type="body" idx="1"/>`, "0", "1000000", para("各部の方針")) +
		sp("", "0", "2000000", num("在庫", "4")+num("物流", "4")) +
		sp("", "0", "3000000", `<a:lstStyle><a:lvl1pPr><a:buChar char="•"/></a:lvl1pPr></a:lstStyle>`+para("項目甲")+para("項目乙"))
	deck := oneSlideDeck(t, shapes, `<Relationship Id="rIdL" Type="`+relT+`slideLayout" Target="../slideLayouts/slideLayout1.xml"/>`, "", "")
	deck = addZipEntry(t, deck, "ppt/slideLayouts/slideLayout1.xml", `<p:sldLayout `+pNS+`><p:cSld><p:spTree>`+
		sp(`<p:ph type="body" idx="1"/>`, "0", "1000000", `<a:lstStyle><a:lvl1pPr><a:buNone/></a:lvl1pPr></a:lstStyle>`)+`</p:spTree></p:cSld></p:sldLayout>`)
	d, err := ConvertKind(context.Background(), deck, "l.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Slide 1 -->\n\n## 第2部\n\n各部の方針\n\n4. 在庫\n5. 物流\n\n- 項目甲\n- 項目乙\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestPPTXAlternateContent: every shape of an alternate content's first choice is read (not
// only the first), and a choice with no shape gives way to the fallback's.
func TestPPTXAlternateContent(t *testing.T) {
	mc := `xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`
	shapes := `<mc:AlternateContent ` + mc + `><mc:Choice Requires="p14">` + sp("", "0", "0", para("一つ目")) + sp("", "0", "1000000", para("二つ目")) +
		`</mc:Choice><mc:Fallback>` + sp("", "0", "0", para("代替")) + `</mc:Fallback></mc:AlternateContent>` +
		`<mc:AlternateContent ` + mc + `><mc:Choice Requires="p15"><p:contentPart r:id="rId9"/></mc:Choice><mc:Fallback>` + sp("", "0", "2000000", para("予備の図形")) + `</mc:Fallback></mc:AlternateContent>`
	wantSlideMarkdown(t, shapes, "a.pptx", "<!-- Slide 1 -->\n\n一つ目\n\n二つ目\n\n予備の図形\n")
}

// TestPPTXChartEx: an Office 2016 chart (here a waterfall) gives its title, kind and cached
// points as a table, not the fallback shape older versions show in its place.
func TestPPTXChartEx(t *testing.T) {
	mc := `xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`
	shapes := `<mc:AlternateContent ` + mc + `><mc:Choice Requires="cx1"><p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="4" name="Chart 3"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="0"/></p:xfrm>` +
		`<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/drawing/2014/chartex"><cx:chart xmlns:cx="http://schemas.microsoft.com/office/drawing/2014/chartex" r:id="rId2"/></a:graphicData></a:graphic></p:graphicFrame></mc:Choice>` +
		`<mc:Fallback>` + sp("", "0", "0", para("This chart isn't available in your version of PowerPoint")) + `</mc:Fallback></mc:AlternateContent>`
	chart := `<cx:chartSpace xmlns:cx="http://schemas.microsoft.com/office/drawing/2014/chartex" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><cx:chartData>` +
		`<cx:data id="0"><cx:strDim type="cat"><cx:f>Sheet1!$A$2:$A$4</cx:f><cx:lvl ptCount="3"><cx:pt idx="0">期首</cx:pt><cx:pt idx="1">増加</cx:pt><cx:pt idx="2">期末</cx:pt></cx:lvl></cx:strDim>` +
		`<cx:numDim type="val"><cx:f>Sheet1!$B$2:$B$4</cx:f><cx:lvl ptCount="3" formatCode="General"><cx:pt idx="0">100</cx:pt><cx:pt idx="1">25.100000000000001</cx:pt><cx:pt idx="2">125.1</cx:pt></cx:lvl></cx:numDim></cx:data></cx:chartData>` +
		`<cx:chart><cx:title><cx:tx><cx:txData><cx:v>売上の増減</cx:v></cx:txData></cx:tx></cx:title><cx:plotArea><cx:plotAreaRegion>` +
		`<cx:series layoutId="waterfall" uniqueId="{1}"><cx:tx><cx:txData><cx:f>Sheet1!$B$1</cx:f><cx:v>金額</cx:v></cx:txData></cx:tx><cx:dataId val="0"/></cx:series>` +
		`</cx:plotAreaRegion></cx:plotArea></cx:chart></cx:chartSpace>`
	deck := addZipEntry(t, oneSlideDeck(t, shapes, `<Relationship Id="rId2" Type="http://schemas.microsoft.com/office/2014/relationships/chartEx" Target="../charts/chartEx1.xml"/>`, "", ""), "ppt/charts/chartEx1.xml", chart)
	d, err := ConvertKind(context.Background(), deck, "c.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Slide 1 -->\n\n**売上の増減** (Waterfall chart)\n\n|  | 金額 |\n| --- | --- |\n| 期首 | 100 |\n| 増加 | 25.1 |\n| 期末 | 125.1 |\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestPPTXSections: a deck's sections (as PowerPoint's slide list shows them) head their
// slides; a deck without sections has none.
func TestPPTXSections(t *testing.T) {
	slide := func(title string) []byte {
		return []byte(`<p:sld ` + pNS + `><p:cSld><p:spTree>` + sp(`<p:ph type="title"/>`, "0", "0", para(title)) + `</p:spTree></p:cSld></p:sld>`)
	}
	sections := `<p:extLst><p:ext uri="{521415D9-36F7-43E2-AB2F-B90AF26B5E84}"><p14:sectionLst xmlns:p14="http://schemas.microsoft.com/office/powerpoint/2010/main">` +
		`<p14:section name="導入" id="{A}"><p14:sldIdLst><p14:sldId id="256"/></p14:sldIdLst></p14:section>` +
		`<p14:section name="結果" id="{B}"><p14:sldIdLst><p14:sldId id="257"/><p14:sldId id="258"/></p14:sldIdLst></p14:section>` +
		`<p14:section name="空の節" id="{C}"><p14:sldIdLst/></p14:section></p14:sectionLst></p:ext></p:extLst>`
	deck := func(ext string) []byte {
		return makeZip(t, []zipEntry{
			{name: "[Content_Types].xml", data: []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)},
			{name: "ppt/presentation.xml", data: []byte(`<p:presentation ` + pNS + `><p:sldIdLst><p:sldId id="256" r:id="rId1"/><p:sldId id="257" r:id="rId2"/><p:sldId id="258" r:id="rId3"/></p:sldIdLst>` + ext + `</p:presentation>`)},
			{name: "ppt/_rels/presentation.xml.rels", data: []byte(`<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `slide" Target="slides/slide1.xml"/><Relationship Id="rId2" Type="` + relT + `slide" Target="slides/slide2.xml"/><Relationship Id="rId3" Type="` + relT + `slide" Target="slides/slide3.xml"/></Relationships>`)},
			{name: "ppt/slides/slide1.xml", data: slide("目的")}, {name: "ppt/slides/slide2.xml", data: slide("売上")}, {name: "ppt/slides/slide3.xml", data: slide("費用")},
		})
	}
	d, err := ConvertKind(context.Background(), deck(sections), "s.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# 導入\n\n<!-- Slide 1 -->\n\n## 目的\n\n# 結果\n\n<!-- Slide 2 -->\n\n## 売上\n\n<!-- Slide 3 -->\n\n## 費用\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
	if d, err = ConvertKind(context.Background(), deck(""), "s.pptx", KindPPTX, Options{}); err != nil || d.Markdown != "<!-- Slide 1 -->\n\n## 目的\n\n<!-- Slide 2 -->\n\n## 売上\n\n<!-- Slide 3 -->\n\n## 費用\n" {
		t.Fatalf("no sections: %v %q", err, d.Markdown)
	}
}

// FuzzPPTXSlideXML: any slide, notes or diagram XML converts to a result or a coded error,
// never a panic.
func FuzzPPTXSlideXML(f *testing.F) {
	f.Add(sp(`<p:ph type="title"/>`, "0", "0", para("題")) + `<p:grpSp><p:grpSpPr/>` + sp("", "1", "2", `<a:p><a:r><a:rPr baseline="30000"><a:hlinkClick r:id="rId2"/></a:rPr><a:t>x</a:t></a:r></a:p>`) + `</p:grpSp>`)
	f.Add(`<mc:AlternateContent xmlns:mc="m"><mc:Choice><p:graphicFrame><a:graphic><a:graphicData><p:oleObj name="o"><p:pic><p:blipFill><a:blip r:embed="rId3"/></p:blipFill></p:pic></p:oleObj></a:graphicData></a:graphic></p:graphicFrame></mc:Choice><mc:Fallback/></mc:AlternateContent>`)
	f.Add(`<p:sp><p:nvSpPr><p:cNvPr id="1" name="s"/><p:nvPr><p:ph idx="1"/></p:nvPr></p:nvSpPr><p:spPr><a:blipFill><a:blip r:embed="rId3"/></a:blipFill></p:spPr><p:txBody><a:lstStyle><a:lvl1pPr><a:buAutoNum type="circleNumDbPlain" startAt="99999"/></a:lvl1pPr></a:lstStyle><a:p><a:pPr><a:buAutoNum type="ea1JpnKorPeriod" startAt="3"/></a:pPr><a:r><a:t>a</a:t></a:r></a:p></p:txBody></p:sp>`)
	rels := `<Relationship Id="rId2" Type="` + relT + `hyperlink" Target="https://example.jp/" TargetMode="External"/><Relationship Id="rId3" Type="` + relT + `image" Target="../media/image1.png"/>` +
		`<Relationship Id="rId4" Type="` + relT + `diagramData" Target="../diagrams/data1.xml"/>`
	f.Fuzz(func(t *testing.T, shapes string) {
		deck := oneSlideDeck(t, shapes, rels, shapes, rels)
		deck = addZipEntry(t, deck, "ppt/media/image1.png", string(pngBytes))
		deck = addZipEntry(t, deck, "ppt/diagrams/data1.xml", `<dgm:dataModel xmlns:dgm="d"><dgm:ptLst>`+shapes+`</dgm:ptLst><dgm:cxnLst><dgm:cxn srcId="1" destId="1"/></dgm:cxnLst></dgm:dataModel>`)
		d, err := ConvertKind(context.Background(), deck, "f.pptx", KindPPTX, Options{})
		if err == nil && d == nil || converterPanicked(err) {
			t.Fatalf("no result and no error, or a panic: %v", err)
		}
	})
}

// converterPanicked reports whether err is a converter's recovered panic (reported as damaged
// input, which a fuzz target must not accept).
func converterPanicked(err error) bool {
	return err != nil && strings.Contains(fmt.Sprint(errors.Unwrap(err)), "converter panic")
}

// TestPictureLinks: a picture one clicks to open a web page links there, in a deck and in a
// document.
func TestPictureLinks(t *testing.T) {
	shapes := `<p:pic><p:nvPicPr><p:cNvPr id="4" name="Picture 3" descr="申込QR"><a:hlinkClick r:id="rId5"/></p:cNvPr><p:cNvPicPr/><p:nvPr/></p:nvPicPr>` +
		`<p:blipFill><a:blip r:embed="rId3"/></p:blipFill><p:spPr><a:xfrm><a:off x="0" y="0"/></a:xfrm></p:spPr></p:pic>`
	rels := `<Relationship Id="rId3" Type="` + relT + `image" Target="../media/image1.png"/><Relationship Id="rId5" Type="` + relT + `hyperlink" Target="https://example.jp/apply" TargetMode="External"/>`
	deck := addZipEntry(t, oneSlideDeck(t, shapes, rels, "", ""), "ppt/media/image1.png", string(pngBytes))
	d, err := ConvertKind(context.Background(), deck, "q.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- Slide 1 -->\n\n[![申込QR](Picture3.png)](https://example.jp/apply)\n"; d.Markdown != want {
		t.Fatalf("deck: got %q want %q", d.Markdown, want)
	}
	pic := `<w:r><w:drawing><wp:inline><wp:docPr id="1" name="Picture 1" descr="申込QR"><a:hlinkClick r:id="rId5"/></wp:docPr><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip r:embed="rId1"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	parts := map[string]string{"word/media/image1.png": string(pngBytes),
		"word/_rels/document.xml.rels": `<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `image" Target="media/image1.png"/><Relationship Id="rId5" Type="` + relT + `hyperlink" Target="https://example.jp/apply" TargetMode="External"/></Relationships>`}
	d, err = Convert(context.Background(), makeDOCXParts(t, wp("", wr("申込はこちら")+pic), parts), "q.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "申込はこちら\n\n[![申込QR](Picture1.png)](https://example.jp/apply)\n"; d.Markdown != want {
		t.Fatalf("document: got %q want %q", d.Markdown, want)
	}
}

// wantSlideMarkdown converts a deck of one slide holding shapes, as file name, and checks its
// Markdown.
func wantSlideMarkdown(t *testing.T, shapes, name, want string) {
	t.Helper()
	d, err := ConvertKind(context.Background(), oneSlideDeck(t, shapes, "", "", ""), name, KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Markdown != want {
		t.Fatalf("got %q want %q", d.Markdown, want)
	}
}

// TestPPTXMissingPictures: a picture whose image is not in the file (no image data, a
// relationship that names nothing, one to a part the package lacks, a link to a file on the
// author's computer) is an HTML comment naming it with its alt text and why, not text of the
// slide; the slide's words read on without it. As with a document's missing pictures, the
// conversion is still ready (the deck's text is all there); the result's notes name the pictures.
func TestPPTXMissingPictures(t *testing.T) {
	pic := func(id, name, descr, fill string, y int) string {
		return `<p:pic><p:nvPicPr><p:cNvPr id="` + id + `" name="` + name + `" descr="` + descr + `"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>` + fill +
			`<p:spPr><a:xfrm><a:off x="0" y="` + fmt.Sprint(y) + `"/></a:xfrm></p:spPr></p:pic>`
	}
	shapes := sp(`<p:ph type="title"/>`, "0", "0", para("写真の一覧")) +
		pic("2", "Picture 1", "倉庫の外観", "", 1000000) +
		pic("3", "Picture 2", "", `<p:blipFill><a:blip r:embed="rIdNone"/></p:blipFill>`, 2000000) +
		pic("4", "Picture 3", "搬入口 --> 裏手", `<p:blipFill><a:blip r:embed="rId3"/></p:blipFill>`, 3000000) +
		pic("5", "Picture 4", "ロゴ", `<p:blipFill><a:blip r:link="rId4"/></p:blipFill>`, 4000000) +
		pic("6", "Picture 5", "地図", `<p:blipFill><a:blip r:embed="rId5"/></p:blipFill>`, 5000000) +
		sp("", "0", "6000000", para("以上です"))
	rels := `<Relationship Id="rId3" Type="` + relT + `image" Target="../media/image9.png"/>` +
		`<Relationship Id="rId4" Type="` + relT + `image" Target="file:///C:/Users/yamada/logo.png" TargetMode="External"/>` +
		`<Relationship Id="rId5" Type="` + relT + `image" Target="../media/image1.png"/>`
	deck := addZipEntry(t, oneSlideDeck(t, shapes, rels, "", ""), "ppt/media/image1.png", string(pngBytes))
	d, err := ConvertKind(context.Background(), deck, "p.pptx", KindPPTX, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Slide 1 -->\n\n## 写真の一覧\n\n" +
		"<!-- picture \"Picture 1\" (alt text: 倉庫の外観): its image data is missing from the file -->\n\n" +
		"<!-- picture \"Picture 2\": its image data is missing from the file -->\n\n" +
		"<!-- picture \"Picture 3\" (alt text: 搬入口 - -> 裏手): its image data is missing from the file -->\n\n" +
		"<!-- picture \"Picture 4\" (alt text: ロゴ): it links to a file outside the presentation (logo.png), which is not stored in it -->\n\n" +
		"![地図](Picture5.png)\n\n以上です\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
	if st, why := d.Status(); st != StatusReady {
		t.Fatalf("status %s %q", st, why)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "slide 1: Picture 1; slide 1: Picture 2; slide 1: Picture 3; slide 1: Picture 4") || strings.Contains(notes, "Picture 5") {
		t.Fatalf("notes %q", d.Notes)
	}
	if len(d.Assets) != 1 {
		t.Fatalf("assets %+v", d.Assets)
	}
}

// TestPPTXMarkerLookalike: slide text that reads like a slide marker or a comment stays text
// (escaped), so no reader takes it for where a slide begins.
func TestPPTXMarkerLookalike(t *testing.T) {
	shapes := sp(`<p:ph type="title"/>`, "0", "0", para("&lt;!-- Slide 7 --&gt;")) + sp("", "0", "1000000", para("&lt;!-- Slide 8 --&gt;"))
	wantSlideMarkdown(t, shapes, "m.pptx", "<!-- Slide 1 -->\n\n## &lt;!-- Slide 7 --&gt;\n\n&lt;!-- Slide 8 --&gt;\n")
}
