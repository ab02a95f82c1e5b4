package docjob

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"jobdesk/engine/mdtext"
)

// This file keeps a document's own text from being read as Markdown or HTML. A Word paragraph
// saying "<div>" or "<m:oMath>" would otherwise vanish in every Markdown viewer (raw HTML is
// dropped or hidden), and "*note*", "# 1", "1. " at a line's start, "[x](y)" or a literal
// "&lt;" would change meaning. Only the document's text is escaped, never the Markdown the
// converters write around it (headings, list markers, links, pictures, tables, code blocks).
//
// The forms are the ones every Markdown reader understands: "<" that could open a tag or an
// autolink becomes the entity "&lt;" (and the ">" closing it "&gt;"), "&" that would start an
// entity "&amp;" (as HTML and the original Markdown read them), and markup punctuation gets a
// backslash ("\*", "\_", "\`", "\[", "\]", "\#", "\>", "1\. "), CommonMark's escapes.
// mdtext.Unescape reads such text back.

// EscapeMarkdown escapes text so that a Markdown reader shows it as written when it stands as a
// block of its own (each line may start a paragraph): the inline escapes of escapeInline plus
// the line-start forms of escapeLineStarts. Code blocks and fences take their text unescaped.
func EscapeMarkdown(s string) string {
	return escapeLineStarts(escapeInline(s))
}

// escapeInline escapes a run of document text that stands inside a line (a run of a paragraph,
// a table cell, link text, a heading's text): "<" that could open HTML or an autolink, "&" that
// would form an entity, backslashes before punctuation, backticks, brackets, "*", "_" and "~"
// where they could open or close emphasis or strikethrough (not between spaces, nor "_" inside a
// word), and "#"
// closing a heading. At the ends of s the neighbouring text is unknown: "*", "_" and "<" there
// are escaped. Line-start forms are
// escapeLineStarts's, applied once the line is assembled.
func escapeInline(s string) string {
	if !strings.ContainsAny(s, "<&\\`*_[]#>~") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	inTag := false // after an escaped "<": its ">" is written as "&gt;" too
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '<':
			// at the end of s the next run's first character is unknown: escaped too
			if i+1 == len(s) || isASCIILetter(s[i+1]) || strings.IndexByte("/!?", s[i+1]) >= 0 {
				b.WriteString("&lt;")
				inTag = true
				continue
			}
		case '>':
			if inTag {
				b.WriteString("&gt;")
				inTag = false
				continue
			}
		case '\n':
			inTag = false
		case '&':
			if entityAt(s[i+1:]) {
				b.WriteString("&amp;")
				continue
			}
		case '\\':
			if i+1 == len(s) || s[i+1] == '\n' || mdtext.IsPunct(s[i+1]) {
				b.WriteString(`\\`)
				continue
			}
		case '`', '[', ']':
			b.WriteByte('\\')
		case '*', '~': // "~" strikes text through in GitHub's Markdown
			if !(spaceBefore(s, i) && spaceAfter(s, i+1)) {
				b.WriteByte('\\')
			}
		case '_':
			if !(wordBefore(s, i) && wordAfter(s, i+1)) && !(spaceBefore(s, i) && spaceAfter(s, i+1)) {
				b.WriteByte('\\')
			}
		case '#':
			// a run of "#" ending the text after a space would close an ATX heading
			j := i
			for j < len(s) && s[j] == '#' {
				j++
			}
			if strings.TrimRight(s[j:], " \t") == "" && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
				for ; i < j; i++ {
					b.WriteString(`\#`)
				}
				i--
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// escapeLineStarts escapes the forms that mean a block when they open a line of s (text already
// escaped by escapeInline): "#" (heading), ">" (quote), "-", "+", "*" and "1." / "1)" before a
// space (list items), a line of "-", "*", "_" or "=" (thematic break, setext underline), "~~~"
// (a fence) and "|" (a table row).
func escapeLineStarts(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for first := true; first || s != ""; first = false {
		line, rest, more := strings.Cut(s, "\n")
		b.WriteString(escapeLineStart(line))
		if more {
			b.WriteByte('\n')
		}
		s = rest
		if !more {
			break
		}
	}
	return b.String()
}

// escapeLineStart escapes the block form one line opens with, if any.
func escapeLineStart(line string) string {
	i := 0
	for i < len(line) && i < 4 && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i == len(line) {
		return line
	}
	lead, t := line[:i], line[i:]
	blankAfter := func(n int) bool { return n >= len(t) || t[n] == ' ' || t[n] == '\t' }
	switch c := t[0]; {
	case c == '#' || c == '>' || c == '|':
		return lead + `\` + t
	case c == '-' || c == '+' || c == '*':
		if blankAfter(1) || strings.Trim(t, string(c)+" \t") == "" {
			return lead + `\` + t
		}
	case c == '=' || c == '_':
		if strings.Trim(t, string(c)+" \t") == "" {
			return lead + `\` + t
		}
	case c == '~':
		if strings.HasPrefix(t, "~~~") {
			return lead + `\` + t
		}
	case c >= '0' && c <= '9':
		n := 1
		for n < len(t) && n < 10 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n <= 9 && n < len(t) && (t[n] == '.' || t[n] == ')') && blankAfter(n+1) {
			return lead + t[:n] + `\` + t[n:]
		}
	}
	return line
}

// entityAt reports whether s (the text after a "&") starts an entity or character reference:
// a name, "#" and digits, or "#x" and hex digits, closed by ";".
func entityAt(s string) bool {
	n := 0
	if n < len(s) && s[n] == '#' {
		n++
		if n < len(s) && (s[n] == 'x' || s[n] == 'X') {
			n++
		}
	}
	start := n
	for n < len(s) && n < 40 && (isASCIILetter(s[n]) || (s[n] >= '0' && s[n] <= '9')) {
		n++
	}
	return n > start && n < len(s) && s[n] == ';'
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func spaceBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsSpace(r)
}

func spaceAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

func wordBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func wordAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// writeTextTable writes rows of plain document text (spreadsheet cells, chart data, CSV fields)
// as a Markdown table, each cell escaped; writeTable takes cells that are Markdown already.
func writeTextTable(b *strings.Builder, rows [][]string) {
	writeRows(b, rows, escapeInline)
}
