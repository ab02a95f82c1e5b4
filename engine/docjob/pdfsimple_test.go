package docjob

import (
	"fmt"
	"strings"
	"testing"
)

// cffIndexBytes writes a CFF INDEX of items (offsets of one byte; items are short).
func cffIndexBytes(items ...string) []byte {
	if len(items) == 0 {
		return []byte{0, 0}
	}
	b := []byte{0, byte(len(items)), 1, 1}
	off := 1
	for _, it := range items {
		off += len(it)
		b = append(b, byte(off))
	}
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

// nameKeyedCFF is a name-keyed CFF program (Type 1C) whose glyph g (from 1) is named names[g-1]
// (a standard string by its number, else a string of its own) and drawn by the code codes[g-1]
// of its built-in encoding (format 0; its charset format 0).
func nameKeyedCFF(names []string, codes []byte) []byte {
	sid := map[string]int{}
	for i, s := range cffStandardStrings {
		sid[s] = i
	}
	var custom []string
	var sids []int
	for _, n := range names {
		s, ok := sid[n]
		if !ok {
			s = len(cffStandardStrings) + len(custom)
			custom = append(custom, n)
		}
		sids = append(sids, s)
	}
	head := []byte{1, 0, 4, 1}
	nameIdx := cffIndexBytes("Test")
	strIdx := cffIndexBytes(custom...)
	gsubrs := cffIndexBytes()
	const topLen = 2 + 1 + 2 + 18
	charset := len(head) + len(nameIdx) + topLen + len(strIdx) + len(gsubrs)
	cs := []byte{0}
	for _, s := range sids {
		cs = append(cs, byte(s>>8), byte(s))
	}
	encoding := charset + len(cs)
	enc := append([]byte{0, byte(len(codes))}, codes...)
	charStrings := encoding + len(enc)
	glyphs := make([]string, len(names)+1)
	for i := range glyphs {
		glyphs[i] = "\x0e" // endchar
	}
	i32 := func(v int) []byte { return []byte{29, byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	var dict []byte
	dict = append(append(dict, i32(charset)...), 15)
	dict = append(append(dict, i32(encoding)...), 16)
	dict = append(append(dict, i32(charStrings)...), 17)
	top := cffIndexBytes(string(dict))
	out := append(append(append(append(head, nameIdx...), top...), strIdx...), gsubrs...)
	out = append(append(append(out, cs...), enc...), cffIndexBytes(glyphs...)...)
	return out
}

// simpleFontPDF is a one-page PDF whose font F1 is a simple font of the given Subtype with the
// font dictionary entries extra, its program prog embedded under key (FontFile3 of subtype
// Type1C, or FontFile), showing the string codes; font F2 is Helvetica.
func simpleFontPDF(subtype, extra, key string, prog []byte, codes string) []byte {
	sub := ""
	if key == "FontFile3" {
		sub = " /Subtype /Type1C"
	}
	return rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R /F2 7 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /"+subtype+" /BaseFont /ABCDEF+SubsetSans"+extra+" /FontDescriptor 6 0 R >>",
		pdfStream([]byte("BT /F2 12 Tf 72 760 Td (An English line) Tj ET\nBT /F1 12 Tf 72 700 Td "+codes+" Tj ET\n")),
		"<< /Type /FontDescriptor /FontName /ABCDEF+SubsetSans /Flags 32 /FontBBox [0 -200 1000 900] /ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 /"+key+" 8 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d%s >>\nstream\n%s\nendstream", len(prog), sub, prog),
	)
}

// A subset Type 1C font without ToUnicode or Encoding, whose program numbers its glyphs from
// code 1 (its built-in encoding), reads through the program: each code's glyph, named by the
// charset (standard strings and strings of its own, uniXXXX and ligatures), gives the text.
func TestPDFType1CBuiltinEncoding(t *testing.T) {
	names := []string{"R", "e", "p", "o", "r", "t", "space", "f", "i", "quoteright", "s", "uni00E9", "f_f", "endash"}
	codes := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	prog := nameKeyedCFF(names, codes)
	d, st, en, _ := convertStatus(t, simpleFontPDF("Type1", "", "FontFile3", prog, "<0102030405060708090A0B070C0D0E>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "Report fi’s éff–") {
		t.Fatalf("%s %q\n%s", st, en, d.Markdown)
	}
	// Differences over the built-in encoding: code 1 is now the glyph named "P".
	d, st, en, _ = convertStatus(t, simpleFontPDF("Type1", " /Encoding << /Type /Encoding /Differences [1 /P] >>", "FontFile3", prog, "<0102030405060708090A0B>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "Peport fi’s") {
		t.Fatalf("Differences: %s %q\n%s", st, en, d.Markdown)
	}
}

// A Type 1 program's own encoding (dup CODE /name put in its clear-text part) gives the
// glyph names of a font without Encoding.
func TestPDFType1BuiltinEncoding(t *testing.T) {
	prog := "%!PS-AdobeFont-1.0: SubsetSans\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\n" +
		"dup 1 /O put\ndup 2 /k put\ndup 3 /period put\nreadonly def\ncurrentdict end\ncurrentfile eexec\n"
	d, st, en, _ := convertStatus(t, simpleFontPDF("Type1", "", "FontFile", []byte(prog), "<010203>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "Ok.") {
		t.Fatalf("%s %q\n%s", st, en, d.Markdown)
	}
}

// Glyph names no table knows (a converter's g115, g3 …) give no text: the font's codes are
// not decoded, and the conversion is partial naming it, the readable line kept.
func TestPDFType1CUnknownGlyphNamesIsPartial(t *testing.T) {
	prog := nameKeyedCFF([]string{"g115", "g3", "g40", "g81"}, []byte{1, 2, 3, 4})
	d, st, en, ja := convertStatus(t, simpleFontPDF("Type1", "", "FontFile3", prog, "<01020304010203040102>"))
	if st != StatusPartial || !strings.Contains(en, "SubsetSans") || !strings.Contains(ja, "SubsetSans") {
		t.Fatalf("%s %q\n%s", st, en, d.Markdown)
	}
	if !strings.Contains(d.Markdown, "An English line") {
		t.Fatalf("%s", d.Markdown)
	}
}

// A simple font with Differences and a ToUnicode map reads through the ToUnicode map (the
// reader's own decoding looks only at the Differences, whose names may say nothing).
func TestPDFSimpleFontToUnicodeOverDifferences(t *testing.T) {
	tu := pdfStream([]byte("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n1 begincodespacerange\n<00> <FF>\nendcodespacerange\n" +
		"2 beginbfchar\n<01> <2019>\n<02> <0074>\nendbfchar\nendcmap\nend\nend\n"))
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /TrueType /BaseFont /ABCDEF+Calibri /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [1 /g1201 /g87] >> /ToUnicode 6 0 R >>",
		pdfStream([]byte("BT /F1 12 Tf 72 700 Td (Don\\001\\002 know) Tj ET\n")),
		tu,
	)
	d, st, en, _ := convertStatus(t, data)
	if st != StatusReady || !strings.Contains(d.Markdown, "Don’t know") {
		t.Fatalf("%s %q\n%s", st, en, d.Markdown)
	}
}

// Damaged font programs and CMaps never panic or hang: the built-in encoding of a Type 1C or
// Type 1 program and an embedded CMap are read from any bytes.
func FuzzFontPrograms(f *testing.F) {
	f.Add(nameKeyedCFF([]string{"R", "e", "uni00E9", "g115"}, []byte{1, 2, 3, 4}))
	f.Add([]byte("/Encoding 256 array\ndup 1 /O put\nreadonly def\ncurrentfile eexec"))
	f.Add([]byte(cmapBody("Japan1", "1 begincodespacerange\n<00> <ff>\nendcodespacerange\n1 begincidrange\n<20> <7e> 1\nendcidrange\n/H usecmap\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		names := cffEncodingNames(data)
		for _, n := range names {
			glyphNameText(n)
		}
		type1EncodingNames(data)
		if m, _ := parseEmbeddedCMap(data, loadCMap("H")); m != nil {
			for c := uint32(0); c < 512; c++ {
				m.cid(1+int(c%2), c*131)
				m.codeLen(string([]byte{byte(c), byte(c >> 1), 3}))
			}
		}
	})
}
