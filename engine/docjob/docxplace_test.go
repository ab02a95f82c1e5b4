package docjob

import (
	"context"
	"strings"
	"testing"
)

// TestDOCXHeadingVariants: a style named after a heading with words added ("heading 2
// invisible num"), a style based on a heading and a style with an outline level of its own are
// headings; a style based on a heading that sets body-text outline level is not; a numbering
// level of format "none" shows no list marker (only its fixed text, when it has one).
func TestDOCXHeadingVariants(t *testing.T) {
	styles := `<w:styles ` + wNS + `>
		<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
		<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>
		<w:style w:type="paragraph" w:styleId="InvisNum"><w:name w:val="heading 2 invisible num"/><w:basedOn w:val="Heading2"/><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="9"/></w:numPr></w:pPr></w:style>
		<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="章見出し"/><w:basedOn w:val="Heading1"/></w:style>
		<w:style w:type="paragraph" w:styleId="Outline3"><w:name w:val="節"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
		<w:style w:type="paragraph" w:styleId="TOCHeading"><w:name w:val="TOC Heading"/><w:basedOn w:val="Heading1"/><w:pPr><w:outlineLvl w:val="9"/></w:pPr></w:style>
		</w:styles>`
	numbering := `<w:numbering ` + wNS + `>
		<w:abstractNum w:abstractNumId="8"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="none"/><w:lvlText w:val=""/><w:pStyle w:val="InvisNum"/></w:lvl></w:abstractNum>
		<w:abstractNum w:abstractNumId="7"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="none"/><w:lvlText w:val="注記"/></w:lvl></w:abstractNum>
		<w:num w:numId="9"><w:abstractNumId w:val="8"/></w:num><w:num w:numId="4"><w:abstractNumId w:val="7"/></w:num></w:numbering>`
	body := wp("Chapter", wr("第一章")) + wp("Outline3", wr("細目")) + wp("InvisNum", wr("参考文献")) + wp("TOCHeading", wr("目次")) +
		listPara(4, 0, "数値は速報値です。") + listPara(9, 0, "番号なしの段落")
	wantDOCXMarkdown(t, body, map[string]string{"word/styles.xml": styles, "word/numbering.xml": numbering}, "h.docx", "# 第一章\n\n### 細目\n\n## 参考文献\n\n目次\n\n注記 数値は速報値です。\n\n番号なしの段落\n")
}

// TestDOCXPicturePlacement: a picture before or after a paragraph's text stands on a line of
// its own (not inside the sentence); a floating picture anchored inside the text follows the
// paragraph; a small picture in the line of text, inside a sentence, stays where it is; each
// picture of a group is given with its own alt text and file.
func TestDOCXPicturePlacement(t *testing.T) {
	inline := func(id, name, alt, rid string) string {
		return `<w:r><w:drawing><wp:inline><wp:docPr id="` + id + `" name="` + name + `" descr="` + alt + `"/><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip r:embed="` + rid + `"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	}
	anchor := func(id, name, alt, rid string) string {
		return `<w:r><w:drawing><wp:anchor><wp:wrapTopAndBottom/><wp:docPr id="` + id + `" name="` + name + `" descr="` + alt + `"/><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip r:embed="` + rid + `"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r>`
	}
	gpic := func(name, alt, rid string) string {
		return `<pic:pic><pic:nvPicPr><pic:cNvPr id="9" name="` + name + `" descr="` + alt + `"/></pic:nvPicPr><pic:blipFill><a:blip r:embed="` + rid + `"/></pic:blipFill></pic:pic>`
	}
	group := `<w:r><w:drawing><wp:anchor><wp:docPr id="7" name="Group 4"/><a:graphic><a:graphicData><wpg:wgp xmlns:wpg="http://schemas.microsoft.com/office/word/2010/wordprocessingGroup">` +
		gpic("Picture 5", "工場の外観", "rId1") + gpic("Picture 6", "倉庫の内部", "rId2") + `</wpg:wgp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r>`
	body := wp("", inline("1", "Picture 1", "社章", "rId1")+wr("会社概要")) +
		wp("", wr("組織は次のとおり。")+inline("2", "Picture 2", "組織図", "rId2")) +
		wp("", wr("前半の文")+anchor("3", "Picture 3", "地図", "rId3")+wr("後半の文。")) +
		wp("", wr("記号")+inline("4", "Picture 4", "矢印", "rId3")+wr("を押す。")) +
		wp("", group+wr("二枚の写真"))
	rels := `<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `image" Target="media/image1.png"/>` +
		`<Relationship Id="rId2" Type="` + relT + `image" Target="media/image2.png"/><Relationship Id="rId3" Type="` + relT + `image" Target="media/image3.png"/></Relationships>`
	parts := map[string]string{"word/_rels/document.xml.rels": rels, "word/media/image1.png": string(pngBytes),
		"word/media/image2.png": string(pngBytes) + "2", "word/media/image3.png": string(pngBytes) + "3"}
	d, err := ConvertKind(context.Background(), makeDOCXParts(t, body, parts), "p.docx", KindDOCX, Options{assetDir: "p_files"})
	if err != nil {
		t.Fatal(err)
	}
	want := "![社章](p_files/Picture1.png)\n\n会社概要\n\n" +
		"組織は次のとおり。\n\n![組織図](p_files/Picture2.png)\n\n" +
		"前半の文後半の文。\n\n![地図](p_files/Picture3.png)\n\n" +
		"記号 ![矢印](p_files/Picture3.png) を押す。\n\n" +
		"![工場の外観](p_files/Picture1.png)\n\n![倉庫の内部](p_files/Picture2.png)\n\n二枚の写真\n"
	if d.Markdown != want {
		t.Fatalf("got\n%s\nwant\n%s", d.Markdown, want)
	}
	// in a table cell the pictures take lines of their own too
	cell := `<w:tbl><w:tr><w:tc>` + wp("", wr("写真")+inline("1", "Picture 1", "社章", "rId1")) + `</w:tc><w:tc>` + wp("", wr("説明")) + `</w:tc></w:tr>` +
		`<w:tr><w:tc>` + wp("", wr("a")) + `</w:tc><w:tc>` + wp("", wr("b")) + `</w:tc></w:tr></w:tbl>`
	d, err = ConvertKind(context.Background(), makeDOCXParts(t, cell, parts), "p.docx", KindDOCX, Options{assetDir: "p_files"})
	if err != nil || !strings.Contains(d.Markdown, "| 写真<br>![社章](p_files/Picture1.png) | 説明 |") {
		t.Fatalf("%v\n%s", err, d.Markdown)
	}
}

// TestDOCXSuperSubscript: superscript and subscript runs keep their position (x², H₂O, 10⁻³ split
// over runs read as one); a footnote mark is a note reference, not a superscript.
func TestDOCXSuperSubscript(t *testing.T) {
	va := func(v, text string) string {
		return `<w:r><w:rPr><w:vertAlign w:val="` + v + `"/></w:rPr><w:t>` + text + `</w:t></w:r>`
	}
	body := wp("", wr("面積はx")+va("superscript", "2")+wr("、水はH")+va("subscript", "2")+wr("O、誤差は10")+va("superscript", "-")+va("superscript", "3")+wr("。")+
		`<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteReference w:id="1"/></w:r>`)
	notes := `<w:footnotes ` + wNS + `><w:footnote w:id="1">` + wp("", wr("概算")) + `</w:footnote></w:footnotes>`
	wantDOCXMarkdown(t, body, map[string]string{"word/footnotes.xml": notes}, "s.docx", "面積はx<sup>2</sup>、水はH<sub>2</sub>O、誤差は10<sup>-3</sup>。[^1]\n\n\n[^1]: 概算\n")
}

// TestDOCXFractionKinds: a fraction without a bar (a binomial coefficient) is stacked with no
// line, not written as a division; a linear or skewed fraction reads a/b.
func TestDOCXFractionKinds(t *testing.T) {
	mr := func(s string) string { return `<m:r><m:t>` + s + `</m:t></m:r>` }
	frac := func(typ, n, d string) string {
		pr := ""
		if typ != "" {
			pr = `<m:fPr><m:type m:val="` + typ + `"/></m:fPr>`
		}
		return `<m:f>` + pr + `<m:num>` + mr(n) + `</m:num><m:den>` + mr(d) + `</m:den></m:f>`
	}
	body := wp("", `<m:oMath><m:d><m:e>`+frac("noBar", "n", "k")+`</m:e></m:d></m:oMath>`) +
		wp("", wr("比は")+`<m:oMath>`+frac("skw", "a", "b")+mr("+")+frac("", "1", "2")+`</m:oMath>`)
	d, err := Convert(context.Background(), makeDOCXParts(t, body, nil), "f.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "$$\\left(\\genfrac{}{}{0pt}{}{n}{k}\\right)$$\n\n比は $a/b+\\frac{1}{2}$\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestDOCXMathWords: runs Word split inside one word read as one (a label "group with
// braces" under a brace keeps its spaces as text); an upright function name Word does not know
// is an operator name; contour double and triple integrals are commands.
func TestDOCXMathWords(t *testing.T) {
	mr := func(s string) string { return `<m:r><m:t xml:space="preserve">` + s + `</m:t></m:r>` }
	up := func(s string) string { return `<m:r><m:rPr><m:sty m:val="p"/></m:rPr><m:t>` + s + `</m:t></m:r>` }
	brace := `<m:limLow><m:e><m:groupChr><m:e>` + mr("a+b") + `</m:e></m:groupChr></m:e><m:lim>` + mr("group ") + mr("wit") + mr("h ") + mr("braces") + `</m:lim></m:limLow>`
	fn := `<m:func><m:fName><m:limLow><m:e>` + up("arg") + up("max") + `</m:e><m:lim>` + mr("x") + `</m:lim></m:limLow></m:fName><m:e>` + mr("f") + `</m:e></m:func>`
	ct := `<m:nary><m:naryPr><m:chr m:val="∯"/></m:naryPr><m:sub/><m:sup/><m:e>` + mr("F") + `</m:e></m:nary>`
	body := wp("", `<m:oMath>`+brace+`</m:oMath>`) + wp("", `<m:oMath>`+fn+`</m:oMath>`) + wp("", `<m:oMath>`+ct+`</m:oMath>`)
	d, err := Convert(context.Background(), makeDOCXParts(t, body, nil), "m.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "$$\\underbrace{a+b}_{\\text{group with braces}}$$\n\n$$\\operatorname{argmax}_{x}(f)$$\n\n$$\\oiint F$$\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestDOCXImportedParts: content imported into a document as a part of another format
// (w:altChunk) reads in place: HTML as Markdown, plain text, and a Word document; a part that
// cannot be read is named where it stands and the conversion is partial.
func TestDOCXImportedParts(t *testing.T) {
	inner := makeDOCXParts(t, wp("", wr("差し込まれた文書の本文")), nil)
	body := wp("", wr("前の段落")) + `<w:altChunk r:id="rId1"/>` + `<w:altChunk r:id="rId2"/>` + `<w:altChunk r:id="rId3"/>` + `<w:altChunk r:id="rId4"/>` + wp("", wr("後の段落"))
	rels := `<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `aFChunk" Target="afchunk.htm"/>` +
		`<Relationship Id="rId2" Type="` + relT + `aFChunk" Target="afchunk2.txt"/><Relationship Id="rId3" Type="` + relT + `aFChunk" Target="afchunk3.docx"/>` +
		`<Relationship Id="rId4" Type="` + relT + `aFChunk" Target="missing.htm"/></Relationships>`
	parts := map[string]string{
		"word/_rels/document.xml.rels": rels,
		"word/afchunk.htm":             `<html><head><meta charset="utf-8"></head><body><h2>取り込んだ表</h2><table><tr><th>品名</th><th>数量</th></tr><tr><td>ねじ</td><td>10</td></tr></table></body></html>`,
		"word/afchunk2.txt":            "# 見出しではない行\n",
		"word/afchunk3.docx":           string(inner),
	}
	d, err := Convert(context.Background(), makeDOCXParts(t, body, parts), "c.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "前の段落\n\n## 取り込んだ表\n\n| 品名 | 数量 |\n| --- | --- |\n| ねじ | 10 |\n\n\\# 見出しではない行\n\n差し込まれた文書の本文\n\n" +
		"> (imported content that could not be read / 読み取れなかった取り込み部分: missing.htm)\n\n後の段落\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
	// content that cannot be read (a missing part) makes the conversion partial
	if st, why := d.Status(); st != StatusPartial || why == "" || d.ReasonJa() == "" {
		t.Fatalf("status %s %q", st, why)
	}
	d, err = Convert(context.Background(), makeDOCXParts(t, body, map[string]string{"word/_rels/document.xml.rels": rels,
		"word/afchunk.htm": parts["word/afchunk.htm"], "word/afchunk2.txt": "", "word/afchunk3.docx": string(inner), "word/missing.htm": "<p></p>"}), "c.docx", Options{})
	if st, _ := d.Status(); err != nil || st != StatusReady {
		t.Fatalf("every part read: %v %s\n%s", err, st, d.Markdown)
	}
}

// TestDOCXFields: a HYPERLINK field's result links to its address (complex and simple fields);
// a field with no result (an index entry) hides only its code, not the text after it; other
// fields give their result.
func TestDOCXFields(t *testing.T) {
	fc := func(typ string) string { return `<w:r><w:fldChar w:fldCharType="` + typ + `"/></w:r>` }
	instr := func(s string) string { return `<w:r><w:instrText xml:space="preserve">` + s + `</w:instrText></w:r>` }
	body := wp("", wr("詳細は")+fc("begin")+instr(` HYPERLINK "https://example.jp/guide" `)+fc("separate")+wr("案内")+fc("end")+wr("を参照。")) +
		wp("", wr("索引語")+fc("begin")+instr(` XE "索引語" `)+fc("end")+wr("の説明が続く。")) +
		wp("", `<w:fldSimple w:instr=" HYPERLINK &quot;mailto:info@example.jp&quot; ">`+wr("窓口")+`</w:fldSimple>`+wr("へ。")) +
		wp("", wr("頁 ")+fc("begin")+instr(" PAGE ")+fc("separate")+wr("3")+fc("end")) +
		wp("", fc("begin")+instr(` HYPERLINK \l "_Toc1" `)+fc("separate")+wr("第1章")+fc("end"))
	d, err := Convert(context.Background(), makeDOCXParts(t, body, nil), "f.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "詳細は[案内](https://example.jp/guide)を参照。\n\n索引語の説明が続く。\n\n[窓口](mailto:info@example.jp)へ。\n\n頁 3\n\n第1章\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestDOCXPictureListItem: a numbered list item holding only a picture keeps the picture as its
// text, so the items after it keep their numbers; a picture after an item's text is indented
// into the item.
func TestDOCXPictureListItem(t *testing.T) {
	pic := `<w:r><w:drawing><wp:inline><wp:docPr id="1" name="Picture 1" descr="手順図"/><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip r:embed="rId1"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`
	item := func(inner string) string {
		return `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>` + inner + `</w:p>`
	}
	numbering := `<w:numbering ` + wNS + `><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`
	parts := map[string]string{"word/numbering.xml": numbering, "word/media/image1.png": string(pngBytes),
		"word/_rels/document.xml.rels": `<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `image" Target="media/image1.png"/></Relationships>`}
	d, err := Convert(context.Background(), makeDOCXParts(t, item(wr("準備する"))+item(pic)+item(wr("確認する")+pic), parts), "l.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// a picture after an item's text stays in the item, indented to its text
	want := "1. 準備する\n\n2. ![手順図](Picture1.png)\n\n3. 確認する\n\n   ![手順図](Picture1.png)\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestJapaneseNumbering: Word's Japanese numbering formats read as Word shows them — 第一章 and
// 第十二章 for kanji counting, (ア) (イ) for katakana, ① for circled numbers —
// in a document's headings and lists and in a deck's numbered paragraphs.
func TestJapaneseNumbering(t *testing.T) {
	for _, c := range []struct {
		f    string
		n    int
		want string
	}{{"japaneseCounting", 1, "一"}, {"japaneseCounting", 12, "十二"}, {"japaneseCounting", 2045, "二千四十五"}, {"japaneseCounting", 110, "百十"},
		{"aiueoFullWidth", 2, "イ"}, {"aiueo", 1, "ｱ"}, {"irohaFullWidth", 3, "ハ"}, {"decimalEnclosedCircle", 3, "③"}, {"decimalEnclosedCircle", 21, "㉑"},
		{"decimalFullWidth", 12, ""}, {"ideographTraditional", 2, "乙"}, {"decimalZero", 7, "07"}, {"ideographDigital", 105, "一〇五"}, {"decimal", 3, ""}} {
		if got := eastAsianNumber(c.f, c.n); got != c.want {
			t.Errorf("eastAsianNumber(%s, %d) = %q, want %q", c.f, c.n, got, c.want)
		}
	}
	styles := `<w:styles ` + wNS + `><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:pPr><w:numPr><w:numId w:val="2"/></w:numPr></w:pPr></w:style></w:styles>`
	numbering := `<w:numbering ` + wNS + `>
		<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="aiueoFullWidth"/><w:lvlText w:val="(%1)"/></w:lvl>
		<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimalEnclosedCircle"/><w:lvlText w:val="%2"/></w:lvl></w:abstractNum>
		<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="japaneseCounting"/><w:lvlText w:val="第%1章"/><w:pStyle w:val="Heading1"/></w:lvl></w:abstractNum>
		<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num></w:numbering>`
	body := wp("Heading1", wr("総則")) + listPara(1, 0, "目的") + listPara(1, 1, "範囲") + listPara(1, 0, "定義") + wp("Heading1", wr("手続"))
	wantDOCXMarkdown(t, body, map[string]string{"word/styles.xml": styles, "word/numbering.xml": numbering}, "j.docx", "# 第一章 総則\n\n- (ア) 目的\n\n  - ① 範囲\n\n- (イ) 定義\n\n# 第二章 手続\n")
	auto := func(typ, text string) string {
		return `<a:p><a:pPr><a:buAutoNum type="` + typ + `"/></a:pPr><a:r><a:t>` + text + `</a:t></a:r></a:p>`
	}
	shapes := sp("", "0", "0", auto("circleNumDbPlain", "受付")+auto("circleNumDbPlain", "審査")) +
		sp("", "0", "1000000", auto("arabicParenBoth", "甲")+auto("arabicParenBoth", "乙")) + sp("", "0", "2000000", auto("alphaLcParenR", "丙"))
	wantSlideMarkdown(t, shapes, "j.pptx", "<!-- Slide 1 -->\n\n- ① 受付\n- ② 審査\n\n- (1) 甲\n- (2) 乙\n\na) 丙\n")
}

// FuzzDOCXBody: any body XML (pictures, fields, imported parts, equations, numbering) converts
// to a result or a coded error, never a panic.
func FuzzDOCXBody(f *testing.F) {
	f.Add(wp("", wr("a")+`<w:r><w:fldChar w:fldCharType="end"/></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>`+`<w:fldSimple w:instr="HYPERLINK">`+wr("b")+`</w:fldSimple>`))
	f.Add(wp("", `<w:r><w:drawing><wp:anchor><wp:docPr id="1" name="p"/><a:graphic><a:graphicData><pic:pic><pic:blipFill><a:blip r:embed="rId1"/></pic:blipFill></pic:pic><pic:pic/></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r>`+wr("t")) + `<w:altChunk r:id="rId2"/>`)
	f.Add(wp("", `<m:oMath><m:f><m:fPr><m:type m:val="noBar"/></m:fPr></m:f><m:r><m:rPr><m:sty m:val="p"/></m:rPr><m:t>ab</m:t></m:r></m:oMath>`) + listPara(1, 0, "x"))
	parts := map[string]string{
		"word/_rels/document.xml.rels": `<Relationships ` + relNS + `><Relationship Id="rId1" Type="` + relT + `image" Target="media/image1.png"/><Relationship Id="rId2" Type="` + relT + `aFChunk" Target="afchunk.docx"/></Relationships>`,
		"word/media/image1.png":        string(pngBytes),
		"word/numbering.xml":           `<w:numbering ` + wNS + `><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="japaneseCounting"/><w:lvlText w:val="%1%2"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`,
	}
	f.Fuzz(func(t *testing.T, body string) {
		p := map[string]string{}
		for k, v := range parts {
			p[k] = v
		}
		p["word/afchunk.docx"] = string(makeDOCXParts(t, body, parts))
		d, err := Convert(context.Background(), makeDOCXParts(t, body, p), "f.docx", Options{})
		if err == nil && d == nil || converterPanicked(err) {
			t.Fatalf("no result and no error, or a panic: %v", err)
		}
	})
}

// TestDOCXSymbols: characters inserted as symbols read as what they draw — Greek letters and
// signs of the Symbol font, boxes and checks of Wingdings (a box is a task-list box), a symbol
// of any other font as itself; a Wingdings picture-character with no meaning elsewhere is left out.
func TestDOCXSymbols(t *testing.T) {
	sym := func(font, char string) string {
		return `<w:r><w:sym w:font="` + font + `" w:char="` + char + `"/></w:r>`
	}
	body := wp("", sym("Symbol", "F061")+wr("-ヘリックスは")+sym("Symbol", "F0B3")+wr("3")+sym("Symbol", "F06D")+wr("m")) +
		wp("", sym("Wingdings", "F0FE")+wr(" 確認済み")) + wp("", sym("Wingdings", "F0A8")+wr(" 未確認")) +
		wp("", wr("合否")+sym("Wingdings", "F0FC")+sym("Wingdings", "F04E")) + wp("", sym("MS Gothic", "2605")+wr("重要"))
	d, err := Convert(context.Background(), makeDOCXParts(t, body, nil), "s.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "α-ヘリックスは≥3μm\n\n- [x] 確認済み\n\n- [ ] 未確認\n\n合否✓\n\n★重要\n"
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}

// TestDOCXWordArt: WordArt drawn in VML (a watermark in the header) gives its text.
func TestDOCXWordArt(t *testing.T) {
	wordArt := `<w:r><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml" id="PowerPlusWaterMarkObject" style="position:absolute;width:400pt;height:100pt" type="#_x0000_t136"><v:textpath style="font-family:&quot;MS Gothic&quot;" string="社外秘"/></v:shape></w:pict></w:r>`
	parts := map[string]string{"word/header1.xml": `<w:hdr ` + wNS + `>` + wp("", wordArt) + `</w:hdr>`}
	d, err := Convert(context.Background(), makeDOCXParts(t, wp("", wr("本文")), parts), "w.docx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "> Header: 社外秘\n\n本文\n"; d.Markdown != want {
		t.Fatalf("got %q want %q", d.Markdown, want)
	}
}

// wantDOCXMarkdown converts a document of body and parts, as file name, and checks its Markdown.
func wantDOCXMarkdown(t *testing.T, body string, parts map[string]string, name, want string) {
	t.Helper()
	d, err := Convert(context.Background(), makeDOCXParts(t, body, parts), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Markdown != want {
		t.Fatalf("got\n%q\nwant\n%q", d.Markdown, want)
	}
}
