package ui

import (
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/mdtext"
)

// This file makes the window read a converted document's text as any CommonMark reader does.
// The converters escape the document's own text so that "<div>", "*note*" or "1. " at a line's
// start stay text ("&lt;div&gt;", "\*note\*", "1\. "); Fyne's Markdown view keeps those escapes
// as they are written (it shows the parser's raw text), so the window resolves them itself:
// backslash escapes and entity references in text, never in code.

// markdownRichText is Fyne's rich text of md with its text read as CommonMark reads it.
func markdownRichText(md string) *widget.RichText {
	rt := widget.NewRichTextFromMarkdown(md)
	unescapeSegments(rt.Segments)
	return rt
}

// unescapeSegments resolves the escapes in the text of segs and the segments inside them
// (list items, paragraphs, links); code spans and blocks keep their text as written.
func unescapeSegments(segs []widget.RichTextSegment) {
	for _, s := range segs {
		switch t := s.(type) {
		case *widget.TextSegment:
			if !t.Style.TextStyle.Monospace {
				t.Text = mdtext.Unescape(t.Text)
			}
		case *widget.HyperlinkSegment:
			t.Text = mdtext.Unescape(t.Text)
		case *widget.ImageSegment:
			t.Title = mdtext.Unescape(t.Title)
		case *widget.ListSegment:
			unescapeSegments(t.Items)
		case *widget.ParagraphSegment:
			unescapeSegments(t.Texts)
		}
	}
}
