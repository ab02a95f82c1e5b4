package docjob

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// writeXML writes head, then rec(0), rec(1), … while they fit, then tail to path: a document
// just under size bytes.
func writeXML(tb testing.TB, path string, size int, head, tail string, rec func(i int) string) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	written, _ := w.WriteString(head)
	for i := 0; ; i++ {
		r := rec(i)
		if written+len(r)+len(tail) > size {
			break
		}
		n, _ := w.WriteString(r)
		written += n
	}
	w.WriteString(tail)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// bigXML writes an XML document of records just under size bytes to path: attributes, Japanese
// text and numbers, as an export from an accounting system is.
func bigXML(tb testing.TB, path string, size int) {
	writeXML(tb, path, size, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records>\n", "</records>\n", func(i int) string {
		return fmt.Sprintf("<record id=\"%d\" type=\"invoice\"><name>利用者%05d</name><amount currency=\"JPY\">%d</amount><note>補助金の申請に必要な書類 item %d</note></record>\n",
			i, i%50000, i*37%100000, i)
	})
}

// bigDeepXML writes an XML document just under size bytes whose elements nest ten deep around
// short values: indenting it makes Markdown over three times its size.
func bigDeepXML(tb testing.TB, path string, size int) {
	writeXML(tb, path, size, "<?xml version=\"1.0\"?>\n<r>", "</r>\n", func(i int) string {
		return fmt.Sprintf(`<a><b><c><d><e><f><g><h k="%d">値</h><h/></g></f></e></d></c></b></a>`, i)
	})
}

// BenchmarkXMLLarge converts 49.9 MB XML files (records with attributes and Japanese text; ten
// levels of nesting around short values) through the conversion handler (read, convert, write
// the Markdown) and reports the process's peak resident set and the peak heap.
func BenchmarkXMLLarge(b *testing.B) {
	for _, shape := range []struct {
		name string
		gen  func(testing.TB, string, int)
	}{{"records", bigXML}, {"deep", bigDeepXML}} {
		b.Run(shape.name, func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "big.xml")
			shape.gen(b, path, int(MaxFileSize)-100_000)
			c := NewConverter(nil, blob.Local{})
			raw, _ := json.Marshal(Input{Path: path, Force: true})
			ctx := job.WithInfo(context.Background(), job.Info{ID: 7, Output: filepath.Join(dir, "data")})
			st, _ := os.Stat(path)
			b.SetBytes(st.Size())
			runtime.GC()
			resetPeakRSS()
			b.ResetTimer()
			peak := 0.0
			for i := 0; i < b.N; i++ {
				mb := peakHeap(func() {
					out, err := c.Handle(ctx, raw, job.Discard)
					if err != nil {
						b.Fatal(err)
					}
					var res Result
					if err := json.Unmarshal(out, &res); err != nil || res.Status != StatusReady || res.Kind != KindXML {
						b.Fatalf("%s %v", out, err)
					}
				})
				peak = max(peak, mb)
			}
			b.StopTimer()
			b.ReportMetric(peak, "peak-heap-MB")
			if mb := peakRSSMB(); mb > 0 {
				b.ReportMetric(mb, "peak-RSS-MB")
			}
		})
	}
}

// Text between an element's children (mixed content, CDATA included) is kept on a line of its
// own, in document order; it used to be dropped when a later sibling element started.
func TestXMLMixedContentKept(t *testing.T) {
	x := `<?xml version="1.0"?><root><!-- 表紙 --><項目>一</項目>間の文<empty/><![CDATA[生の <cdata> ` + "```" + `]]><deep><deeper k="v">最後</deeper><!-- 注 -->後書き</deep></root>`
	d := convertOK(t, []byte(x), "mixed.xml")
	want := "<root>\n  <!-- 表紙 -->\n  <項目>一</項目>\n  間の文\n  <empty></empty>\n  生の &lt;cdata&gt; ```\n  <deep>\n    <deeper k=\"v\">最後</deeper>\n    <!-- 注 -->\n    後書き\n  </deep>\n</root>\n````"
	if !strings.HasPrefix(d.Markdown, "````xml\n") || !strings.Contains(d.Markdown, want) {
		t.Fatalf("got\n%s", d.Markdown)
	}
}

// TestXMLLargeMemory: a 49.9 MB XML file converts with the heap under 150 MB above the input
// (the output built in one buffer of about its size, the decoder's garbage collected as it
// goes); it peaked at about 200 MB above it.
func TestXMLLargeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 50 MB XML file")
	}
	path := filepath.Join(t.TempDir(), "big.xml")
	bigXML(t, path, int(MaxFileSize)-100_000)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d *Doc
	mb := peakHeap(func() { d, err = Convert(context.Background(), data, "big.xml", Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "  <record id=\"0\" type=\"invoice\">\n    <name>利用者00000</name>") || !strings.HasSuffix(d.Markdown, "</records>\n```\n") {
		t.Fatalf("markdown starts %.300q", d.Markdown)
	}
	t.Logf("%d bytes of XML: peak heap %.0f MB above the input, %d bytes of Markdown", len(data), mb, len(d.Markdown))
	if mb > 150 {
		t.Fatalf("peak heap %.0f MB, want < 150 MB", mb)
	}
}
