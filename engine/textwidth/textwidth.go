// Package textwidth measures text as a terminal draws it: East Asian wide and fullwidth
// characters (kanji, kana, fullwidth digits) take two cells, others one. The CLI's tables and
// the goal chart line Japanese up with it.
package textwidth

import "golang.org/x/text/width"

// Of returns how many terminal cells s takes.
func Of(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
