package docjob

import (
	"context"
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
	want := "## Slide 1: お問い合わせ\n\n詳しくは[申込ページ](https://example.jp/apply) をご覧ください。\n\n[窓口](mailto:info@example.jp)へ\n\n次のスライド\n\n" +
		"| 資料 | 所在 |\n| --- | --- |\n| 手引き | [PDF](https://example.jp/apply) |\n\n### Notes\n\n参考: [統計](https://example.jp/stats)\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}
