package docjob

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"jobdesk/engine/cputime"
)

var benchOnce sync.Once
var benchDir string

// benchPDFs generates the 24- and 240-page Japanese PDFs with testdata/gen.sh (LibreOffice)
// into a cache folder once; the files are never committed.
func benchPDFs(b *testing.B) string {
	benchOnce.Do(func() {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		benchDir = filepath.Join(base, "jobdesk-bench", Version)
		if _, err := os.Stat(filepath.Join(benchDir, "bench240.pdf")); err == nil {
			return
		}
		if _, err := exec.LookPath("soffice"); err != nil {
			benchDir = ""
			return
		}
		if out, err := exec.Command("bash", "testdata/gen.sh", "bench", benchDir).CombinedOutput(); err != nil {
			b.Logf("gen.sh bench: %v\n%s", err, out)
			benchDir = ""
		}
	})
	if benchDir == "" {
		b.Skip("LibreOffice (libreoffice-writer-nogui) is not installed: cannot generate the benchmark PDFs")
	}
	return benchDir
}

// BenchmarkPDF converts the 24- and 240-page PDFs and, in the same run, times poppler's
// pdftotext on the same files for comparison.
func BenchmarkPDF(b *testing.B) {
	dir := benchPDFs(b)
	for _, pages := range []int{24, 240} {
		path := filepath.Join(dir, fmt.Sprintf("bench%d.pdf", pages))
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("docjob/%dpages", pages), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			runtime.GC()
			resetPeakRSS()
			for i := 0; i < b.N; i++ {
				d, err := Convert(context.Background(), data, "bench.pdf", Options{NoOCR: true})
				if err != nil || d.Pages != pages {
					b.Fatalf("%v pages %d", err, d.Pages)
				}
			}
			if mb := peakRSSMB(); mb > 0 {
				b.ReportMetric(mb, "peak-RSS-MB")
			}
		})
		b.Run(fmt.Sprintf("pdftotext/%dpages", pages), func(b *testing.B) {
			if _, err := exec.LookPath("pdftotext"); err != nil {
				b.Skip("pdftotext (poppler-utils) is not installed")
			}
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if err := exec.Command("pdftotext", "-enc", "UTF-8", path, os.DevNull).Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkXLSX100k converts a generated 100,000-row workbook (dates, currency, text) and
// reports the CPU time per conversion beside the wall time.
func BenchmarkXLSX100k(b *testing.B) {
	data := streamedWorkbook(b, 100001, func(r int) string { return fmt.Sprintf("利用者%05d", r%50000) }, nil)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		d, err := Convert(context.Background(), data, "big.xlsx", Options{})
		if err != nil || d.Rows != 100001 {
			b.Fatalf("%v rows %d", err, d.Rows)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// streamedWorkbook is an XLSX file written by excelize's stream writer: the header 番号, 日付,
// 氏名, 金額 and rows 2 to last of a number, a date, name(r) and an amount in yen, then the
// cells extra(r) gives (when not nil).
func streamedWorkbook(tb testing.TB, last int, name func(r int) string, extra func(r int) []any) []byte {
	f := excelize.NewFile()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		tb.Fatal(err)
	}
	dateStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
	yen, _ := f.NewStyle(&excelize.Style{NumFmt: 164, CustomNumFmt: ptr(`"￥"#,##0`)})
	sw.SetRow("A1", []any{"番号", "日付", "氏名", "金額"})
	day := time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)
	for r := 2; r <= last; r++ {
		cell, _ := excelize.CoordinatesToCellName(1, r)
		row := []any{r - 1, excelize.Cell{StyleID: dateStyle, Value: day.AddDate(0, 0, r%365)}, name(r), excelize.Cell{StyleID: yen, Value: r * 37 % 100000}}
		if extra != nil {
			row = append(row, extra(r)...)
		}
		sw.SetRow(cell, row)
	}
	if err := sw.Flush(); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func ptr[T any](v T) *T { return &v }

// resetPeakRSS resets the process's peak resident set size (Linux: writing 5 to clear_refs), so
// peakRSSMB measures one benchmark; elsewhere it does nothing.
func resetPeakRSS() {
	if runtime.GOOS == "linux" {
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	}
}

// peakRSSMB returns the process's peak resident set size in MiB since the last reset (VmHWM),
// or 0 where it cannot be read. It covers the whole test binary, so it is an upper bound.
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
