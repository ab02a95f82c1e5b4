package app

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSearch: by name part (any case, Japanese too), by number, by type and by date.
func TestSearch(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := t.TempDir()
	var paths []string
	for i, n := range []string{"請求書_4月.bin", "Invoice-100%.bin", "other.bin"} {
		p := filepath.Join(dir, n)
		os.WriteFile(p, []byte(n+strconv.Itoa(i)), 0o644)
		paths = append(paths, p)
	}
	ctx := context.Background()
	jobs, err := a.Submit(ctx, paths, SubmitOptions{Type: "checksum"})
	if err != nil {
		t.Fatal(err)
	}
	count := func(f SearchFilter) int {
		f.TopLevel = true
		js, err := a.Search(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return len(js)
	}
	for _, c := range []struct {
		f    SearchFilter
		want int
	}{
		{SearchFilter{Text: "請求書"}, 1},
		{SearchFilter{Text: "invoice"}, 1},
		{SearchFilter{Text: "100%"}, 1},
		{SearchFilter{Text: "_"}, 1}, // a literal underscore, not a wildcard
		{SearchFilter{Text: "#" + strconv.FormatInt(jobs[2].ID, 10)}, 1},
		{SearchFilter{ListFilter: ListFilter{Type: "csv"}}, 0},
		{SearchFilter{ListFilter: ListFilter{Type: "checksum"}}, 3},
		{SearchFilter{Since: time.Now().Add(time.Hour)}, 0},
		{SearchFilter{Since: time.Now().Add(-time.Hour), Until: time.Now().Add(time.Hour)}, 3},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%+v: %d jobs, want %d", c.f, got, c.want)
		}
	}
}
