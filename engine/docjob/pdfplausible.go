package docjob

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// Plausible text. A font JobDesk cannot decode, or decodes through a wrong table, gives text
// that is no language: replacement characters, control codes, private-use code points, or, from
// a Chinese, Japanese or Korean font, a soup of accented Latin letters, IPA and Arabic. Such
// text is never reported as converted. Each font's text on a page is measured on its own, and a
// font is unreadable on that page when
//
//   - at least 1 in 20 of its characters (or 8 in all) are bad: U+FFFD, C0 or C1 controls,
//     private-use code points (except in a symbol font: Symbol, Wingdings, …), noncharacters,
//     surrogates or code points Unicode does not assign; or
//   - it is a CJK font and at least 1 in 10 of its characters (and 2 in all) are soup: Latin-1
//     supplement letters, Latin Extended, IPA, combining marks, or Armenian, Hebrew, Arabic or
//     Syriac letters, none of which the CJK character sets hold; or
//   - at least 16 of its ideographs are shown and most lie outside the Basic Multilingual Plane
//     (what a table that maps codes to arbitrary code points produces); or
//   - JobDesk has no way to decode it at all (a composite font without ToUnicode whose
//     character collection it has no table for and whose program it cannot read).
//
// The unreadable fonts' text is left out of the page, the page is read by OCR when it is
// available, and the conversion is partial, naming the pages and the fonts.

// fontTally counts the characters one font showed on one page.
type fontTally struct {
	runes, bad, soup, han, supp int
}

// add counts the characters of s shown in font f.
func (t *fontTally) add(f *pageFont, s string) {
	for _, r := range s {
		if r < 0x80 {
			switch {
			case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			case r < 0x20 || r == 0x7F:
				t.runes++
				t.bad++
			default:
				t.runes++
			}
			continue
		}
		switch {
		case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF: // CJK ideographs (fast path)
			t.runes++
			t.han++
			continue
		case r >= 0x3040 && r <= 0x30FF, r >= 0x3001 && r <= 0x303F, r >= 0xFF01 && r <= 0xFFEF && r != 0xFFFD, r >= 0xAC00 && r <= 0xD7A3:
			t.runes++ // kana, CJK punctuation, full-width forms, Hangul syllables
			continue
		case unicode.IsSpace(r):
			continue
		}
		t.runes++
		switch {
		case badRune(r, f.symbol):
			t.bad++
		case f.cjk && soupRune(r):
			t.soup++
		case unicode.Is(unicode.Han, r):
			t.han++
			if r > 0xFFFF {
				t.supp++
			}
		}
	}
}

// unreadable reports whether the counted text is no language (see above).
func (t *fontTally) unreadable(f *pageFont) bool {
	switch {
	case t.runes == 0 || f.symbol:
		return false // a symbol font's characters are pictures
	case f.undecodable:
		return true
	case t.bad > 0 && (t.bad*20 >= t.runes || t.bad >= 8):
		return true
	case t.soup >= 2 && t.soup*10 >= t.runes:
		return true
	case t.supp >= 16 && t.supp*2 > t.han:
		return true
	}
	return false
}

// badRune: U+FFFD, C1 controls, private use (outside symbol fonts), noncharacters, surrogates,
// unassigned code points.
func badRune(r rune, symbol bool) bool {
	switch {
	case r == '\uFFFD', r >= 0x80 && r < 0xA0, r >= 0xD800 && r <= 0xDFFF,
		r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE, r > unicode.MaxRune:
		return true
	case unicode.Is(unicode.Co, r):
		return !symbol
	case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zs, r):
		return false
	}
	return !unicode.IsGraphic(r)
}

// soupRune: a letter no CJK character set holds (JIS X 0208, GB 2312, Big5 and KS X 1001 hold
// Greek and Cyrillic, and the symbols kept here, but no accented Latin).
func soupRune(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xBF, r == 0xD7, r == 0xF7:
		return false // symbols: ° ± § ¶ · × ÷ © ®, …
	case r >= 0xC0 && r <= 0x36F: // Latin-1 letters, Latin Extended, IPA, spacing and combining marks
		return true
	case r >= 0x530 && r <= 0x8FF: // Armenian, Hebrew, Arabic, Syriac, Thaana, NKo, …
		return true
	}
	return false
}

// unreadableFonts measures spans by font and returns the fonts whose text on the page is
// unreadable (their BaseFont names, in the order first shown) and the spans without their bad
// text; dropped: some font's text was left out whole (not only its holes).
func unreadableFonts(spans []span) (names []string, kept []span, dropped bool) {
	var fonts []*pageFont
	var tallies []fontTally
	for i := range spans {
		f := spans[i].font
		if f == nil {
			continue
		}
		k := -1
		for j, g := range fonts {
			if g == f {
				k = j
				break
			}
		}
		if k < 0 {
			fonts = append(fonts, f)
			tallies = append(tallies, fontTally{})
			k = len(fonts) - 1
		}
		tallies[k].add(f, spans[i].text)
	}
	var bad, holes []*pageFont
	for k, f := range fonts {
		if tallies[k].unreadable(f) {
			if tallies[k].mostlyReadable(f) {
				holes = append(holes, f)
			} else {
				bad = append(bad, f)
			}
			name := f.name
			if name == "" {
				name = "(unnamed font)"
			}
			if !containsString(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil, spans, false
	}
	kept = make([]span, 0, len(spans))
	for _, s := range spans {
		if slices.Contains(bad, s.font) {
			continue
		}
		if slices.Contains(holes, s.font) {
			s.text = dropBadRunes(s.text, s.font.symbol)
		}
		kept = append(kept, s)
	}
	return names, kept, len(bad) > 0
}

// mostlyReadable: the font's text on the page is language with holes (codes it has no text
// for, as U+FFFD or private use) rather than garbage: fewer than half its characters are bad,
// and no other measure finds it unreadable. Its readable characters are kept.
func (t *fontTally) mostlyReadable(f *pageFont) bool {
	return !f.undecodable && t.bad*2 < t.runes && !(t.soup >= 2 && t.soup*10 >= t.runes) && !(t.supp >= 16 && t.supp*2 > t.han)
}

// dropBadRunes removes the characters badRune finds in s (and C0 controls).
func dropBadRunes(s string, symbol bool) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7F || r >= 0x80 && badRune(r, symbol) {
			return -1
		}
		return r
	}, s)
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// symbolFontName reports whether a font's name is that of a symbol font, whose private-use code
// points are its pictures (bullets, arrows, check marks).
func symbolFontName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"symbol", "dingbat", "wingding", "webding", "marlett", "icon", "emoji", "awesome"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// fontDisplayName returns a font's name as text, and, for a Chinese, Japanese or Korean font,
// the code page its producer most likely wrote its text in (nil for other fonts). Producers in
// those languages write the name in their own code page (宋体 as GBK bytes, ＭＳ 明朝 as
// Shift_JIS): a name that is not UTF-8 is decoded as GBK, Shift_JIS or Big5, the first that
// gives CJK characters (else its bytes are shown as Latin-1). A name holding CJK characters, or
// one of the usual CJK font families (SimSun, MS-Mincho, Batang, …), names a CJK font, whose
// strings, in a simple font that is not embedded, may be its code page's text (see decode).
func fontDisplayName(name string) (string, encoding.Encoding) {
	if !utf8.ValidString(name) {
		for _, cp := range []encoding.Encoding{simplifiedchinese.GBK, japanese.ShiftJIS, traditionalchinese.Big5} {
			if d, ok := strictDecode(cp, []byte(name)); ok && hasCJK(d) {
				return d, cp
			}
		}
		b := make([]rune, 0, len(name))
		for i := 0; i < len(name); i++ {
			b = append(b, rune(name[i]))
		}
		return string(b), nil
	}
	n := strings.ToLower(strings.NewReplacer("-", "", " ", "", "_", "").Replace(name))
	for _, f := range cjkFontFamilies {
		if strings.HasPrefix(n, f.name) {
			return name, f.cp
		}
	}
	for _, r := range name {
		switch {
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			return name, japanese.ShiftJIS
		case unicode.Is(unicode.Hangul, r):
			return name, korean.EUCKR
		}
	}
	if hasCJK(name) {
		return name, simplifiedchinese.GBK
	}
	return name, nil
}

// cjkFontFamilies are the names (lower case, without spaces and hyphens) of the fonts CJK
// office documents are set in, with their code pages.
var cjkFontFamilies = func() (out []struct {
	name string
	cp   encoding.Encoding
}) {
	add := func(cp encoding.Encoding, names ...string) {
		for _, n := range names {
			out = append(out, struct {
				name string
				cp   encoding.Encoding
			}{n, cp})
		}
	}
	add(simplifiedchinese.GBK, "simsun", "nsimsun", "simhei", "simkai", "simfang", "kaiti", "fangsong",
		"stsong", "stheiti", "stkaiti", "stfangsong", "microsoftyahei")
	add(traditionalchinese.Big5, "mingliu", "pmingliu", "dfkai")
	add(japanese.ShiftJIS, "msmincho", "mspmincho", "msgothic", "mspgothic", "msuigothic", "meiryo",
		"yugothic", "yumincho", "hgmincho", "hggothic", "hiraginomin", "hiraginokaku", "kozmin", "kozgo",
		"ryumin", "gothicbbb", "heiseimin", "heiseikaku", "ipamincho", "ipagothic", "ipaexmincho", "ipaexgothic")
	add(korean.EUCKR, "batang", "gulim", "dotum", "gungsuh", "malgungothic")
	return out
}()

// hasCJK reports whether s holds a Han ideograph, kana or a Hangul syllable.
func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) || unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

// baseFontName is a font's BaseFont without the six-letter subset tag (ABCDEF+).
func baseFontName(name string) string {
	if len(name) > 7 && name[6] == '+' {
		return name[7:]
	}
	return name
}

// cjkOrderings are the CJK character collections of Adobe.
var cjkOrderings = map[string]bool{"Japan1": true, "GB1": true, "CNS1": true, "Korea1": true, "Japan2": true, "KR": true}

// classifyType0 sets cjk and undecodable for a composite font v from its encoding, its
// descendant's character collection and whether it has a ToUnicode map.
func (pf *pageFont) classifyType0(v pdf.Value) {
	enc := v.Key("Encoding")
	desc := v.Key("DescendantFonts").Index(0)
	ordering := desc.Key("CIDSystemInfo").Key("Ordering").Text()
	identity := enc.Kind() != pdf.Name || enc.Name() == "Identity-H" || enc.Name() == "Identity-V"
	pf.cjk = cjkOrderings[ordering] || !identity
	hasToUnicode := v.Key("ToUnicode").Kind() == pdf.Stream
	pf.undecodable = !hasToUnicode && identity && !cjkOrderings[ordering]
}

// unreadableReason says which pages' text could not be decoded, in which fonts, and whether OCR
// read them instead, in English and Japanese.
func unreadableReason(us []UnreadablePage) (en, ja string) {
	var pages, ocr []int
	var fonts []string
	for _, u := range us {
		pages = append(pages, u.Page)
		if u.OCR {
			ocr = append(ocr, u.Page)
		}
		for _, f := range u.Fonts {
			if !containsString(fonts, f) {
				fonts = append(fonts, f)
			}
		}
	}
	en = fmt.Sprintf("text that could not be decoded (font %s) on pages %s", strings.Join(fonts, ", "), intList(pages))
	ja = fmt.Sprintf("フォント %s の文字を正しく読み取れないページ: %s", strings.Join(fonts, "、"), intList(pages))
	switch {
	case len(ocr) == len(pages):
		en += "; read by OCR instead"
		ja += "（OCR で読み取りました）"
	case len(ocr) > 0:
		en += fmt.Sprintf("; pages %s read by OCR instead, the rest left out", intList(ocr))
		ja += fmt.Sprintf("（%s ページは OCR で読み取り、残りは省きました）", intList(ocr))
	default:
		en += " (left out)"
		ja += "（その文字は省きました）"
	}
	return en, ja
}
