package docjob

import (
	"fmt"
	"strings"
	"testing"
)

// embeddedCMapPDF is a one-page PDF whose font F1 is a composite font (descendant Ordering
// ordering, no ToUnicode, no program) with the embedded CMap cmap (its stream dictionary
// entries extra), showing the string codes.
func embeddedCMapPDF(cmap, extra, ordering, codes string) []byte {
	return rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+MTOc3m-Custom /Encoding 7 0 R /DescendantFonts [6 0 R] >>",
		pdfStream([]byte("BT /F1 12 Tf 72 700 Td "+codes+" Tj ET\n")),
		fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /ABCDEF+MTOc3m-Custom /CIDSystemInfo << /Registry (Adobe) /Ordering (%s) /Supplement 6 >> /DW 1000 >>", ordering),
		fmt.Sprintf("<< /Type /CMap /CMapName /Custom%s /Length %d >>\nstream\n%s\nendstream", extra, len(cmap), cmap),
	)
}

// cmapBody is an embedded CMap of the collection ordering with the given sections.
func cmapBody(ordering, sections string) string {
	return "%!PS-Adobe-3.0 Resource-CMap\n/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo 3 dict dup begin\n/Registry (Adobe) def\n/Ordering (" + ordering + ") def\n/Supplement 6 def\nend def\n" +
		"/CMapName /Custom def\n/WMode 0 def\n" + sections +
		"endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
}

// A composite font whose encoding is an embedded CMap stream (no ToUnicode) reads code → CID
// through the stream's cidrange and cidchar entries and CID → text through its collection;
// with usecmap, the codes the stream does not map go through the predefined CMap it names.
func TestPDFEmbeddedCMapStream(t *testing.T) {
	own := cmapBody("Japan1", "2 begincodespacerange\n<00> <7f>\n<8140> <9ffc>\nendcodespacerange\n"+
		"1 begincidrange\n<20> <7e> 1\nendcidrange\n"+
		"4 begincidchar\n<8140> 843\n<8141> 3284\n<8142> 3722\n<8143> 1952\nendcidchar\n")
	d, st, en, _ := convertStatus(t, embeddedCMapPDF(own, "", "Japan1", "<4A6F62204465736B2081408141814281432031>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "Job Desk あ日本語 1") {
		t.Fatalf("own ranges: %s %q\n%s", st, en, d.Markdown)
	}
	// Ranges that overlap: the one written later wins (0x8141 is 日, not the first range's).
	over := cmapBody("Japan1", "1 begincodespacerange\n<8140> <9ffc>\nendcodespacerange\n"+
		"2 begincidrange\n<8140> <8143> 843\n<8141> <8141> 3284\nendcidrange\n")
	d, st, en, _ = convertStatus(t, embeddedCMapPDF(over, "", "Japan1", "<81408141>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "あ日") {
		t.Fatalf("overlapping ranges: %s %q\n%s", st, en, d.Markdown)
	}
	// 90ms-RKSJ-H gives 日本語 (93FA 967B 8CEA); the stream maps only 0x8140 (to あ).
	uses := cmapBody("Japan1", "/90ms-RKSJ-H usecmap\n1 begincidchar\n<8140> 843\nendcidchar\n")
	d, st, en, _ = convertStatus(t, embeddedCMapPDF(uses, "", "Identity", "<814093FA967B8CEA>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "あ日本語") {
		t.Fatalf("usecmap: %s %q\n%s", st, en, d.Markdown)
	}
	// The same through the dictionary's UseCMap entry.
	d, st, en, _ = convertStatus(t, embeddedCMapPDF(cmapBody("Japan1", "1 begincidchar\n<8140> 843\nendcidchar\n"), " /UseCMap /90ms-RKSJ-H", "Japan1", "<93FA967B8CEA8140>"))
	if st != StatusReady || !strings.Contains(d.Markdown, "日本語あ") {
		t.Fatalf("UseCMap: %s %q\n%s", st, en, d.Markdown)
	}
}

// An embedded CMap into a collection JobDesk has no table for (Identity), with no program and
// no ToUnicode: the text cannot be decoded, and the conversion is partial naming the font.
func TestPDFEmbeddedCMapIdentityIsPartial(t *testing.T) {
	cm := cmapBody("Identity", "1 begincodespacerange\n<0000> <ffff>\nendcodespacerange\n1 begincidrange\n<0000> <ffff> 0\nendcidrange\n")
	d, st, en, ja := convertStatus(t, embeddedCMapPDF(cm, "", "Identity", "<0201034104520563>"))
	if st != StatusPartial || !strings.Contains(en, "MTOc3m-Custom") || !strings.Contains(ja, "MTOc3m-Custom") {
		t.Fatalf("status %s: %q\n%s", st, en, d.Markdown)
	}
}
