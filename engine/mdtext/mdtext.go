// Package mdtext reads escaped Markdown text back as a CommonMark reader shows it: backslash
// escapes and entity references become their characters. The converters (engine/docjob)
// escape a document's own text so that "<div>", "*note*" or "1. " at a line's start stay text;
// the app reads section titles back with Unescape and the window every text segment it draws.
// It also names the marker lines a converted document begins each page or slide with
// (PageMarker, SlideMarker). It depends on the standard library only, so the window may import
// it beside engine/job.
package mdtext

import (
	"html"
	"strings"
)

// Unescape is the text a CommonMark reader shows for s: a backslash before ASCII punctuation
// is dropped, and entity and numeric character references ("&lt;", "&amp;", "&#42;",
// "&#x3C;", closed by ";") become their characters. A name HTML does not know ("&bogus;")
// stays as written.
func Unescape(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && IsPunct(s[i+1]) {
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

// IsPunct reports whether c is ASCII punctuation, the characters a CommonMark backslash
// escapes.
func IsPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
