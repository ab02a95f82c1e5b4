package ui

import (
	"context"
	"testing"

	"fyne.io/fyne/v2/test"

	"jobdesk/engine/job"
)

// BenchmarkJobList puts 5,000 jobs in the list and scrolls from top to bottom in steps of 250
// rows, as a person dragging the scrollbar would: the virtualized list binds only visible rows.
func BenchmarkJobList(b *testing.B) {
	h := newHarness(b, LangJa)
	enqueueMany(b, h.app, 5000)
	rows, err := h.app.List(context.Background(), listFilter("", 5000, 0))
	if err != nil || len(rows) != 5000 {
		b.Fatalf("%d rows, %v", len(rows), err)
	}
	u := h.ui
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u.model.replace(append([]job.Job(nil), rows...), false)
		u.refreshList()
		for off := 0; off < len(rows); off += 250 {
			u.list.ScrollTo(off)
		}
		u.list.ScrollToTop()
	}
}

// BenchmarkWindow builds the whole window (header, drop zone, filters, list, detail pane).
func BenchmarkWindow(b *testing.B) {
	h := newHarness(b, LangJa)
	fa := test.NewTempApp(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := New(fa, h.app)
		u.Window.Close()
	}
}

// BenchmarkApplyProgress applies one flush's worth of progress for 5,000 running jobs to a
// fully loaded list and redraws the visible rows: the cost the UI pays ten times a second in
// the worst case.
func BenchmarkApplyProgress(b *testing.B) {
	h := newHarness(b, LangJa)
	u := h.ui
	rows := make([]job.Job, 5000)
	up := update{progress: make([]job.Event, 5000)}
	for i := range rows {
		rows[i] = job.Job{ID: int64(5000 - i), Type: "checksum", Name: "file.pdf", Status: job.Running}
		up.progress[i] = job.Event{JobID: rows[i].ID, Kind: job.EventProgress, Status: job.Running, Message: "working"}
	}
	u.model.replace(rows, false)
	u.refreshList()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range up.progress {
			up.progress[k].Progress = float64(i % 100)
		}
		u.apply(up)
	}
}
