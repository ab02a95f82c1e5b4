package ui

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"jobdesk/engine/job"
	"jobdesk/ui/bridge"
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
	up := bridge.Update{Progress: make([]job.Event, 5000)}
	for i := range rows {
		rows[i] = job.Job{ID: int64(5000 - i), Type: "checksum", Name: "file.pdf", Status: job.Running}
		up.Progress[i] = job.Event{JobID: rows[i].ID, Kind: job.EventProgress, Status: job.Running, Message: "working"}
	}
	u.model.replace(rows, false)
	u.refreshList()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range up.Progress {
			up.Progress[k].Progress = float64(i % 100)
		}
		u.apply(up)
	}
}

// BenchmarkEventToWidget measures an engine event's way to the window: a job cancelled in the
// engine (a status change, committed and published) until its row in the list shows it, through
// the event loop's flush (every bridge.FlushEvery) and the UI goroutine. Reported as ms/update; the
// target is at most 100 ms.
func BenchmarkEventToWidget(b *testing.B) {
	h := newHarness(b, LangJa)
	u := h.ui
	enqueueMany(b, h.app, b.N+1)
	u.Start()
	h.waitFor("the first page", func() bool { return len(u.model.rows) > 0 })
	var total time.Duration
	var worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := u.model.rows[min(i, len(u.model.rows)-1)].ID
		// Events come at any moment, not just after a flush: start at a random point of the
		// flush period.
		time.Sleep(time.Duration(rand.IntN(int(bridge.FlushEvery))))
		start := time.Now()
		if err := h.app.Cancel(context.Background(), id); err != nil {
			b.Fatal(err)
		}
		h.waitFor("the row to change", func() bool {
			k, ok := u.model.index[id]
			return ok && u.model.rows[k].Status == job.Cancelled
		})
		d := time.Since(start)
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/update")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
}

// BenchmarkScroll10k scrolls a list of 10,000 jobs from top to bottom one screen at a time and
// reports the time of one step (binding the rows that come into view): under 16.7 ms means no
// frame is dropped at 60 frames a second.
func BenchmarkScroll10k(b *testing.B) {
	h := newHarness(b, LangJa)
	enqueueMany(b, h.app, 10000)
	rows, err := h.app.List(context.Background(), listFilter("", 10000, 0))
	if err != nil || len(rows) != 10000 {
		b.Fatalf("%d rows, %v", len(rows), err)
	}
	u := h.ui
	u.model.replace(rows, false)
	u.refreshList()
	steps := 0
	var worst time.Duration
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(rows); off += 10 { // about one screen of rows
			t := time.Now()
			u.list.ScrollTo(off)
			worst = max(worst, time.Since(t))
			steps++
		}
		u.list.ScrollToTop()
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(steps)/1000, "ms/step")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst-step")
}
