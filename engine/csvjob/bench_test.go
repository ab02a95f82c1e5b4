package csvjob

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/cputime"
	"jobdesk/engine/csvjob/csvtest"
)

// validateAggregate is CSV_VALIDATION plus CSV_CHUNK_PROCESSING of every chunk in parallel plus
// the per-user merge, all in memory (no table write, no result files).
func validateAggregate(b *testing.B, path, work string) *merged {
	ctx := context.Background()
	o := Options{}
	bs := blob.Local{}
	v, err := Validate(ctx, bs, path, work, o)
	if err != nil {
		b.Fatal(err)
	}
	jc := &jobContext{Validation: *v, Chunks: v.Chunks, Options: o}
	pl, err := newPlan(jc)
	if err != nil {
		b.Fatal(err)
	}
	parts := make(map[int]*partial, len(v.Chunks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, c := range v.Chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func(c Chunk) {
			defer func() { <-sem; wg.Done() }()
			p, err := processChunk(ctx, bs, jc, pl, c, false)
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			parts[c.Index] = p
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	return mergeStaged(jc, pl, parts)
}

// BenchmarkValidateAggregate: the 1M-row file in UTF-8 and Shift_JIS (targets: ≤ 100 ms,
// ≥ 10M rows/s, Shift_JIS as fast as UTF-8).
func BenchmarkValidateAggregate(b *testing.B) {
	for _, enc := range []string{EncUTF8, EncCP932} {
		b.Run(enc, func(b *testing.B) {
			path := csvtest.BenchFile(b, enc)
			work := b.TempDir()
			st, _ := os.Stat(path)
			b.SetBytes(st.Size())
			b.ResetTimer()
			cpu0 := cputime.Process()
			for i := 0; i < b.N; i++ {
				m := validateAggregate(b, path, work)
				if m.rows != csvtest.BenchRows || m.failed != 0 || m.users.n() != csvtest.BenchUsers {
					b.Fatalf("rows %d failed %d users %d", m.rows, m.failed, m.users.n())
				}
			}
			b.ReportMetric(float64(csvtest.BenchRows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkSQLiteImport: Debian's sqlite3 `.import` of the same UTF-8 file into a new database,
// for comparison (it only loads rows: no validation, no per-user combining).
func BenchmarkSQLiteImport(b *testing.B) {
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("sqlite3 is not installed (Debian package sqlite3)")
	}
	path := csvtest.BenchFile(b, EncUTF8)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := filepath.Join(b.TempDir(), "import.db")
		b.StartTimer()
		out, err := exec.Command(bin, db, "-cmd", ".mode csv", ".import "+path+" users").CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
