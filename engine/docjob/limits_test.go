package docjob

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// countPDF is a one-page PDF whose page tree declares count pages.
func countPDF(count string) []byte {
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count "+count+" >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		pdfStream([]byte("BT /F1 12 Tf 72 720 Td (Hello) Tj ET")))
}

// TestPDFHugeDeclaredCount: a small PDF declaring /Count 1000000000 converts its one real page
// with a few MB, instead of sizing a page slice from the count (14.5 GB before).
func TestPDFHugeDeclaredCount(t *testing.T) {
	data := countPDF("1000000000")
	if len(data) > 1024 {
		t.Fatalf("%d bytes", len(data))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Convert(context.Background(), data, "count.pdf", Options{NoOCR: true, Timeout: 20 * time.Second})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages != 1 || !strings.Contains(d.Markdown, "Hello") || d.PageLimit != 0 {
		t.Fatalf("pages %d limit %d:\n%s", d.Pages, d.PageLimit, d.Markdown)
	}
	if mb := float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20); mb > 64 {
		t.Fatalf("allocated %.0f MB for a %d-byte file", mb, len(data))
	}
}

// manyPagesPDF is a PDF of n page objects sharing one font and one content stream.
func manyPagesPDF(n int) []byte {
	objs := make([]string, 0, n+4)
	var kids bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&kids, "%d 0 R ", i+5)
	}
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), n),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		pdfStream([]byte("BT /F1 12 Tf 72 720 Td (Same text on every page) Tj ET")))
	for i := 0; i < n; i++ {
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
	}
	return rawPDF(objs...)
}

// TestPDFPageLimit: a PDF of 200,000 pages reads its first DefaultMaxPages and ends partial
// naming the limit, in seconds rather than holding a worker for its whole deadline; a limit
// given in the job's input applies the same way.
func TestPDFPageLimit(t *testing.T) {
	start := time.Now()
	d, err := Convert(context.Background(), manyPagesPDF(200_000), "many.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	st, why := d.Status()
	if d.Pages != DefaultMaxPages || d.PageLimit != DefaultMaxPages || st != StatusPartial || d.Method != MethodPartial ||
		!strings.Contains(why, "only the first 2000 pages were read") || !strings.Contains(d.ReasonJa(), "上限は 2000 ページ") {
		t.Fatalf("pages %d limit %d status %s %q %q", d.Pages, d.PageLimit, st, why, d.ReasonJa())
	}
	if n := strings.Count(d.Markdown, "<!-- Page "); n != DefaultMaxPages {
		t.Fatalf("%d page sections", n)
	}
	t.Logf("200,000 pages: the first %d read in %v", DefaultMaxPages, took)
	if took > time.Minute {
		t.Fatalf("took %v", took)
	}

	c, _ := newConverter(t)
	dir := t.TempDir()
	p := dir + "/five.pdf"
	writeFile(t, p, manyPagesPDF(5))
	res, err := run(t, c, t.TempDir(), Input{Path: p, MaxPages: 3, NoOCR: true})
	if res.Status != StatusPartial || res.PageCount != 3 || res.PageLimit != 3 || !strings.Contains(res.Reason, "first 3 pages") || err == nil {
		t.Fatalf("%+v %v", res, err)
	}
	// The same file without the limit is another conversion (not the cached partial one).
	res, err = run(t, c, t.TempDir(), Input{Path: p, NoOCR: true})
	if err != nil || res.Status != StatusReady || res.PageCount != 5 || res.Cached {
		t.Fatalf("%+v %v", res, err)
	}
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
