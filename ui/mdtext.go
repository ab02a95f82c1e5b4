package ui

import (
	"html"
	"strings"

	"fyne.io/fyne/v2/widget"
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
				t.Text = markdownText(t.Text)
			}
		case *widget.HyperlinkSegment:
			t.Text = markdownText(t.Text)
		case *widget.ImageSegment:
			t.Title = markdownText(t.Title)
		case *widget.ListSegment:
			unescapeSegments(t.Items)
		case *widget.ParagraphSegment:
			unescapeSegments(t.Texts)
		}
	}
}

// markdownText is the text a CommonMark reader shows for s: a backslash before ASCII
// punctuation is dropped, and entity and numeric character references ("&lt;", "&amp;",
// "&#42;", "&#x3C;", closed by ";") become their characters.
func markdownText(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if c == '&' {
			if n := entityLen(s[i:]); n > 0 {
				b.WriteString(html.UnescapeString(s[i : i+n]))
				i += n - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// entityLen is the length of the entity or numeric character reference s starts with ("&",
// a name or "#" digits or "#x" hex digits, ";"), 0 when it starts none.
func entityLen(s string) int {
	n := 1
	switch {
	case strings.HasPrefix(s[n:], "#x") || strings.HasPrefix(s[n:], "#X"):
		n += 2
		start := n
		for n < len(s) && n-start < 6 && isHex(s[n]) {
			n++
		}
		if n == start {
			return 0
		}
	case strings.HasPrefix(s[n:], "#"):
		n++
		start := n
		for n < len(s) && n-start < 7 && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == start {
			return 0
		}
	default:
		start := n
		for n < len(s) && n-start < 32 && (isLetter(s[n]) || s[n] >= '0' && s[n] <= '9') {
			n++
		}
		if n == start || !isLetter(s[start]) {
			return 0
		}
		if n < len(s) && s[n] == ';' && html.UnescapeString(s[:n+1]) == s[:n+1] {
			return 0 // not an entity name HTML knows: CommonMark keeps it as written
		}
	}
	if n < len(s) && s[n] == ';' {
		return n + 1
	}
	return 0
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
