package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bigDOCX builds a Word package whose word/document.xml is about size bytes: paragraphs of
// styled runs, as a long report written by Word is.
func bigDOCX(t testing.TB, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	ct, _ := zw.Create("[Content_Types].xml")
	ct.Write([]byte(`<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`))
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	const head = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
	written, _ := w.Write([]byte(head))
	for i := 0; written < size; i++ {
		n, _ := fmt.Fprintf(w, `<w:p w:rsidR="00A1%04X" w:rsidRDefault="00A1%04X"><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/><w:jc w:val="both"/></w:pPr>`+
			`<w:r><w:rPr><w:rFonts w:ascii="ＭＳ 明朝" w:eastAsia="ＭＳ 明朝" w:hAnsi="ＭＳ 明朝" w:hint="eastAsia"/><w:sz w:val="21"/><w:szCs w:val="21"/></w:rPr><w:t>第%d段落：補助金の申請に必要な書類を確認します。</w:t></w:r>`+
			`<w:r><w:rPr><w:rFonts w:ascii="Century" w:hAnsi="Century"/><w:b/><w:sz w:val="21"/></w:rPr><w:t xml:space="preserve"> Item %d </w:t></w:r></w:p>`, i&0xffff, i&0xffff, i, i)
		written += n
	}
	w.Write([]byte(`<w:sectPr/></w:body></w:document>`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// peakHeap runs f while sampling the heap every millisecond and returns the highest HeapAlloc
// seen, in MB, above what was live before (a lower bound of the true peak, deterministic
// enough to hold a generous limit).
func peakHeap(f func()) float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	if p := peak.Load(); p > base {
		return float64(p-base) / (1 << 20)
	}
	return 0
}

// TestDOCXLargeDocumentMemory: a DOCX whose document.xml is 60 MB converts with the heap under
// 500 MB (the body is read as a stream of blocks, not built into one tree first).
func TestDOCXLargeDocumentMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 60 MB document.xml")
	}
	data := bigDOCX(t, 60<<20)
	var d *Doc
	var err error
	mb := peakHeap(func() { d, err = Convert(context.Background(), data, "big.docx", Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "第0段落：補助金の申請に必要な書類を確認します。 Item 0") || !strings.Contains(d.Markdown, "第100000段落") {
		t.Fatalf("markdown starts %.200q", d.Markdown)
	}
	t.Logf("60 MB document.xml (%d bytes zipped): peak heap %.0f MB, %d characters of Markdown", len(data), mb, len(d.Markdown))
	if mb > 500 {
		t.Fatalf("peak heap %.0f MB, want < 500 MB", mb)
	}
}

// BenchmarkDOCXLarge converts the 60 MB document.xml DOCX and reports its peak heap.
func BenchmarkDOCXLarge(b *testing.B) {
	data := bigDOCX(b, 60<<20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	peak := 0.0
	for i := 0; i < b.N; i++ {
		mb := peakHeap(func() {
			if _, err := Convert(context.Background(), data, "big.docx", Options{}); err != nil {
				b.Fatal(err)
			}
		})
		peak = max(peak, mb)
	}
	b.ReportMetric(peak, "peak-heap-MB")
}
