package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
)

// writeFile writes size bytes of a repeating, position-dependent pattern and returns the path
// and its SHA-256.
func writeFile(t testing.TB, name string, size int) (string, string) {
	t.Helper()
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7 + i>>11)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return p, hex.EncodeToString(sum[:])
}

// TestDropFileCreatesJob drops a real file on the window: a job appears, its row shows it
// waiting, and once the engine runs it the row shows it finished at 100 % with the checksum
// handler's last message, while the database holds the right SHA-256.
func TestDropFileCreatesJob(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.Start()
	path, want := writeFile(t, "売上データ.bin", 24<<20)

	u.handleDrop(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(path)})
	h.waitFor("the dropped file's row", func() bool { return len(u.model.rows) == 1 })
	id := u.model.rows[0].ID
	h.waitFor("the row to show PENDING", h.statusIs(id, job.Pending))
	st, _ := h.rowState(id)
	if st.progress != 0 || !st.cancelOn || st.retryOn {
		t.Fatalf("pending row = %+v; want 0 %%, Cancel on, Retry off", st)
	}
	if r := h.row(id); r.name.Text != "売上データ.bin" || r.typ.text.Text != u.typeText("checksum") {
		t.Fatalf("row shows name %q type %q", r.name.Text, r.typ.text.Text)
	}
	// The status bar says what the drop added once the submission returns, which may be a
	// moment after the row appears (the row comes from the engine's event).
	h.waitFor("the status bar to count the added file", func() bool { return strings.Contains(u.status.Text, "1 件") })

	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the row to show SUCCEEDED", h.statusIs(id, job.Succeeded))
	st, _ = h.rowState(id)
	if st.progress != 100 || st.cancelOn || st.retryOn {
		t.Fatalf("finished row = %+v; want 100 %%, both buttons off", st)
	}
	j, err := h.app.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ SHA256 string }
	if err := json.Unmarshal(j.Result, &res); err != nil || res.SHA256 != want {
		t.Fatalf("result %s; want sha256 %s", j.Result, want)
	}
	// Finished, the row says what came of the job (size and digest), not the last progress
	// report ("25165824 / 25165824 bytes").
	if !strings.Contains(st.message, "25,165,824 バイト") || !strings.Contains(st.message, want[:12]) ||
		strings.Contains(st.message, " / ") {
		t.Fatalf("row message %q; want the result's byte count and digest", st.message)
	}
	if u.model.counts[job.Succeeded] != 1 || u.allBtn.Text != "すべて 1" {
		t.Fatalf("counts %v, All button %q", u.model.counts, u.allBtn.Text)
	}
}

// TestDropFolderIsSkipped: a dropped folder is not a job; the status bar says why.
func TestDropFolderIsSkipped(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	u.Start()
	u.handleDrop(fyne.Position{}, []fyne.URI{storage.NewFileURI(t.TempDir())})
	if !strings.Contains(u.status.Text, "Skipped 1") {
		t.Fatalf("status bar = %q", u.status.Text)
	}
	h.waitFor("the first read", func() bool { return u.empty.Visible() && u.model.counts != nil })
	if n, _ := h.app.List(context.Background(), app.ListFilter{}); len(n) != 0 {
		t.Fatalf("%d jobs were created", len(n))
	}
}

// sparseFile makes a file of size bytes that reads as zeros without taking disk space: the
// checksum job on it runs long enough (seconds) to be watched, cancelled and retried.
func sparseFile(t testing.TB, name string, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// TestCancelAndRetryButtons runs a long checksum job on the app's engine, watches its row show
// RUNNING with growing progress and the handler's message, taps Cancel (the job ends CANCELLED
// and Retry lights up), taps Retry (it runs again) and lets it finish.
func TestCancelAndRetryButtons(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path := sparseFile(t, "月次レポート.bin", 8<<30)
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	jobs, err := h.app.Submit(context.Background(), []string{path}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	h.waitFor("RUNNING with progress", func() bool {
		st, ok := h.rowState(id)
		return ok && st.status == "実行中" && st.progress > 0 && strings.Contains(st.message, "バイト") // the handler's "N / M bytes", in Japanese
	})
	st, _ := h.rowState(id)
	if !st.cancelOn || st.retryOn {
		t.Fatalf("running row = %+v; want Cancel on, Retry off", st)
	}

	test.Tap(h.row(id).cancel)
	tapDialogButton(t, h, "キャンセルする") // cancelling asks first
	h.waitFor("CANCELLED", h.statusIs(id, job.Cancelled))
	st, _ = h.rowState(id)
	if st.cancelOn || !st.retryOn || st.bar {
		t.Fatalf("cancelled row = %+v; want Cancel off, Retry on, no progress bar", st)
	}
	if got, _ := h.app.Get(context.Background(), id); got.Status != job.Cancelled {
		t.Fatalf("database says %s", got.Status)
	}

	test.Tap(h.row(id).retry)
	h.waitFor("running again", h.statusIs(id, job.Running))
	test.Tap(h.row(id).cancel) // 8 GiB takes a while; cancelling again keeps the test short
	tapDialogButton(t, h, "キャンセルする")
	h.waitFor("CANCELLED again", h.statusIs(id, job.Cancelled))

	// The detail pane shows the selected job's error and history.
	u.list.Select(u.model.index[id])
	h.waitFor("the detail pane", func() bool {
		text := strings.Join(labelTexts(u.detail.root), "\n")
		return strings.Contains(text, "月次レポート.bin") && strings.Contains(text, "E013") &&
			strings.Contains(text, "キャンセルされました") && strings.Contains(text, "再実行を依頼しました")
	})
}

// TestDetailShowsError: a job whose file vanished fails; its row shows the code and its detail
// pane the code with both sentences.
func TestDetailShowsError(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path, _ := writeFile(t, "secret.pdf", 1024)
	u.Start()
	jobs, err := h.app.Submit(context.Background(), []string{path}, app.SubmitOptions{Type: "checksum"})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	os.Remove(path)
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	h.waitFor("FAILED", h.statusIs(id, job.Failed))
	if st, _ := h.rowState(id); !strings.Contains(st.message, "E014") || !st.retryOn || st.bar {
		t.Fatalf("failed row = %+v", st)
	}
	u.list.Select(u.model.index[id])
	h.waitFor("the error in the detail pane", func() bool {
		text := strings.Join(labelTexts(u.detail.root), "\n")
		return strings.Contains(text, "E014") && strings.Contains(text, "が見つかりません。") &&
			strings.Contains(text, "does not exist")
	})
}

// labelTexts collects the text of every label and canvas text under o.
func labelTexts(o fyne.CanvasObject) []string {
	var out []string
	for _, c := range test.LaidOutObjects(o) {
		switch w := c.(type) {
		case *widget.Label:
			out = append(out, w.Text)
		case *canvas.Text:
			out = append(out, w.Text)
		}
	}
	return out
}

// TestListPagesThroughThousands: 5,000 jobs load a page at a time as the list scrolls, in id
// order without duplicates; the filter counts and the empty state follow the filter.
func TestListPagesThroughThousands(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	enqueueMany(t, h.app, 5000)
	u.Start()
	h.waitFor("the first page", func() bool { return len(u.model.rows) == pageSize })
	if !u.model.more || u.allBtn.Text != "All 5,000" || u.filterBtns[job.Pending].Text != "Pending 5,000" {
		t.Fatalf("more=%v all=%q pending=%q", u.model.more, u.allBtn.Text, u.filterBtns[job.Pending].Text)
	}
	h.waitFor("every page", func() bool {
		u.list.ScrollToBottom()
		return len(u.model.rows) == 5000
	})
	for i := 1; i < len(u.model.rows); i++ {
		if u.model.rows[i].ID >= u.model.rows[i-1].ID {
			t.Fatalf("rows out of order at %d: %d then %d", i, u.model.rows[i-1].ID, u.model.rows[i].ID)
		}
	}
	if u.model.more {
		t.Fatal("more is still set after the last page")
	}
	last := u.model.rows[4999].ID
	h.waitFor("the oldest row on screen", func() bool { return h.row(last) != nil })

	test.Tap(u.filterBtns[job.Failed])
	h.waitFor("the empty state", func() bool { return u.empty.Visible() && len(u.model.rows) == 0 })
	if u.emptyText.Text != "No jobs are Failed." {
		t.Fatalf("empty state %q", u.emptyText.Text)
	}
	test.Tap(u.filterBtns[job.Pending])
	h.waitFor("the pending page", func() bool { return len(u.model.rows) == pageSize && !u.empty.Visible() })
}

// enqueueMany submits n checksum jobs of one empty file at once (Submit enqueues them in one
// transaction; making n files would take the test longer than the list does).
func enqueueMany(t testing.TB, a *app.App, n int) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "請求書.pdf")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = p
	}
	if _, err := a.Submit(context.Background(), paths, app.SubmitOptions{Type: "checksum", Force: true}); err != nil {
		t.Fatal(err)
	}
}

// TestGoal submits a typed goal: either a job appears (an AI family is built in) or the status
// bar shows the refusal's code and Japanese sentence.
func TestGoal(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.Start()
	_, direct := h.app.SubmitGoal(context.Background(), app.GoalRequest{Title: "probe"})
	u.submitGoal(app.GoalRequest{Title: "来期の売上を伸ばす", Description: "営業部", Deadline: time.Now().AddDate(0, 3, 0)})
	var je *job.Error
	if errors.As(direct, &je) {
		h.waitFor("the refusal", func() bool {
			return strings.Contains(u.status.Text, string(je.Code)) && strings.Contains(u.status.Text, je.MessageJa)
		})
		return
	}
	h.waitFor("the goal's job", func() bool { return strings.Contains(u.status.Text, "目標をジョブ #") })
}

// TestLanguageToggle switches to English and back; the choice is remembered.
func TestLanguageToggle(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.Start()
	h.waitFor("counts", func() bool { return u.allBtn.Text == "すべて 0" })
	u.SetLanguage(LangEn)
	if u.allBtn.Text != "All 0" || u.fyneApp.Preferences().String(prefLanguage) != LangEn {
		t.Fatalf("after English: %q, preference %q", u.allBtn.Text, u.fyneApp.Preferences().String(prefLanguage))
	}
	if !strings.Contains(u.emptyText.Text, "No jobs yet") {
		t.Fatalf("empty state %q", u.emptyText.Text)
	}
	u.SetLanguage(LangJa)
	if u.allBtn.Text != "すべて 0" {
		t.Fatalf("after Japanese: %q", u.allBtn.Text)
	}
}

// TestRetryOfAnAIJobStartsALinkedJob: Retry on a failed AI generation starts a new job linked
// to the failed one (seed 000), which keeps its FAILED status and its id; the status line names
// the new job.
func TestRetryOfAnAIJobStartsALinkedJob(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return aitest.Step{Status: 400, Message: "bad request"} })
	t.Setenv(aifamily.EnvEndpoint, srv.URL)
	t.Setenv(aifamily.EnvProvider, "openai")
	h := newHarness(t, LangEn)
	u := h.ui
	u.Start()
	ctx := context.Background()
	old, err := h.app.SubmitGoal(ctx, app.GoalRequest{Title: "Retry me"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	h.waitFor("FAILED", h.statusIs(old.ID, job.Failed))
	if st, _ := h.rowState(old.ID); !st.retryOn {
		t.Fatalf("failed row = %+v; want Retry on", st)
	}
	srv.SetScript(nil)
	test.Tap(h.row(old.ID).retry)
	var newID, newNumber int64
	h.waitFor("a new job retrying the failed one", func() bool {
		jobs, _ := h.app.List(ctx, app.ListFilter{})
		for _, j := range jobs {
			if j.RetryOf == old.ID {
				newID, newNumber = j.ID, j.Number
			}
		}
		return newID != 0
	})
	h.waitFor("the new job to succeed", h.statusIs(newID, job.Succeeded))
	if got, _ := h.app.Get(ctx, old.ID); got.Status != job.Failed || got.Attempts != 1 {
		t.Fatalf("the old job is %s after %d attempts; it must stay FAILED", got.Status, got.Attempts)
	}
	if want := "Job #1 runs again as new job #2."; old.Number != 1 || newNumber != 2 || !strings.HasSuffix(u.status.Text, want) {
		t.Errorf("status %q, want %q", u.status.Text, want)
	}
}
