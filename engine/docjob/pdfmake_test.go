package docjob

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// makePDF writes a minimal PDF with one page per content stream (Helvetica, WinAnsi), each
// stream Flate-compressed, with a correct cross-reference table.
func makePDF(t testing.TB, pages ...[]byte) []byte {
	t.Helper()
	var objs []string
	add := func(o string) int { objs = append(objs, o); return len(objs) }
	catalog := add("") // object 1, the root rawPDF names
	pagesObj := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids bytes.Buffer
	for _, content := range pages {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(content)
		zw.Close()
		stream := add(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes()))
		page := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pagesObj, font, stream))
		fmt.Fprintf(&kids, "%d 0 R ", page)
	}
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), len(pages))
	return rawPDF(objs...)
}

// textPage is a content stream showing each line at its own baseline.
func textPage(lines ...string) []byte {
	var b bytes.Buffer
	b.WriteString("BT /F1 12 Tf 72 780 Td 14 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "(%s) Tj T*\n", l)
	}
	b.WriteString("ET\n")
	return b.Bytes()
}

func TestMakePDF(t *testing.T) {
	d, err := convertPDF(t.Context(), makePDF(t, textPage("Hello page one"), textPage("Second page")), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages != 2 || !bytes.Contains([]byte(d.Markdown), []byte("Hello page one")) || !bytes.Contains([]byte(d.Markdown), []byte("Second page")) {
		t.Fatalf("%d pages:\n%s", d.Pages, d.Markdown)
	}
}

// expiringCtx is a context whose Err turns to DeadlineExceeded after a number of calls, so a
// test can end a conversion part-way through a page without any clock.
type expiringCtx struct {
	context.Context
	calls, after int
}

func (c *expiringCtx) Err() error {
	if c.calls++; c.calls > c.after {
		return context.DeadlineExceeded
	}
	return nil
}

// TestPDFStopsInsideAPage: one page of 300,000 show operators; the deadline passes after the
// first few checks, and the converter stops inside the page with the context's error instead of
// reading it to the end.
func TestPDFStopsInsideAPage(t *testing.T) {
	var page bytes.Buffer
	page.WriteString("BT /F1 12 Tf 72 780 Td\n")
	for i := 0; i < 300000; i++ {
		page.WriteString("(A) Tj\n")
	}
	page.WriteString("ET\n")
	data := makePDF(t, page.Bytes())
	d, err := convertPDF(context.Background(), data, Options{NoOCR: true})
	if err != nil || !strings.Contains(d.Markdown, "AAAA") {
		t.Fatalf("without a deadline: %v", err)
	}
	ctx := &expiringCtx{Context: context.Background(), after: 3}
	d, err = convertPDF(ctx, data, Options{NoOCR: true})
	if !errors.Is(err, context.DeadlineExceeded) || d != nil {
		t.Fatalf("err = %v, doc %v", err, d != nil)
	}
	if ctx.calls > 50 {
		t.Fatalf("kept checking the context %d times after it ended", ctx.calls)
	}
}

// A page whose content stream expands to more strings than are read (a compression bomb) keeps
// its first maxPageSpans: the conversion ends partial with a note, memory stays bounded.
func TestPDFPageTooLarge(t *testing.T) {
	var page bytes.Buffer
	page.WriteString("BT /F1 12 Tf 72 780 Td\n")
	for i := 0; i < maxPageSpans+5000; i++ {
		page.WriteString("(A) Tj\n")
	}
	page.WriteString("ET\n")
	d, err := convertPDF(context.Background(), makePDF(t, textPage("First page"), page.Bytes()), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Method != MethodPartial || !strings.Contains(d.Markdown, "First page") || !strings.Contains(d.Markdown, "AAAA") {
		t.Fatalf("method %s, markdown %.80q", d.Method, d.Markdown)
	}
	if n := strings.Count(d.Markdown, "A"); n > maxPageSpans+100 {
		t.Fatalf("%d strings kept from the bomb page", n)
	}
	if st, why, _ := d.status(); st != StatusPartial || len(d.TruncatedPages) != 1 || d.TruncatedPages[0] != 2 || !strings.Contains(why, "more text than is read") {
		t.Fatalf("status %s %q, truncated %v", st, why, d.TruncatedPages)
	}
}

// A cross-reference table whose offsets are all wrong is rebuilt from where the objects really
// are: every page is read. (convertPDF tries it after pdfcpu's repair; the corpus's badxref.pdf
// is a file only this rebuild reads whole.)
func TestPDFRebuiltXref(t *testing.T) {
	data := makePDF(t, textPage("Page one text"), textPage("Page two text"), textPage("Page three text"))
	i := bytes.LastIndex(data, []byte("xref\n"))
	table := data[i:]
	// Every "n" entry points 7 bytes too far.
	broken := regexp.MustCompile(`(\d{10}) 00000 n`).ReplaceAllFunc(table, func(m []byte) []byte {
		n, _ := strconv.Atoi(string(m[:10]))
		return []byte(fmt.Sprintf("%010d 00000 n", n+7))
	})
	data = append(data[:i:i], broken...)
	fixed := rebuildXref(data)
	if fixed == nil {
		t.Fatal("no table rebuilt")
	}
	r, err := newPDFReader(fixed)
	if err != nil {
		t.Fatal(err)
	}
	d, failed, err := extractPDF(context.Background(), r, fixed, Options{NoOCR: true})
	if err != nil || len(failed) > 0 {
		t.Fatalf("%v, failed pages %v", err, failed)
	}
	for _, want := range []string{"Page one text", "Page two text", "Page three text"} {
		if !strings.Contains(d.Markdown, want) {
			t.Fatalf("%q missing; damaged pages %v:\n%s", want, d.DamagedPages, d.Markdown)
		}
	}
	if st, why, _ := d.status(); st != StatusReady {
		t.Fatalf("status %s: %s", st, why)
	}
	if rebuildXref([]byte("%PDF-1.4\nno objects here\n")) != nil {
		t.Fatal("a table was made for a file without objects")
	}
}

// Remembering each character code's text changes nothing in the Markdown of any corpus PDF
// (simple TrueType subsets, CID fonts, vertical text, Kangxi radicals).
func TestPDFCodeMemoSameText(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pdf"))
	if len(files) == 0 {
		t.Fatal("no corpus PDFs")
	}
	defer func() { cacheCodes = true }()
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cacheCodes = true
		a, errA := convertPDF(context.Background(), data, Options{NoOCR: true})
		cacheCodes = false
		b, errB := convertPDF(context.Background(), data, Options{NoOCR: true})
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%s: %v vs %v", f, errA, errB)
		}
		if errA != nil {
			continue
		}
		if a.Markdown != b.Markdown {
			t.Fatalf("%s: the memo changed the text", f)
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("only %d PDFs compared", checked)
	}
}

// FuzzRebuildXref: rebuilding a cross-reference table from any bytes, and reading through it,
// never panics.
func FuzzRebuildXref(f *testing.F) {
	f.Add(makePDF(f, textPage("seed page")))
	f.Add([]byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer << /Root 1 0 R >>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fixed := rebuildXref(data)
		if fixed == nil {
			return
		}
		if r, err := newPDFReader(fixed); err == nil {
			_ = safeCall(func() error {
				_, _, err := extractPDF(context.Background(), r, fixed, Options{NoOCR: true})
				return err
			})
		}
	})
}

// A page tree that contains itself is walked a bounded number of steps: the conversion ends
// instead of looping for ever (the reader's own page lookup never returns on such a tree).
func TestPDFCyclicPageTree(t *testing.T) {
	data := makePDF(t, textPage("The only page"))
	// The page tree's only kid is the tree itself.
	cyclic := regexp.MustCompile(`/Kids \[[^\]]*\]`).ReplaceAll(data, []byte("/Kids [2 0 R]"))
	if bytes.Equal(cyclic, data) {
		t.Fatal("no Kids array to change")
	}
	cyclic = rebuildXref(cyclic) // the objects moved: a table that points at them again
	done := make(chan struct{})
	var d *Doc
	var err error
	go func() {
		defer close(done)
		d, err = convertPDF(context.Background(), cyclic, Options{NoOCR: true})
	}()
	<-done // a hang here is the test failing (go test's -timeout ends it)
	if err == nil && (len(d.DamagedPages) != 1 || strings.Contains(d.Markdown, "The only page")) {
		t.Fatalf("a page was read from a tree without pages: %+v", d)
	}
}

// A cross-reference table or stream that names an object number or size in the billions (a
// damaged file of a few hundred bytes) would make the reader allocate a table that large and
// end the process: the file is read through a table rebuilt from its objects instead.
func TestPDFHugeCrossReferenceNumbers(t *testing.T) {
	base := makePDF(t, textPage("Hello huge xref"))
	xref := bytes.LastIndex(base, []byte("\nxref\n")) + 1
	tail := base[xref:]
	// A second subsection starting at object 4294967296.
	huge := append(bytes.Clone(base[:xref]), bytes.Replace(tail, []byte("trailer"), []byte("4294967296 1\n0000000009 00000 n \ntrailer"), 1)...)
	// A cross-reference stream of /Size 4294967296 instead of the table.
	stream := bytes.Clone(base[:xref])
	at := len(stream)
	stream = fmt.Appendf(stream, "99 0 obj\n<< /Type /XRef /Size 4294967296 /W [1 4 2] /Root 1 0 R /Length 0 >>\nstream\n\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	for name, data := range map[string][]byte{"table": huge, "stream": stream} {
		d, err := convertPDF(t.Context(), data, Options{NoOCR: true})
		if err != nil {
			t.Fatalf("%s: %v (code %q)", name, err, codeOf(err))
		}
		if !strings.Contains(d.Markdown, "Hello huge xref") {
			t.Fatalf("%s: %q", name, d.Markdown)
		}
	}
}

// An object numbered in the billions in a file without a cross-reference table: the repair
// that walks every object number up to it is not run (it took minutes); the file reads through
// a table of the objects found, here a page without text.
func TestPDFObjectNumberInTheBillions(t *testing.T) {
	data := []byte("%PDF-1.7\n1 0 obj <</Type /Catalog /Pages 2 0 R>>\nendobj\n2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>>\nendobj\n" +
		"3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 10 10]>>\nendobj\n\n2147483647 0 obj <</Root 1 0 R>>\nendobj\n")
	if _, err := convertPDF(t.Context(), data, Options{NoOCR: true}); err != nil && codeOf(err) == "" {
		t.Fatalf("uncoded error %v", err)
	}
}
