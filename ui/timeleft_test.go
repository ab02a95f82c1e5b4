package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"jobdesk/app"
	"jobdesk/engine/job"
	"jobdesk/ui/bridge"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 28, 9, 0, 0, 0, time.Local)} }

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// pageProgress and pageMessage are what a scanned PDF's OCR reports after done of total pages.
func pageProgress(done, total int) float64 { return 10 + 89*float64(done)/float64(total) }

func pageMessage(done, total int) string { return fmt.Sprintf("OCR: page %d of %d", done, total) }

// estimateOf is job id's estimate, "" when there is none.
func estimateOf(e *timeLeft, id int64) string {
	if d, ok := e.estimate(id); ok {
		return d.String()
	}
	return ""
}

// textOf is job id's time left as the window says it in lang.
func textOf(e *timeLeft, lang string, id int64) string { return e.text(newTranslator(lang), id) }

// TestTimeLeftEstimate: the estimate appears only after several rises over several seconds,
// measured from the first rise (not from a standstill before it),
// follows the pace of the latest rises and counts down between them; it goes when the job
// stands still for longer than its pace explains or when its time ran out without it ending,
// and after progress went backwards it waits for new rises before it says anything again.
func TestTimeLeftEstimate(t *testing.T) {
	clock := newFakeClock()
	e := newTimeLeft(clock.now)
	const id = 7
	// A 12-page scan: 1 % for the 30 s its pages take to be read, then OCR from 10 %, one page
	// every 10 s.
	e.observe(id, 1)
	clock.advance(30 * time.Second)
	e.observe(id, 1)
	for page := 1; page <= 3; page++ {
		clock.advance(10 * time.Second)
		e.observe(id, pageProgress(page, 12))
		if s := estimateOf(e, id); s != "" {
			t.Fatalf("after page %d an estimate of %s; too early to say", page, s)
		}
	}
	clock.advance(10 * time.Second)
	e.observe(id, pageProgress(4, 12))
	// 8 pages left at 10 s a page; the 30 s of reading before the first page are not its pace
	// (counted in, it would say 109 s).
	d, ok := e.estimate(id)
	if !ok || d < 75*time.Second || d > 85*time.Second {
		t.Fatalf("after page 4 of 12 (10 s a page): %v %v, want about 80 s", d, ok)
	}
	if got := textOf(e, LangJa, id); got != "残り約 1 分" {
		t.Fatalf("Japanese %q", got)
	}
	if got := textOf(e, LangEn, id); got != "about 1 min left" {
		t.Fatalf("English %q", got)
	}
	// Between two pages it counts down.
	clock.advance(5 * time.Second)
	if d2, ok := e.estimate(id); !ok || d2 != d-5*time.Second {
		t.Fatalf("5 s later: %v %v, want %v", d2, ok, d-5*time.Second)
	}
	// The same progress reported again is no rise.
	e.observe(id, pageProgress(4, 12))
	if d3, _ := e.estimate(id); d3 != d-5*time.Second {
		t.Fatalf("a repeated report moved the estimate: %v", d3)
	}
	// Standing still for three of its gaps and more (30 s): no estimate.
	clock.advance(26 * time.Second)
	if s := estimateOf(e, id); s != "" {
		t.Fatalf("stalled 31 s with pages every 10 s: estimate %s", s)
	}
	// It moves on: the estimate is back, the standstill in its pace.
	for page := 5; page <= 7; page++ {
		clock.advance(10 * time.Second)
		e.observe(id, pageProgress(page, 12))
	}
	if d, ok := e.estimate(id); !ok || d < 60*time.Second || d > 120*time.Second {
		t.Fatalf("moving again: %v %v", d, ok)
	}
	// Backwards (started again after a restart): nothing until it rose again several times.
	clock.advance(time.Second)
	e.observe(id, 1)
	if s := estimateOf(e, id); s != "" {
		t.Fatalf("after going backwards: estimate %s", s)
	}
	for page := 1; page <= 3; page++ {
		clock.advance(10 * time.Second)
		e.observe(id, pageProgress(page, 12))
		if s := estimateOf(e, id); s != "" {
			t.Fatalf("%d pages after the restart: estimate %s", page, s)
		}
	}
	// A fast short job never shows one: three rises within a second.
	for i := 1; i <= 4; i++ {
		clock.advance(200 * time.Millisecond)
		e.observe(8, float64(i*20))
	}
	if s := estimateOf(e, 8); s != "" {
		t.Fatalf("a job of a second: estimate %s", s)
	}
	// A job reporting ten times a second (a big file's bytes): an estimate once it has run for
	// several seconds, from its pace over them.
	clock.advance(time.Minute)
	for i := 0; i <= 60; i++ {
		e.observe(10, float64(i)*0.05) // 0.5 % a second
		clock.advance(100 * time.Millisecond)
	}
	if d, ok := e.estimate(10); !ok || d < 190*time.Second || d > 198*time.Second {
		t.Fatalf("3 %% after 6 s at 0.5 %% a second: %v %v, want about 194 s", d, ok)
	}
	// Its time ran out without it ending: no "almost done" forever.
	clock.advance(time.Minute)
	e.forget(9)
	for i := 0; i <= 4; i++ {
		e.observe(9, float64(i*20))
		clock.advance(2 * time.Second)
	}
	clock.advance(3 * time.Second) // 5 s since 80 %, at 20 % per 2 s
	if s := estimateOf(e, 9); s != "" {
		t.Fatalf("overdue: estimate %s", s)
	}
	// However many jobs report, the estimator keeps the latest few hundred of them.
	for i := int64(0); i < 5*etaTracked; i++ {
		clock.advance(time.Millisecond)
		e.observe(1000+i, 5)
	}
	if n := len(e.jobs); n > 2*etaTracked || !e.follows(1000+5*etaTracked-1) {
		t.Fatalf("%d jobs followed, the latest %v", n, e.follows(1000+5*etaTracked-1))
	}
	// Ended jobs are forgotten.
	e.forget(id)
	if e.follows(id) {
		t.Fatal("a forgotten job is still followed")
	}
}

// TestTimeLeftText: the time left reads as a person says it, in Japanese and English.
func TestTimeLeftText(t *testing.T) {
	ja, en := newTranslator(LangJa), newTranslator(LangEn)
	for _, c := range []struct {
		d      time.Duration
		ja, en string
	}{
		{4 * time.Second, "まもなく終わります", "almost done"},
		{31 * time.Second, "残り約 40 秒", "about 40 s left"},
		{55 * time.Second, "残り約 1 分", "about 1 min left"},
		{150 * time.Second, "残り約 3 分", "about 3 min left"},
		{59 * time.Minute, "残り約 59 分", "about 59 min left"},
		{time.Hour + 4*time.Minute, "残り約 1 時間", "about 1 h left"},
		{2*time.Hour + 17*time.Minute, "残り約 2 時間 20 分", "about 2 h 20 min left"},
	} {
		if got := timeLeftText(ja, c.d); got != c.ja {
			t.Errorf("ja %v: %q, want %q", c.d, got, c.ja)
		}
		if got := timeLeftText(en, c.d); got != c.en {
			t.Errorf("en %v: %q, want %q", c.d, got, c.en)
		}
	}
}

// oneJobService is a Service with one job in it, enough for the list and the detail pane; the
// calls a screen of this test makes beyond these would panic on the nil Service.
type oneJobService struct {
	Service
	j job.Job
}

func (s *oneJobService) Settings() app.Settings { return app.Settings{} }
func (s *oneJobService) Get(context.Context, int64) (job.Job, error) {
	return s.j, nil
}
func (s *oneJobService) History(context.Context, int64) ([]job.Event, error)  { return nil, nil }
func (s *oneJobService) CanRedrive(context.Context, job.Job) bool             { return false }
func (s *oneJobService) MapRuns(context.Context, int64) ([]app.MapRun, error) { return nil, nil }

// TestTimeLeftInTheWindow: a scanned PDF read page by page shows, in the list and the detail,
// its page count and, once it has read a few pages, about how long is left; standing still the
// estimate goes, and it comes back when pages are read again; once done, the row shows what
// came of it and nothing is left to count.
func TestTimeLeftInTheWindow(t *testing.T) {
	fa := test.NewTempApp(t)
	fa.Preferences().SetString(prefLanguage, LangJa)
	now := time.Now()
	svc := &oneJobService{j: job.Job{ID: 7, Number: 7, Type: "convert", Name: "scan.pdf", Status: job.Running,
		Progress: 10, Message: pageMessage(0, 12), CreatedAt: now, StartedAt: &now, UpdatedAt: now, MaxAttempts: 3}}
	u := New(fa, svc)
	calls := make(chan func(), 64)
	u.do = func(f func()) { calls <- f }
	pump := func() {
		for {
			select {
			case f := <-calls:
				f()
			default:
				return
			}
		}
	}
	u.Window.Resize(fyne.NewSize(1180, 760))
	clock := newFakeClock()
	u.eta.now = clock.now
	h := &harness{t: t, ui: u, calls: calls}

	u.apply(bridge.Update{Jobs: []job.Job{svc.j}})
	u.showJob(7)
	h.waitFor("the detail", func() bool { return u.detail.shownID == 7 })
	rowText := func() string {
		st, ok := h.rowState(7)
		if !ok {
			t.Fatal("no row for the job")
		}
		return st.message
	}
	page := func(n int) {
		clock.advance(10 * time.Second)
		u.apply(bridge.Update{Progress: []job.Event{{JobID: 7, Kind: job.EventProgress, Status: job.Running,
			Progress: pageProgress(n, 12), Message: pageMessage(n, 12)}}})
		pump()
	}
	page(1)
	page(2)
	page(3)
	if msg := rowText(); !strings.HasSuffix(msg, "OCR：3 / 12 ページ") || strings.Contains(msg, "残り") {
		t.Fatalf("after 3 pages the row says %q; want the page count and no estimate yet", msg)
	}
	if u.detail.left.Visible() {
		t.Fatalf("after 3 pages the detail says %q", u.detail.left.Text)
	}
	page(4) // 8 pages left at 10 s a page
	if msg := rowText(); !strings.HasSuffix(msg, " · 残り約 1 分 · OCR：4 / 12 ページ") {
		t.Fatalf("after 4 pages the row says %q", msg)
	}
	if !u.detail.left.Visible() || u.detail.left.Text != "残り約 1 分" || u.detail.msg.Text != "OCR：4 / 12 ページ" {
		t.Fatalf("after 4 pages the detail says %q / %q (shown %v)", u.detail.msg.Text, u.detail.left.Text, u.detail.left.Visible())
	}
	// Counting down between pages, as the window's clock ticks.
	clock.advance(25 * time.Second)
	u.refreshTimeLeft()
	if msg := rowText(); !strings.Contains(msg, " · 残り約 1 分 · ") || u.detail.left.Text != "残り約 1 分" {
		t.Fatalf("25 s later the row says %q, the detail %q", msg, u.detail.left.Text)
	}
	// Standing still: the estimate goes from the row and the detail.
	clock.advance(10 * time.Second)
	u.refreshTimeLeft()
	if msg := rowText(); strings.Contains(msg, "残り") || u.detail.left.Visible() {
		t.Fatalf("stalled: the row says %q, the detail %q", msg, u.detail.left.Text)
	}
	page(5)
	page(6)
	if msg := rowText(); !strings.Contains(msg, "残り約") {
		t.Fatalf("moving again: the row says %q", msg)
	}
	// Going backwards (started again): no estimate.
	u.apply(bridge.Update{Progress: []job.Event{{JobID: 7, Kind: job.EventProgress, Status: job.Running, Progress: 2, Message: "Ingest"}}})
	pump()
	if msg := rowText(); strings.Contains(msg, "残り") || u.detail.left.Visible() {
		t.Fatalf("after going backwards the row says %q, the detail %q", msg, u.detail.left.Text)
	}
	// Done: the row says what came of it.
	done := svc.j
	done.Status, done.Progress, done.CompletedAt = job.Succeeded, 100, &now
	svc.j = done
	u.apply(bridge.Update{Jobs: []job.Job{done}})
	pump()
	if u.eta.follows(7) {
		t.Fatal("a finished job is still followed")
	}
	if msg := rowText(); strings.Contains(msg, "残り") {
		t.Fatalf("done: the row says %q", msg)
	}
}
