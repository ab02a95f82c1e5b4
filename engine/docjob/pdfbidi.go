package docjob

import (
	"strings"
	"unicode"
)

// Right-to-left text. A PDF places glyphs left to right as they are seen, so a line of Arabic or
// Hebrew comes out of the content stream in visual order: reversed. logicalOrder turns each line
// back into reading (logical) order, a simplified Unicode bidi pass:
//
//   - a line whose strong letters are mostly right-to-left is read right to left: its runs
//     (stretches of right-to-left letters, and of left-to-right letters and digits, such as
//     "Python" or "2024") are taken in reverse order, a right-to-left run with its characters
//     reversed (brackets mirrored), a left-to-right run as it is;
//   - in a line that is mostly left to right, each right-to-left run is reversed in place.
//
// A code whose text is several characters (a lam-alef ligature's "لا") is already in logical
// order: the decoder writes such text reversed inside a right-to-left string (rtlGlyph), so the
// line's reversal puts it back.

// isRTL: a letter of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, NKo and their
// presentation forms).
func isRTL(r rune) bool {
	return r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF
}

// hasRTL reports whether s holds a right-to-left letter (a fast check before logicalOrder).
func hasRTL(s string) bool {
	for _, r := range s {
		if isRTL(r) {
			return true
		}
	}
	return false
}

// rtlGlyph returns the text of one code as the visual-order line expects it: several
// characters with a right-to-left one among them reversed, any other text as it is.
func rtlGlyph(s string) string {
	if len(s) < 3 || !hasRTL(s) {
		return s
	}
	rs := []rune(s)
	if len(rs) < 2 {
		return s
	}
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

// logicalOrder returns text (lines in visual order) with each line in reading order (see above).
func logicalOrder(text string) string {
	if !hasRTL(text) {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if hasRTL(l) {
			lines[i] = logicalLine(l)
		}
	}
	return strings.Join(lines, "\n")
}

func logicalLine(l string) string {
	rs := []rune(l)
	rtl, ltr := 0, 0
	for _, r := range rs {
		switch {
		case isRTL(r):
			rtl++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			ltr++
		}
	}
	// Runs: kind 1 right to left, 2 left to right, 0 neutral (spaces, punctuation).
	kind := func(r rune) int {
		switch {
		case isRTL(r):
			return 1
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return 2
		}
		return 0
	}
	type run struct {
		rs  []rune
		rtl bool
	}
	var runs []run
	for i := 0; i < len(rs); {
		k := kind(rs[i])
		j := i + 1
		if k == 2 {
			// a left-to-right run keeps its inner spaces and punctuation ("R 4.2", "1,200")
			for j < len(rs) {
				if kind(rs[j]) == 2 {
					j++
					continue
				}
				m := j
				for m < len(rs) && kind(rs[m]) == 0 {
					m++
				}
				if m < len(rs) && kind(rs[m]) == 2 && m-j <= 2 && strings.TrimSpace(string(rs[j:m])) != "" {
					j = m
					continue
				}
				break
			}
		} else {
			for j < len(rs) && kind(rs[j]) != 2 {
				j++
			}
		}
		runs = append(runs, run{rs: rs[i:j], rtl: k != 2})
		i = j
	}
	var b strings.Builder
	if rtl >= ltr {
		for k := len(runs) - 1; k >= 0; k-- {
			writeRun(&b, runs[k].rs, runs[k].rtl)
		}
		return b.String()
	}
	for _, r := range runs {
		// in a left-to-right line only stretches holding right-to-left letters turn round
		writeRun(&b, r.rs, r.rtl && hasRTL(string(r.rs)))
	}
	return b.String()
}

var mirrored = map[rune]rune{'(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<', '«': '»', '»': '«'}

func writeRun(b *strings.Builder, rs []rune, reverse bool) {
	if !reverse {
		b.WriteString(string(rs))
		return
	}
	for k := len(rs) - 1; k >= 0; k-- {
		r := rs[k]
		if m, ok := mirrored[r]; ok {
			r = m
		}
		b.WriteRune(r)
	}
}
