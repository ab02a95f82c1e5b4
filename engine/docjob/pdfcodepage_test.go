package docjob

import (
	"fmt"
	"strings"
	"testing"
)

// codePagePDF is a page in a simple TrueType font named 宋体 (its name written as GBK bytes, as
// Chinese producers write it), WinAnsiEncoding, no ToUnicode and no program embedded, showing
// each of shows at its own place on one line, 15 points apart.
func codePagePDF(shows ...string) []byte {
	widths := strings.TrimSpace(strings.Repeat("458 ", 224))
	var c strings.Builder
	for i, s := range shows {
		fmt.Fprintf(&c, "BT /F1 12 Tf 1 0 0 1 %d 700 Tm <%s> Tj ET\n", 72+15*i, s)
	}
	desc := "<< /Type /FontDescriptor /FontName /#CB#CE#CC#E5 /Flags 6 /FontBBox [-129 -7 788 917] /ItalicAngle 0 /Ascent 788 /Descent -129 /CapHeight 458 /StemV 1 >>"
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 6 0 R >>",
		"<< /Type /Font /Subtype /TrueType /BaseFont /#CB#CE#CC#E5 /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 255 /Widths ["+widths+"] /FontDescriptor 5 0 R >>",
		desc,
		pdfStream([]byte(c.String())))
}

// The slogan 全世界无产者，联合起来 in GBK, each character followed by a space that the next
// character is drawn over.
var gbkSlogan = []string{"C8AB20", "CAC020", "BDE720", "CEDE20", "B2FA20", "D5DF20", "A3AC20", "C1AA20", "BACF20", "C6F020", "C0B420"}

// TestPDFCodePageFont: a Chinese font that is not embedded and has no ToUnicode, its strings
// GBK text (not the single-byte codes WinAnsiEncoding says), reads as Chinese, without the
// spaces drawn over by the next character, and the document is ready; its ASCII text reads as
// it is. Before, the page read as Latin-1 soup (È«ÊÀ½ç…) and was called a success.
func TestPDFCodePageFont(t *testing.T) {
	d, st, _, _ := convertStatus(t, codePagePDF(gbkSlogan...))
	if !strings.Contains(d.Markdown, "全世界无产者，联合起来") || st != StatusReady {
		t.Errorf("status %s:\n%s", st, d.Markdown)
	}
	d, st, _, _ = convertStatus(t, codePagePDF("48656C6C6F", "32303236"))
	if !strings.Contains(d.Markdown, "Hello") || !strings.Contains(d.Markdown, "2026") || st != StatusReady {
		t.Errorf("ASCII in the font: status %s:\n%s", st, d.Markdown)
	}
	// A Latin name with accented letters in the font reads as WinAnsiEncoding says, though
	// its bytes would pass for GBK; a year with its 年 in GBK reads as Chinese.
	d, st, _, _ = convertStatus(t, codePagePDF("50E972657A204DFC6C6C6572"))
	if !strings.Contains(d.Markdown, "Pérez Müller") || st != StatusReady {
		t.Errorf("accented Latin in the font: status %s:\n%s", st, d.Markdown)
	}
	d, st, _, _ = convertStatus(t, codePagePDF("32303236C4EA"))
	if !strings.Contains(d.Markdown, "2026年") || st != StatusReady {
		t.Errorf("a year in the font: status %s:\n%s", st, d.Markdown)
	}
}
