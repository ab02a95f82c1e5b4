package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
	"jobdesk/engine/mdtext"
)

// escapedDoc is Markdown as the converters write it for a document whose text looks like
// markup: entities for "<" and "&", backslashes before markup punctuation, in a heading, a
// paragraph, list items, a link's text, a table and code that keeps its text as written.
const escapedDoc = "# &lt;見出し&gt; の \\*注\\*\n\n" +
	"&lt;m:oMath&gt; と \\[x\\](y) と &amp;lt; と AT&T と &copy\n\n" +
	"1\\. 番号ではない\n\\# 見出しではない\n\n" +
	"- \\- 二重 &lt;b&gt;中&lt;/b&gt;\n- [リンク \\*A\\*](https://example.jp)\n\n" +
	"| 品名 | 備考 |\n| --- | --- |\n| &lt;div&gt;箱&lt;/div&gt; | \\*至急\\*<br>二行目 \\| 区切り |\n\n" +
	"コード `\\*x\\* &lt;` の後\n\n```\n&lt;そのまま&gt; \\*\n```\n"

// TestEscapedTextReadsAsWritten: the window shows escaped text as the document wrote it, in
// rich text (headings, paragraphs, list items, link text) and in table cells, while code keeps
// its text as written, as CommonMark readers show it.
func TestEscapedTextReadsAsWritten(t *testing.T) {
	test.NewTempApp(t)
	view := markdownView(escapedDoc)
	w := test.NewWindow(view)
	defer w.Close()
	w.Resize(fyne.NewSize(1200, 900))
	var shown []string
	for _, rt := range findAll[*widget.RichText](view) {
		shown = append(shown, segmentTexts(rt.Segments)...)
	}
	shown = append(shown, labelTexts(view)...) // the text drawn, cells included
	all := strings.Join(shown, "\n")
	for _, want := range []string{"<見出し> の *注*", "<m:oMath> と [x](y) と &lt; と AT&T と &copy", "1. 番号ではない", "# 見出しではない",
		"- 二重 <b>中</b>", "リンク *A*", "<div>箱</div>", "*至急*\n二行目 | 区切り", `\*x\* &lt;`, `&lt;そのまま&gt; \*`} {
		if !strings.Contains(all, want) {
			t.Errorf("the window does not show %q:\n%s", want, all)
		}
	}
	for _, leak := range []string{`\[`, "&lt;見出し", "&amp;", "<br>", `\#`, `1\.`} {
		if strings.Contains(all, leak) {
			t.Errorf("the window shows the escape %q:\n%s", leak, all)
		}
	}
	if got := mdtext.Unescape(`a\\b \q &#42; &#x3C; &bogus; &amp`); got != `a\b \q * < &bogus; &amp` {
		t.Errorf("mdtext.Unescape = %q", got)
	}
}

// segmentTexts is the text of segs and the segments inside them (list items, paragraphs).
func segmentTexts(segs []widget.RichTextSegment) []string {
	var out []string
	for _, s := range segs {
		switch t := s.(type) {
		case *widget.ListSegment:
			out = append(out, segmentTexts(t.Items)...)
		case *widget.ParagraphSegment:
			out = append(out, segmentTexts(t.Texts)...)
		default:
			out = append(out, s.Textual())
		}
	}
	return out
}

// TestPageLookingLikeMarkupInTheWindow: a converted page whose text looks like markup reads in
// the result pane as the page wrote it.
func TestPageLookingLikeMarkupInTheWindow(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	page := `<html><body><h1>&lt;div&gt; の使い方</h1><p>&lt;m:oMath&gt; と *注* と [x](y)</p><p>1. 番号ではない</p>` +
		`<table><tr><th>列</th><th>値</th></tr><tr><td>&lt;b&gt;太字&lt;/b&gt;</td><td>&amp;lt;</td></tr></table></body></html>`
	path := filepath.Join(t.TempDir(), "記号.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	j := runAndShow(t, h, []string{path}, app.SubmitOptions{})
	if j.Status != job.Succeeded {
		t.Fatalf("%s %v", j.Status, j.Error)
	}
	want := []string{"<div> の使い方", "<m:oMath> と *注* と [x](y)", "1. 番号ではない", "<b>太字</b>", "&lt;"}
	h.waitFor("the rendered page", func() bool { return strings.Contains(paneText(u), "番号ではない") })
	text := paneText(u)
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("the pane does not show %q:\n%s", s, text)
		}
	}
	for _, leak := range []string{"&lt;div", `\*注`, `1\.`, "&amp;"} {
		if strings.Contains(text, leak) {
			t.Errorf("the pane shows the escape %q:\n%s", leak, text)
		}
	}
}
