package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// recordNotifications replaces the window's notifier with one that records.
func recordNotifications(u *UI) *[]*fyne.Notification {
	var sent []*fyne.Notification
	u.sendNotification = func(n *fyne.Notification) { sent = append(sent, n) }
	return &sent
}

// TestNotificationOncePerJob: a dropped file that ends sends one notification with its name and
// status, however many times its end is seen again (events, rereads); a job that ended before
// the window opened sends none; with notifications off, none.
func TestNotificationOncePerJob(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	sent := recordNotifications(u)
	old, _ := writeFile(t, "前日.bin", 10)
	ctx := context.Background()
	before, err := h.app.Submit(ctx, []string{old}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h.app.Wait(wctx, before[0].ID)
	u.openedAt = time.Now() // the window opens after that job ended
	u.Start()
	path, _ := writeFile(t, "請求書.bin", 1000)
	u.handleDrop(fyne.NewPos(1, 1), []fyne.URI{storage.NewFileURI(path)})
	h.waitFor("a notification", func() bool { return len(*sent) > 0 })
	id := u.model.rows[0].ID
	h.waitFor("the row to succeed", h.statusIs(id, job.Succeeded))
	j, _ := h.app.Get(ctx, id)
	u.noteEnded([]job.Job{j, j}) // seen again
	// A reread finds it again; reload posts its result to the UI before it returns.
	u.reload()
	h.pump()
	if len(*sent) != 1 {
		t.Fatalf("%d notifications, want 1", len(*sent))
	}
	n := (*sent)[0]
	if !strings.Contains(n.Title, "請求書.bin") || !strings.Contains(n.Title, u.statusText(job.Succeeded)) {
		t.Fatalf("notification = %q / %q", n.Title, n.Content)
	}
	// The body says what came of the job, as its row does, not the last progress report.
	if !strings.Contains(n.Content, "1,000 バイト") {
		t.Fatalf("notification body %q; want the result (1,000 バイト)", n.Content)
	}
	// Notifications off: a failing job sends nothing.
	set := h.app.Settings()
	off := false
	set.Notify = &off
	if err := h.app.SaveSettings(set); err != nil {
		t.Fatal(err)
	}
	j.ID, j.Status = 99999, job.Failed
	now := time.Now()
	j.CompletedAt = &now
	u.noteEnded([]job.Job{j})
	if len(*sent) != 1 {
		t.Fatal("a notification was sent with notifications off")
	}
}

// TestAlertBannerAndMetrics: an alert rule that holds shows the banner and notifies once; the
// metrics view draws its charts from the jobs that ran.
func TestAlertBannerAndMetrics(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	sent := recordNotifications(u)
	if u.alertBanner.Visible() {
		t.Fatal("banner shown without alerts")
	}
	a := app.Alert{Rule: app.AlertQueueDepth, Message: "120 jobs are waiting (over 100)", MessageJa: "待機中のジョブが 120 件"}
	u.showAlerts([]app.Alert{a})
	u.showAlerts([]app.Alert{a})
	if !u.alertBanner.Visible() || !strings.Contains(u.alertLabel.Text, "120 jobs") || len(*sent) != 1 {
		t.Fatalf("banner %v %q, %d notifications", u.alertBanner.Visible(), u.alertLabel.Text, len(*sent))
	}
	// Its button says what it opens, unlike the header's Metrics beside it; it opens the metrics.
	details := buttonIn(u.alertBanner, "Details")
	if details == nil {
		t.Fatal("the banner has no Details button")
	}
	test.Tap(details)
	if u.metrics == nil {
		t.Fatal("Details did not open the metrics")
	}
	u.closeTopDialog()
	u.showAlerts(nil)
	if u.alertBanner.Visible() {
		t.Fatal("the banner stays after the rule stopped holding")
	}

	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := writeFile(t, "m.bin", 100)
	jobs, err := h.app.Submit(context.Background(), []string{p}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.app.Wait(wctx, jobs[0].ID)
	mv := u.showMetrics()
	h.waitFor("the metrics", func() bool { return mv.report.ByType["checksum"] == 1 })
	text := allText(mv.content)
	for _, want := range []string{u.typeText("checksum"), "Jobs per hour", "Waiting now"} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics view lacks %q", want)
		}
	}
	tall := 0
	for _, r := range findAll[*canvas.Rectangle](mv.content) {
		if r.Visible() && r.Size().Height > 20 && r.Size().Width < 40 {
			tall++
		}
	}
	if tall < 2 { // this hour's started and succeeded bars
		t.Errorf("%d bars drawn with a height, want 2", tall)
	}
}

// allText is every label and rich text under o.
func allText(o fyne.CanvasObject) string {
	texts := labelTexts(o)
	for _, rt := range findAll[*widget.RichText](o) {
		texts = append(texts, rt.String())
	}
	return strings.Join(texts, "\n")
}
