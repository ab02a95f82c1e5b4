package ui

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// fakeResultViews are result views on a host that gives only the window's language.
func fakeResultViews(lang string) *resultViews {
	tr := newTranslator(lang)
	return &resultViews{host: resultHost{
		tr:        func() *translator { return tr },
		hoverText: func(c fyne.CanvasObject, _ string) fyne.CanvasObject { return c },
	}}
}

// docOf is a converted document of kind with markdown, as app.Document reads it.
func docOf(kind string, pages int, md string) app.DocumentView {
	return app.DocumentView{Kind: kind, Pages: pages, Markdown: md, Sections: app.MarkdownSections(md)}
}

// TestFormatViews: each new format shows what its users look for first, in Japanese and
// English — a deck's slide count and titles (hidden ones marked), a workbook's sheets, a book's
// chapters, a mail's header — and a title's Show button opens its part of the document.
func TestFormatViews(t *testing.T) {
	deck := docOf("pptx", 3, "<!-- Slide 1 -->\n\n## 売上報告\n\n本文\n\n<!-- Slide 2 -->\n\n図だけ\n\n<!-- Slide 3 (hidden) -->\n\n## 来期の計画\n\n計画の本文\n\n### Notes\n\nメモ\n")
	book := docOf("xls", 2, "## 集計\n\n| a |\n|---|\n| 1 |\n\n## 旧データ (hidden)\n\n| b |\n|---|\n| 2 |\n")
	epub := docOf("epub", 2, "# 第一章 はじまり\n\n本文一\n\n# 第二章 おわり\n\n本文二\n")
	epub.Entries = []app.DocEntry{{Name: "OEBPS/c1.xhtml", Status: "ready", Section: -1}, {Name: "OEBPS/c2.xhtml", Status: "ready", Section: -1}}
	brokenBook := epub
	brokenBook.Entries = []app.DocEntry{{Name: "OEBPS/c1.xhtml", Status: "ready", Section: -1}, {Name: "OEBPS/c3.xhtml", Status: "failed", Code: "E004", ReasonJa: "章のファイルが見つかりません", Section: -1}}
	mail := docOf("msg", 1, "# Email Message\n\n**From:** a\n\n## Content\n\n本文\n")
	mail.Mail = &app.DocMail{From: "yamada@example.jp (山田 太郎)", To: "suzuki@example.jp", Date: "Wed, 27 Nov 2024 09:00:00 +0000", Subject: "【議事録】定例会議"}
	mail.Entries = []app.DocEntry{{Name: "出席者.csv", Kind: "csv", Status: "ready", Chars: 40, Section: -1}}
	data := docOf("json", 1, "```json\n{\n  \"a\": 1\n}\n```\n")
	for _, c := range []struct {
		lang string
		doc  app.DocumentView
		want []string
		not  []string
	}{
		{LangJa, deck, []string{"スライド（3 枚）", "スライド 1：売上報告", "スライド 2（タイトルなし）", "スライド 3：来期の計画（非表示）"}, nil},
		{LangEn, deck, []string{"Slides (3)", "Slide 1: 売上報告", "Slide 2 (no title)", "Slide 3: 来期の計画 (hidden)"}, []string{"スライド"}},
		{LangJa, book, []string{"シート（2 枚）", "集計", "旧データ（非表示）"}, nil},
		{LangEn, book, []string{"Sheets (2)", "旧データ (hidden)"}, nil},
		{LangJa, epub, []string{"章（2）", "第一章 はじまり", "第二章 おわり"}, []string{"c1.xhtml"}},
		{LangJa, brokenBook, []string{"章（2）", "本の章のファイル（2）", "OEBPS/c3.xhtml  ·  変換できませんでした  ·  E004 章のファイルが見つかりません"}, nil},
		{LangJa, mail, []string{"Outlook メール", "差出人", "yamada@example.jp (山田 太郎)", "宛先", "日付", "件名", "【議事録】定例会議", "添付ファイル（1）", "出席者.csv"}, []string{"CC", "ZIP"}},
		{LangEn, mail, []string{"Outlook mail", "From", "Subject", "【議事録】定例会議", "Attachments (1)"}, []string{"差出人"}},
		{LangJa, data, []string{"JSON（整形して表示）"}, nil},
		{LangJa, docOf("pdf", 2, "本文\n"), nil, []string{"スライド", "シート"}},
	} {
		v := newDocView(fakeResultViews(c.lang), job.Job{}, c.doc)
		text := strings.Join(labelTexts(v.root), "\n")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s: missing %q in:\n%s", c.lang, c.doc.Kind, w, text)
			}
		}
		for _, w := range c.not {
			if strings.Contains(text, w) {
				t.Errorf("%s %s: %q shown in:\n%s", c.lang, c.doc.Kind, w, text)
			}
		}
	}

	// Show on a slide's line shows that slide alone.
	v := newDocView(fakeResultViews(LangJa), job.Job{}, deck)
	var shows []*widget.Button
	for _, b := range findAll[*widget.Button](v.root) {
		if b.Text == "表示" {
			shows = append(shows, b)
		}
	}
	if len(shows) != 3 {
		t.Fatalf("%d Show buttons, want one per slide", len(shows))
	}
	if opts := strings.Join(v.pick.Options, "|"); !strings.Contains(opts, "スライド 1：売上報告") || strings.Contains(opts, "Slide 1") ||
		v.pick.PlaceHolder != "スライドへ移動" {
		t.Errorf("the slide choice reads %q (%q)", opts, v.pick.PlaceHolder)
	}
	test.Tap(shows[2])
	if got := v.text(); !strings.Contains(got, "計画の本文") || strings.Contains(got, "売上報告") {
		t.Fatalf("slide 3 shows %q", got)
	}
}

// TestDeckMarkersInTheWindow: a deck's slide markers and its comments on missing pictures are
// not shown as text; a rule parts the slides read whole, and a slide shown alone begins with its
// title. A deck converted before the markers (headed "## Slide N: title") still lists its slides.
func TestDeckMarkersInTheWindow(t *testing.T) {
	test.NewTempApp(t)
	md := "<!-- Slide 1 -->\n\n## 売上報告\n\n本文\n\n<!-- picture \"Picture 2\" (alt text: 倉庫): its image data is missing from the file -->\n\n" +
		"<!-- Slide 2 -->\n\n図だけ\n\n<!-- Slide 3 -->\n\n## まとめ\n\n```\n<!-- Slide 9 -->\n```\n"
	v := newDocView(fakeResultViews(LangJa), job.Job{}, docOf("pptx", 3, md))
	w := test.NewWindow(v.root)
	defer w.Close()
	w.Resize(fyne.NewSize(1000, 1400))
	shown := func() string {
		var out []string
		for _, rt := range findAll[*widget.RichText](v.body) {
			out = append(out, segmentTexts(rt.Segments)...)
		}
		return strings.Join(out, "\n")
	}
	all := shown()
	for _, want := range []string{"売上報告", "本文", "図だけ", "まとめ", "<!-- Slide 9 -->"} {
		if !strings.Contains(all, want) {
			t.Errorf("the window does not show %q:\n%s", want, all)
		}
	}
	for _, leak := range []string{"<!-- Slide 1", "<!-- Slide 2", "<!-- picture", "Picture 2", "-->\n"} {
		if strings.Contains(all, leak) {
			t.Errorf("the window shows %q:\n%s", leak, all)
		}
	}
	rules := 0
	for _, rt := range findAll[*widget.RichText](v.body) {
		for _, s := range rt.Segments {
			if _, ok := s.(*widget.SeparatorSegment); ok {
				rules++
			}
		}
	}
	if rules != 2 {
		t.Errorf("%d rules between 3 slides, want 2", rules)
	}
	if opts := strings.Join(v.pick.Options, "|"); !strings.Contains(opts, "スライド 1：売上報告|    スライド 2（タイトルなし）|    スライド 3：まとめ") {
		t.Errorf("the slide choice reads %q", opts)
	}
	v.show(1)
	if all := shown(); !strings.Contains(all, "図だけ") || strings.Contains(all, "売上報告") || strings.Contains(all, "<!--") {
		t.Errorf("slide 2 shows %q", all)
	}
	old := newDocView(fakeResultViews(LangEn), job.Job{}, docOf("pptx", 2, "## Slide 1: 概要\n\n本文\n\n## Slide 2\n\n図\n"))
	if text := strings.Join(labelTexts(old.root), "\n"); !strings.Contains(text, "Slide 1: 概要") || !strings.Contains(text, "Slide 2 (no title)") {
		t.Errorf("a deck converted before the markers lists:\n%s", text)
	}
}

// TestPageMarkersInTheWindow: a PDF's page markers are not shown as comments: each page is
// labelled in the reader's language, with a rule between pages, and the page choice reads in it
// too; a marker in a code block stays as written.
func TestPageMarkersInTheWindow(t *testing.T) {
	test.NewTempApp(t)
	md := "<!-- Page 1 -->\n\n補助金の手引き\n\n<!-- Page 2 -->\n\n申請の方法\n\n```\n<!-- Page 9 -->\n```\n"
	for _, c := range []struct {
		lang         string
		page1, page2 string
	}{{LangJa, "1 ページ目", "2 ページ目"}, {LangEn, "Page 1", "Page 2"}} {
		v := newDocView(fakeResultViews(c.lang), job.Job{}, docOf("pdf", 2, md))
		w := test.NewWindow(v.root)
		w.Resize(fyne.NewSize(1000, 1400))
		var texts []string
		rules := 0
		for _, rt := range findAll[*widget.RichText](v.body) {
			texts = append(texts, segmentTexts(rt.Segments)...)
			for _, s := range rt.Segments {
				if _, ok := s.(*widget.SeparatorSegment); ok {
					rules++
				}
			}
		}
		all := strings.Join(texts, "\n")
		for _, want := range []string{c.page1, c.page2, "補助金の手引き", "申請の方法", "<!-- Page 9 -->"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: the window does not show %q:\n%s", c.lang, want, all)
			}
		}
		if strings.Contains(all, "<!-- Page 1") || rules != 1 {
			t.Errorf("%s: %d rules, shows:\n%s", c.lang, rules, all)
		}
		if opts := strings.Join(v.pick.Options, "|"); !strings.Contains(opts, c.page1+"|    "+c.page2) {
			t.Errorf("%s: the page choice reads %q", c.lang, opts)
		}
		w.Close()
	}
}

// TestMailResultInTheWindow: a dropped mail's result shows its header and its attachments as
// the conversion reported them, not the generic document view.
func TestMailResultInTheWindow(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path := filepath.Join(t.TempDir(), "見積.eml")
	eml := "From: =?UTF-8?B?5bGx55SwIOWkqumDjg==?= <yamada@example.jp>\r\nTo: suzuki@example.jp\r\n" +
		"Subject: =?UTF-8?B?6KaL56mN5pu444Gu6YCB5LuY?=\r\nDate: Wed, 27 Nov 2024 09:00:00 +0900\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n鈴木様\r\n\r\n--b\r\n" +
		"Content-Type: text/csv; charset=UTF-8\r\nContent-Disposition: attachment; filename=\"items.csv\"\r\n\r\n品名,数量\r\nペン,10\r\n--b--\r\n"
	if err := os.WriteFile(path, []byte(eml), 0o600); err != nil {
		t.Fatal(err)
	}
	j := runAndShow(t, h, []string{path}, app.SubmitOptions{})
	if j.Status != job.Succeeded {
		t.Fatalf("mail ended %s %v", j.Status, j.Error)
	}
	h.waitFor("the mail's header", func() bool {
		text := paneText(u)
		return strings.Contains(text, "差出人") && strings.Contains(text, "yamada@example.jp (山田 太郎)") &&
			strings.Contains(text, "見積書の送付") && strings.Contains(text, "添付ファイル（1）") && strings.Contains(text, "items.csv")
	})
	if doc, err := h.app.Document(context.Background(), j.ID); err != nil || doc.Kind != "eml" || doc.Source != path {
		t.Fatalf("document kind %q source %q, %v; want eml from %s", doc.Kind, doc.Source, err, path)
	}
}

// TestLongDeckScrolls: a deck of many slides lists them in a box that scrolls, so the document
// stays in view; every slide keeps its line.
func TestLongDeckScrolls(t *testing.T) {
	var md strings.Builder
	for i := 1; i <= 40; i++ {
		md.WriteString("## Slide " + strconv.Itoa(i) + ": 議題 " + strconv.Itoa(i) + "\n\n本文\n\n")
	}
	v := newDocView(fakeResultViews(LangJa), job.Job{}, docOf("pptx", 40, md.String()))
	out := v.formatView()
	scrolls := findAll[*container.Scroll](out)
	if len(scrolls) != 1 {
		t.Fatalf("%d scrolls in the slide list, want 1", len(scrolls))
	}
	if h, rows := out.MinSize().Height, scrolls[0].Content.MinSize().Height; h >= rows/2 {
		t.Fatalf("the list is %v high for %v of slides: it does not scroll", h, rows)
	}
	if text := strings.Join(labelTexts(scrolls[0].Content), "\n"); !strings.Contains(text, "スライド 40：議題 40") {
		t.Fatalf("slide 40 missing:\n%s", text)
	}
}

// TestPictureShown: a converted picture shows itself above the text read from it while the file
// is on this machine, and only its words when it is gone.
func TestPictureShown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "名刺.png")
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := docOf("image", 1, "OCR の文字\n")
	doc.Source = path
	v := newDocView(fakeResultViews(LangJa), job.Job{}, doc)
	pics := filePictures(v.root)
	if len(pics) != 1 || pics[0].File != path {
		t.Fatalf("pictures %+v; want %s", pics, path)
	}
	if text := strings.Join(labelTexts(v.root), "\n"); !strings.Contains(text, "画像：OCR で読み取った文字") {
		t.Fatalf("no words for the picture:\n%s", text)
	}
	doc.Source = ""
	if pics := filePictures(newDocView(fakeResultViews(LangJa), job.Job{}, doc).root); len(pics) != 0 {
		t.Fatalf("a picture shown with no file: %+v", pics)
	}
}

// filePictures are the pictures under o drawn from a file (not the toolkit's icons).
func filePictures(o fyne.CanvasObject) []*canvas.Image {
	var out []*canvas.Image
	for _, p := range findAll[*canvas.Image](o) {
		if p.File != "" {
			out = append(out, p)
		}
	}
	return out
}
