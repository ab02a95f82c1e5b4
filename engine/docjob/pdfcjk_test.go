package docjob

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	utf16x "unicode/utf16"
)

// cidFont describes a composite (Type0) font for cjkPDF: its BaseFont, encoding (a CMap name),
// the Ordering of its CIDSystemInfo, and optionally a ToUnicode map (code → text) and Subtype
// of its descendant (CIDFontType0 when empty).
type cidFont struct {
	base, encoding, ordering string
	toUnicode                map[uint16]string
	rawToUnicode             map[uint16][]uint16 // targets as UTF-16 units, written as they are
}

// cjkPDF writes a one-page PDF: font F1 is f, font F2 Helvetica; content is the page's stream.
func cjkPDF(f cidFont, content string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R /F2 4 0 R >> >> /Contents 6 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		"", // 5: the Type0 font
		pdfStream([]byte(content)),
		fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /%s /CIDSystemInfo << /Registry (Adobe) /Ordering (%s) /Supplement 6 >> /DW 1000 >>", f.base, f.ordering),
	}
	tu := ""
	if f.toUnicode != nil || f.rawToUnicode != nil {
		var b strings.Builder
		b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapName /T def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
		n := len(f.toUnicode) + len(f.rawToUnicode)
		fmt.Fprintf(&b, "%d beginbfchar\n", n)
		for c, s := range f.toUnicode {
			fmt.Fprintf(&b, "<%04X> <", c)
			for _, u := range utf16x.Encode([]rune(s)) {
				fmt.Fprintf(&b, "%04X", u)
			}
			b.WriteString(">\n")
		}
		for c, us := range f.rawToUnicode {
			fmt.Fprintf(&b, "<%04X> <", c)
			for _, u := range us {
				fmt.Fprintf(&b, "%04X", u)
			}
			b.WriteString(">\n")
		}
		b.WriteString("endbfchar\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
		objs = append(objs, pdfStream([]byte(b.String())))
		tu = " /ToUnicode 8 0 R"
	}
	objs[4] = fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /%s /DescendantFonts [7 0 R]%s >>", f.base, f.encoding, tu)
	return rawPDF(objs...)
}

// hexCodes writes codes as a PDF hex string of 2-byte codes.
func hexCodes(codes []uint16) string {
	var b strings.Builder
	b.WriteByte('<')
	for _, c := range codes {
		fmt.Fprintf(&b, "%04X", c)
	}
	b.WriteByte('>')
	return b.String()
}

func convertStatus(t *testing.T, data []byte) (*Doc, Status, string, string) {
	t.Helper()
	d, err := convertPDF(t.Context(), data, Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	st, en, ja := d.status()
	return d, st, en, ja
}

// A CID font with Identity-H, no ToUnicode and a character collection JobDesk has no table
// for: its codes are glyph numbers of a font it does not have. The page's English line is kept,
// the font's text is left out (never shown as Latin-1 soup), and the conversion is partial,
// naming the page and the font in both languages.
func TestPDFUndecodableFontIsPartial(t *testing.T) {
	codes := []uint16{0x0201, 0x0341, 0x0452, 0x0563, 0x0674}
	content := "BT /F2 12 Tf 72 760 Td (An English line) Tj ET\nBT /F1 12 Tf 72 700 Td " + hexCodes(codes) + " Tj ET\n"
	d, st, en, ja := convertStatus(t, cjkPDF(cidFont{base: "GlyphOnlyFont", encoding: "Identity-H", ordering: "Identity"}, content))
	if st != StatusPartial || !strings.Contains(en, "GlyphOnlyFont") || !strings.Contains(en, "pages 1") || !strings.Contains(ja, "GlyphOnlyFont") {
		t.Fatalf("status %s: %q / %q", st, en, ja)
	}
	if !strings.Contains(d.Markdown, "An English line") {
		t.Fatalf("the readable line was lost:\n%s", d.Markdown)
	}
	for _, l := range strings.Split(d.Markdown, "\n") {
		if l != "" && l != "<!-- Page 1 -->" && l != "An English line" && !strings.HasPrefix(l, "> (characters in GlyphOnlyFont") {
			t.Fatalf("garbage shown: %q in\n%s", l, d.Markdown)
		}
	}
	if len(d.UnreadablePages) != 1 || d.UnreadablePages[0].Page != 1 || len(d.NoTextPages) != 0 {
		t.Fatalf("unreadable %+v, no text %v", d.UnreadablePages, d.NoTextPages)
	}
}

// A ToUnicode map whose targets are replacement characters and private-use code points (the
// Chinese case of the issue: 8 × U+FFFD) never ends ready.
func TestPDFWrongToUnicodeIsPartial(t *testing.T) {
	tu := map[uint16][]uint16{}
	var codes []uint16
	for i := uint16(1); i <= 8; i++ {
		tu[i] = []uint16{0xFFFD}
		if i%2 == 0 {
			tu[i] = []uint16{0xE000 + i}
		}
		codes = append(codes, i)
	}
	_, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "SimSun", encoding: "Identity-H", ordering: "Identity", rawToUnicode: tu},
		"BT /F1 12 Tf 72 700 Td "+hexCodes(codes)+" Tj ET\n"))
	if st != StatusPartial || !strings.Contains(en, "SimSun") {
		t.Fatalf("status %s: %q", st, en)
	}
}

// Property: a ToUnicode map drawn at random (uniform over all code points; or plausible
// Japanese with some targets replaced by controls, U+FFFD, private-use, noncharacters or
// unassigned code points; or, in a Japanese font, accented Latin letters) never ends ready
// when at least 1 in 10 of the characters shown are such garbage, and plausible Japanese
// alone always ends ready.
func TestPDFRandomCodeTablesNeverReadyWithGarbage(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	japanese := []rune("あいうえおかきくけこ日本語文書請求書株式会社東京都千代田区年月日円税込合計アイウエオカキクケコ")
	bad := []rune{0xFFFD, 0x01, 0x1F, 0x85, 0x9C, 0xE000, 0xF8FF, 0xFDD0, 0xFFFE, 0x0378, 0x0380, 0x2FE0}
	soup := []rune("ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿĀāĂăǶǺɐɑʡ̸سש")
	kinds := []string{"uniform", "bad", "soup", "clean"}
	seen := map[string]int{}
	for iter := 0; iter < 120; iter++ {
		kind := kinds[iter%len(kinds)]
		n := 10 + rng.Intn(60)
		tu := map[uint16][]uint16{}
		garbage := 0
		var codes []uint16
		ordering := "Identity"
		if kind == "soup" {
			ordering = "Japan1"
		}
		for i := 0; i < n; i++ {
			c := uint16(0x2000 + rng.Intn(4000))
			var r rune
			switch kind {
			case "uniform":
				r = rune(rng.Intn(0x110000))
				if r >= 0xD800 && r <= 0xDFFF {
					r = 0xFFFD
				}
			case "bad":
				r = japanese[rng.Intn(len(japanese))]
				if rng.Intn(4) == 0 {
					r = bad[rng.Intn(len(bad))]
				}
			case "soup":
				r = japanese[rng.Intn(len(japanese))]
				if rng.Intn(3) == 0 {
					r = soup[rng.Intn(len(soup))]
				}
			default:
				r = japanese[rng.Intn(len(japanese))]
			}
			if _, dup := tu[c]; dup {
				continue
			}
			tu[c] = utf16x.Encode([]rune{r})
			codes = append(codes, c)
			if isGarbageTarget(r, kind == "soup") {
				garbage++
			}
		}
		content := "BT /F1 12 Tf 72 700 Td " + hexCodes(codes) + " Tj ET\n"
		data := cjkPDF(cidFont{base: "RandomMincho", encoding: "Identity-H", ordering: ordering, rawToUnicode: tu}, content)
		d, err := convertPDF(t.Context(), data, Options{NoOCR: true})
		if err != nil {
			t.Fatal(err)
		}
		st, why, _ := d.status()
		switch {
		case garbage*10 >= len(codes) && st == StatusReady:
			t.Fatalf("%s table %d: %d of %d characters garbage, yet ready:\n%q", kind, iter, garbage, len(codes), d.Markdown)
		case kind == "clean" && st != StatusReady:
			t.Fatalf("clean Japanese table %d ended %s: %s\n%q", iter, st, why, d.Markdown)
		}
		if st != StatusReady {
			seen[kind]++
		}
	}
	if seen["uniform"] == 0 || seen["bad"] == 0 || seen["soup"] == 0 {
		t.Fatalf("no garbage table was caught: %v", seen)
	}
}

// isGarbageTarget is the test's own idea of garbage: what no Japanese text holds.
func isGarbageTarget(r rune, soup bool) bool {
	switch {
	case r == 0xFFFD, r < 0x20, r >= 0x7F && r < 0xA0, r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000,
		r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE, r == 0x0378, r == 0x0380, r == 0x2FE0:
		return true
	case soup && r >= 0xC0 && r <= 0x6FF:
		return true
	}
	return false
}

// Each font setup of real Japanese, Chinese and Korean office PDFs reads right and ends ready:
// CID fonts without ToUnicode through their character collection (Identity-H/V), predefined
// CMaps by name through the collection of the CMap, an embedded CFF program without ToUnicode,
// and a ToUnicode whose targets are placeholders falling back to the collection.
func TestPDFCJKFontPaths(t *testing.T) {
	// CIDs in Adobe's collections: Japan1 あ 843, 日 3284, 本 3722, 語 1952, A 34, B 35;
	// GB1 中 4559, 文 3795; CNS1 中 661, 文 726; Korea1 한 3296, 국 1204.
	cases := []struct {
		name    string
		font    cidFont
		codes   string // the shown string, as PDF hex
		want    string
		extraFD string
	}{
		{"Identity-H Japan1, not embedded", cidFont{base: "Ryumin-Light", encoding: "Identity-H", ordering: "Japan1"},
			hexCodes([]uint16{843, 3284, 3722, 1952}), "あ日本語", ""},
		{"Identity-H GB1", cidFont{base: "SimSun", encoding: "Identity-H", ordering: "GB1"}, hexCodes([]uint16{4559, 3795, 4559, 3795}), "中文中文", ""},
		{"Identity-H CNS1", cidFont{base: "MingLiU", encoding: "Identity-H", ordering: "CNS1"}, hexCodes([]uint16{661, 726, 661, 726}), "中文中文", ""},
		{"Identity-H Korea1", cidFont{base: "Batang", encoding: "Identity-H", ordering: "Korea1"}, hexCodes([]uint16{3296, 1204, 3296, 1204}), "한국한국", ""},
		{"predefined H, Ryumin", cidFont{base: "Ryumin-Light", encoding: "H", ordering: "Japan1"}, "<2422467C4B5C386C>", "あ日本語", ""},
		{"predefined 90ms-RKSJ-H", cidFont{base: "HeiseiMin-W3", encoding: "90ms-RKSJ-H", ordering: "Japan1"}, "<82A093FA967B8CEA>", "あ日本語", ""},
		{"predefined EUC-H", cidFont{base: "HeiseiMin-W3", encoding: "EUC-H", ordering: "Japan1"}, "<A4A2C6FCCBDCB8EC>", "あ日本語", ""},
		{"predefined UniJIS-UTF16-H", cidFont{base: "KozMinPro-Regular", encoding: "UniJIS-UTF16-H", ordering: "Japan1"}, "<304265E5672C8A9E>", "あ日本語", ""},
		{"predefined GBK-EUC-H", cidFont{base: "SimSun", encoding: "GBK-EUC-H", ordering: "GB1"}, "<D6D0CEC4D6D0CEC4>", "中文中文", ""},
		{"predefined UniGB-UCS2-H", cidFont{base: "STSong-Light", encoding: "UniGB-UCS2-H", ordering: "GB1"}, "<4E2D65874E2D6587>", "中文中文", ""},
		{"predefined B5pc-H", cidFont{base: "MingLiU", encoding: "B5pc-H", ordering: "CNS1"}, "<A4A4A4E5A4A4A4E5>", "中文中文", ""},
		{"predefined KSCms-UHC-H", cidFont{base: "Batang", encoding: "KSCms-UHC-H", ordering: "Korea1"}, "<C7D1B1B9C7D1B1B9>", "한국한국", ""},
		{"embedded CFF without ToUnicode", cidFont{base: "ABCDEF+KozGoPro-Medium", encoding: "Identity-H", ordering: "Japan1"},
			hexCodes([]uint16{34, 35, 843, 3284, 3722, 1952}), "ABあ日本語", " /FontDescriptor 9 0 R"},
		{"ToUnicode to placeholders falls back", cidFont{base: "MS-Mincho", encoding: "Identity-H", ordering: "Japan1",
			rawToUnicode: map[uint16][]uint16{843: {0xFFFD}, 3284: {0xE001}, 3722: {0x0001}, 1952: {0xFFFD}}},
			hexCodes([]uint16{843, 3284, 3722, 1952}), "あ日本語", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := cjkPDF(c.font, "BT /F1 12 Tf 72 700 Td "+c.codes+" Tj ET\n")
			if c.extraFD != "" {
				data = withEmbeddedCFF(t, c.font, c.codes)
			}
			d, st, en, _ := convertStatus(t, data)
			if st != StatusReady || !strings.Contains(d.Markdown, c.want) {
				t.Fatalf("status %s %q, want %q in\n%s", st, en, c.want, d.Markdown)
			}
		})
	}
}

// withEmbeddedCFF is cjkPDF with a font descriptor whose FontFile3 (CIDFontType0C) is a CFF
// program (its bytes do not matter: the text comes from the character collection).
func withEmbeddedCFF(t *testing.T, f cidFont, codes string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R /F2 4 0 R >> >> /Contents 6 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /%s /DescendantFonts [7 0 R] >>", f.base, f.encoding),
		pdfStream([]byte("BT /F1 12 Tf 72 700 Td " + codes + " Tj ET\n")),
		fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /%s /CIDSystemInfo << /Registry (Adobe) /Ordering (%s) /Supplement 4 >> /DW 1000 /FontDescriptor 8 0 R >>", f.base, f.ordering),
		fmt.Sprintf("<< /Type /FontDescriptor /FontName /%s /Flags 4 /FontBBox [0 -120 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 /FontFile3 9 0 R >>", f.base),
		"<< /Length 8 /Subtype /CIDFontType0C >>\nstream\n\x01\x00\x04\x02\x00\x01\x01\x01\nendstream",
	}
	return rawPDF(objs...)
}

// Vertical writing (Identity-V and the -V CMaps) reads its columns right to left, each top to
// bottom, whatever order the content stream draws them in.
func TestPDFVerticalColumnsRightToLeft(t *testing.T) {
	for _, enc := range []string{"Identity-V", "V"} {
		left, right := hexCodes([]uint16{3722, 1952}), hexCodes([]uint16{843, 3284}) // 本語, あ日
		if enc == "V" {
			left, right = "<4B5C386C>", "<2422467C>"
		}
		// The left column is drawn first; each column's glyphs are shown one string each.
		content := "BT /F1 12 Tf 1 0 0 1 300 700 Tm " + left[:5] + "> Tj 1 0 0 1 300 688 Tm <" + left[5:] + " Tj ET\n" +
			"BT /F1 12 Tf 1 0 0 1 320 700 Tm " + right[:5] + "> Tj 1 0 0 1 320 688 Tm <" + right[5:] + " Tj ET\n"
		d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "Ryumin-Light", encoding: enc, ordering: "Japan1"}, content))
		body := strings.ReplaceAll(strings.TrimPrefix(d.Markdown, "<!-- Page 1 -->\n\n"), "\n", "")
		if st != StatusReady || !strings.HasPrefix(body, "あ日本語") {
			t.Fatalf("%s: status %s %q, text %q", enc, st, en, body)
		}
	}
}

// A ToUnicode map with holes (codes it has no text for, and no collection to fall back to):
// the characters it does map are kept, the holes are left out (no U+FFFD in the Markdown), and
// the conversion is partial naming the font.
func TestPDFToUnicodeWithHolesKeepsTheRest(t *testing.T) {
	tu := map[uint16]string{1: "차", 2: "세", 3: "대", 4: " ", 5: "보", 6: "안", 7: "기", 8: "술"}
	codes := []uint16{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 10}
	d, st, en, ja := convertStatus(t, cjkPDF(cidFont{base: "NotoSansCJKkr-Bold", encoding: "Identity-H", ordering: "Identity", toUnicode: tu},
		"BT /F1 12 Tf 72 700 Td "+hexCodes(codes)+" Tj ET\n"))
	if st != StatusPartial || !strings.Contains(en, "NotoSansCJKkr-Bold") || !strings.Contains(ja, "NotoSansCJKkr-Bold") {
		t.Fatalf("status %s: %q", st, en)
	}
	if !strings.Contains(d.Markdown, "차세대 보안기술차세대") || strings.ContainsRune(d.Markdown, '\uFFFD') {
		t.Fatalf("%q", d.Markdown)
	}
}

// embeddedFontPDF is a one-page PDF whose font F1 is a composite font with Identity-H,
// Ordering Identity, no ToUnicode, and the embedded program prog (as FontFile2 when key says so,
// else FontFile3 of subtype sub), showing codes.
func embeddedFontPDF(cidSubtype, key, sub string, prog []byte, codes string) []byte {
	subEntry := ""
	if sub != "" {
		subEntry = " /Subtype /" + sub
	}
	return rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Embedded /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
		pdfStream([]byte("BT /F1 12 Tf 72 700 Td "+codes+" Tj ET\n")),
		"<< /Type /Font /Subtype /"+cidSubtype+" /BaseFont /ABCDEF+Embedded /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 /CIDToGIDMap /Identity /FontDescriptor 7 0 R >>",
		"<< /Type /FontDescriptor /FontName /ABCDEF+Embedded /Flags 4 /FontBBox [0 -120 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 /"+key+" 8 0 R >>",
		fmt.Sprintf("<< /Length %d%s >>\nstream\n%s\nendstream", len(prog), subEntry, prog),
	)
}

// trueTypeWithCmap is a TrueType program holding only a cmap table (3,10, format 12) that maps
// each rune to its glyph.
func trueTypeWithCmap(glyphs map[rune]uint32) []byte {
	var sub []byte
	be32 := func(b []byte, v uint32) []byte { return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) }
	sub = append(sub, 0, 12, 0, 0)
	sub = be32(sub, uint32(16+12*len(glyphs)))
	sub = be32(sub, 0)
	sub = be32(sub, uint32(len(glyphs)))
	for r := rune(0); r < 0x10000; r++ { // in code order
		if g, ok := glyphs[r]; ok {
			sub = be32(be32(be32(sub, uint32(r)), uint32(r)), g)
		}
	}
	cmap := append([]byte{0, 0, 0, 1, 0, 3, 0, 10}, be32(nil, 12)...)
	cmap = append(cmap, sub...)
	font := []byte{0, 1, 0, 0, 0, 1, 0, 16, 0, 0, 0, 0}
	font = append(font, "cmap"...)
	font = be32(be32(be32(font, 0), 28), uint32(len(cmap)))
	return append(font, cmap...)
}

// cidCFF is a CID-keyed CFF program whose ROS names Adobe-ordering (no glyphs: only its header,
// name, Top DICT and strings).
func cidCFF(ordering string) []byte {
	strs := "Adobe" + ordering
	b := []byte{1, 0, 4, 1}
	b = append(b, 0, 1, 1, 1, 5) // Name INDEX: one name, "Test"
	b = append(b, "Test"...)
	dict := []byte{28, 0x01, 0x87, 28, 0x01, 0x88, 145, 12, 30} // 391 392 6 ROS
	b = append(b, 0, 1, 1, 1, byte(1+len(dict)))
	b = append(b, dict...)
	b = append(b, 0, 2, 1, 1, 6, byte(6+len(ordering))) // String INDEX: "Adobe", ordering
	return append(b, strs...)
}

// A composite font embedded without ToUnicode, whose PDF says only Identity, reads through its
// own program: a TrueType's cmap read backwards (glyph → text), a CID-keyed CFF's ROS naming
// Adobe-Japan1 (the slides case of the issue, Latin letters included).
func TestPDFEmbeddedProgramWithoutToUnicode(t *testing.T) {
	tt := trueTypeWithCmap(map[rune]uint32{'の': 5, '削': 6, '除': 7, 'J': 8, 'a': 9})
	d, st, en, _ := convertStatus(t, embeddedFontPDF("CIDFontType2", "FontFile2", "", tt, hexCodes([]uint16{8, 9, 6, 7, 5})))
	if st != StatusReady || !strings.Contains(d.Markdown, "Ja削除の") {
		t.Fatalf("TrueType: %s %q\n%s", st, en, d.Markdown)
	}
	cff := cidCFF("Japan1")
	d, st, en, _ = convertStatus(t, embeddedFontPDF("CIDFontType0", "FontFile3", "CIDFontType0C", cff, hexCodes([]uint16{34, 35, 843, 3284, 3722, 1952})))
	if st != StatusReady || !strings.Contains(d.Markdown, "ABあ日本語") {
		t.Fatalf("CFF: %s %q\n%s", st, en, d.Markdown)
	}
}

// Arabic drawn in visual order (each line's glyphs left to right as seen) reads in logical
// order: the line turned round, a left-to-right word inside it ("Python") kept as it is, and a
// lam-alef ligature (one glyph, its text "لا") in the right order.
func TestPDFRightToLeftLogicalOrder(t *testing.T) {
	tu := map[uint16]string{}
	code := map[string]uint16{}
	next := uint16(1)
	encode := func(glyphs []string) string {
		var cs []uint16
		for _, g := range glyphs {
			c, ok := code[g]
			if !ok {
				c = next
				next++
				code[g], tu[c] = c, g
			}
			cs = append(cs, c)
		}
		return hexCodes(cs)
	}
	split := func(s string) []string {
		var gs []string
		for _, r := range s {
			gs = append(gs, string(r))
		}
		return gs
	}
	reverse := func(gs []string) []string {
		out := make([]string, len(gs))
		for i, g := range gs {
			out[len(gs)-1-i] = g
		}
		return out
	}
	// Line 1, logical "سلام عليكم": visual order is its glyphs reversed, "لا" one glyph.
	line1 := reverse(append([]string{"س", "لا", "م", " "}, split("عليكم")...))
	// Line 2, logical "تعتبر Python لغة": visual "ةغل Python ربتعت".
	line2 := append(append(reverse(split("لغة")), split(" Python ")...), reverse(split("تعتبر"))...)
	content := "BT /F1 12 Tf 72 700 Td " + encode(line1) + " Tj ET\nBT /F1 12 Tf 72 680 Td " + encode(line2) + " Tj ET\n"
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "ArabicSans", encoding: "Identity-H", ordering: "Identity", toUnicode: tu}, content))
	if st != StatusReady || !strings.Contains(d.Markdown, "سلام عليكم\nتعتبر Python لغة") {
		t.Fatalf("status %s %q:\n%s", st, en, d.Markdown)
	}
}

// On a page that mixes vertical and horizontal writing, each vertical column is a line of its
// own (columns side by side at one height are not one horizontal line), and a column drawn one
// glyph per string, each placed by the vertical advance of the one before (no move between
// them), reads as one line; TJ's numbers in a vertical font tighten or loosen the column, never
// part its words.
func TestPDFVerticalColumnsOnAMixedPage(t *testing.T) {
	a, hi, hon, go_ := hexCodes([]uint16{843}), hexCodes([]uint16{3284}), hexCodes([]uint16{3722}), hexCodes([]uint16{1952})
	content := "BT /F2 10 Tf 72 760 Td (Label line) Tj ET\n" +
		"BT /F1 1 Tf 30 0 0 30 147 610 Tm " + hexCodes([]uint16{843, 3284, 3722, 1952}) + " Tj 3.333 0 Td [" +
		a + " -100 " + hi + " -300 " + hon + " -100 " + go_ + "] TJ 3.333 0 Td " +
		a + " Tj " + hi + " Tj " + hon + " Tj " + go_ + " Tj ET\n"
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "NotoSansCJKjp-Bold", encoding: "Identity-V", ordering: "Japan1"}, content))
	if st != StatusReady {
		t.Fatalf("status %s %q", st, en)
	}
	lines := 0
	for _, l := range strings.Split(d.Markdown, "\n") {
		if strings.Contains(l, "日") {
			if l != "あ日本語" {
				t.Fatalf("column line %q in\n%s", l, d.Markdown)
			}
			lines++
		}
	}
	if lines != 3 {
		t.Fatalf("%d column lines in\n%s", lines, d.Markdown)
	}
}

// Right-to-left words drawn one string at a time in reading order, each to the left of the last
// (a word of Latin letters among them drawn with its space on the wrong side), read as one line
// in logical order, the words apart.
func TestPDFRightToLeftWordsDrawnOneByOne(t *testing.T) {
	tu := map[uint16]string{}
	code := map[string]uint16{}
	next := uint16(1)
	encode := func(s string, reversed bool) string {
		var cs []uint16
		rs := []rune(s)
		if reversed {
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
		}
		for _, r := range rs {
			g := string(r)
			c, ok := code[g]
			if !ok {
				c = next
				next++
				code[g], tu[c] = c, g
			}
			cs = append(cs, c)
		}
		return hexCodes(cs)
	}
	// Logical "تعتبر البرمجة بلغة Python من الأدوات": each word a string, placed right to left
	// (DW 1000: each glyph 12 pt wide at 12 pt), "Python " with its space at its right end.
	words := []struct {
		text string
		x    int
	}{{"الأدوات", 100}, {"من", 200}, {"Python ", 240}, {"بلغة", 340}, {"البرمجة", 400}, {"تعتبر", 500}}
	var b strings.Builder
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		fmt.Fprintf(&b, "BT /F1 12 Tf 1 0 0 1 %d 700 Tm %s Tj ET\n", w.x, encode(w.text, w.text != "Python "))
	}
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "ArabicSans", encoding: "Identity-H", ordering: "Identity", toUnicode: tu}, b.String()))
	if st != StatusReady || !strings.Contains(d.Markdown, "تعتبر البرمجة بلغة Python من الأدوات") {
		t.Fatalf("status %s %q:\n%s", st, en, d.Markdown)
	}
}

// A block of vertical writing under a horizontal heading reads its columns right to left, as
// a page written vertically throughout does, whatever order they were drawn in; the heading
// keeps its place.
func TestPDFVerticalBlockOnAMixedPageReadsRightToLeft(t *testing.T) {
	left, right := hexCodes([]uint16{3722, 1952}), hexCodes([]uint16{843, 3284}) // 本語, あ日
	content := "BT /F2 14 Tf 72 760 Td (Heading) Tj ET\n" +
		"BT /F1 12 Tf 1 0 0 1 300 700 Tm " + left + " Tj 1 0 0 1 320 700 Tm " + right + " Tj ET\n" +
		"BT /F2 10 Tf 72 100 Td (Footer line) Tj ET\n"
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "Ryumin-Light", encoding: "Identity-V", ordering: "Japan1"}, content))
	if st != StatusReady || !strings.Contains(d.Markdown, "Heading\nあ日\n本語\nFooter line") {
		t.Fatalf("status %s %q:\n%s", st, en, d.Markdown)
	}
}

// Letters set far apart down a vertical line (a character spacing of -40 at 24 pt) are words of
// their own, one a line, as they stand on the page; a column with a slight spacing stays one line.
func TestPDFVerticalWideSpacingPartsLetters(t *testing.T) {
	content := "BT /F1 24 Tf -40 Tc 1 0 0 1 100 700 Tm " + hexCodes([]uint16{34, 35, 36, 37, 38}) + " Tj ET\n" +
		"BT /F1 24 Tf -2 Tc 1 0 0 1 60 700 Tm " + hexCodes([]uint16{843, 3284, 3722, 1952}) + " Tj ET\n"
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "Ryumin-Light", encoding: "Identity-V", ordering: "Japan1"}, content))
	if st != StatusReady || !strings.Contains(d.Markdown, "A\nB\nC\nD\nE\nあ日本語") {
		t.Fatalf("status %s %q:\n%s", st, en, d.Markdown)
	}
}

// A right-to-left string that covers the same stretch as one already on its line (a producer
// that draws each line from the same left edge, the lines close together) starts a new line.
func TestPDFRightToLeftOverlappingStringsAreNewLines(t *testing.T) {
	tu := map[uint16]string{1: "ل", 2: "ا", 3: "م", 4: "س", 5: "ع", 6: "ي", 7: "ك"}
	content := "BT /F1 12 Tf 1 0 0 1 100 700 Tm <0004000100030002> Tj ET\n" + // visual "سلما"
		"BT /F1 12 Tf 1 0 0 1 100 694 Tm <00070006000500010005> Tj ET\n"
	d, st, en, _ := convertStatus(t, cjkPDF(cidFont{base: "ArabicSans", encoding: "Identity-H", ordering: "Identity", toUnicode: tu}, content))
	if st != StatusReady || strings.Count(strings.TrimSpace(strings.TrimPrefix(d.Markdown, "<!-- Page 1 -->")), "\n") != 1 {
		t.Fatalf("status %s %q:\n%s", st, en, d.Markdown)
	}
}
