package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// offlineCloud makes h's data folder configure a cloud no one answers: a bucket and a state
// machine in cloud.json, dummy credentials and an endpoint that refuses connections.
func offlineCloud(t *testing.T, h *harness) {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "ap-northeast-1")
	t.Setenv("AWS_PROFILE", "")
	cfg := `{"bucket": "jobdesk-test", "region": "ap-northeast-1",
	  "state_machines": {"csv-processing": "arn:aws:states:ap-northeast-1:123456789012:stateMachine:csv"}}`
	if err := os.WriteFile(filepath.Join(h.app.DataDir(), "cloud.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readCloud reads the cloud's state as the window does and waits until it is shown.
func readCloud(h *harness) {
	done := make(chan struct{})
	go func() {
		h.ui.readCloud(h.ui.ctx)
		close(done)
	}()
	h.waitFor("the cloud's state", func() bool {
		select {
		case <-done:
			h.pump()
			return true
		default:
			return false
		}
	})
}

// hasButton reports whether o shows a button labelled text.
func hasButton(o fyne.CanvasObject, text string) bool {
	for _, c := range test.LaidOutObjects(o) {
		if b, ok := c.(*widget.Button); ok && b.Text == text && b.Visible() {
			return true
		}
	}
	return false
}

// TestCloudHiddenWhenNotConfigured: without cloud.json the window looks as it always did: no
// choice beside the drop zone, nothing about the cloud in the status bar, and drops run here.
func TestCloudHiddenWhenNotConfigured(t *testing.T) {
	h := newHarness(t, LangJa)
	readCloud(h)
	u := h.ui
	if u.targetSel.Visible() || u.cloudInfo.Visible() || u.cloudOps.Visible() {
		t.Fatalf("choice shown %v, status %q shown %v, operations shown %v", u.targetSel.Visible(), u.cloudInfo.Text, u.cloudInfo.Visible(), u.cloudOps.Visible())
	}
	if got := u.submitOptions().Target; got != "" {
		t.Fatalf("target %q; want this PC", got)
	}
}

// TestCloudChoiceAndStatusBar: with a configured cloud that cannot be reached, the drop zone
// offers where to run, the status bar says offline with the outbox, and a file dropped with
// "クラウドで" chosen becomes a cloud job waiting to go out.
func TestCloudChoiceAndStatusBar(t *testing.T) {
	h := newHarness(t, LangJa)
	offlineCloud(t, h)
	readCloud(h)
	u := h.ui
	if !u.targetSel.Visible() || strings.Join(u.targetSel.Options, ",") != "このPCで,クラウドで,自動" {
		t.Fatalf("choice shown %v with %q", u.targetSel.Visible(), u.targetSel.Options)
	}
	if !u.cloudOps.Visible() || u.cloudOps.Text != "クラウド運用を開く" {
		t.Fatal("the status bar does not offer the cloud operations console")
	}
	if !u.cloudInfo.Visible() || u.cloudInfo.Text != "オフライン · 送信待ち 0 件" {
		t.Fatalf("status bar %q shown %v", u.cloudInfo.Text, u.cloudInfo.Visible())
	}

	u.targetSel.SetSelected("クラウドで")
	path := writeCSV(t, t.TempDir(), "big.csv", 20, 3)
	u.handleDrop(fyne.Position{}, fileURIs(path))
	var jobs []job.Job
	h.waitFor("the cloud job", func() bool {
		jobs = topLevel(t, h.app)
		return len(jobs) == 1
	})
	if jobs[0].Target != job.TargetCloud {
		t.Fatalf("dropped job runs on %q; want the cloud", jobs[0].Target)
	}
	readCloud(h)
	if u.cloudInfo.Text != "オフライン · 送信待ち 1 件" {
		t.Fatalf("status bar %q; want one waiting", u.cloudInfo.Text)
	}

	// The language switch keeps the choice and says the same in English.
	u.SetLanguage(LangEn)
	if u.targetSel.Selected != "In the cloud" || u.cloudInfo.Text != "Offline · 1 waiting to go out" {
		t.Fatalf("English: choice %q, status bar %q", u.targetSel.Selected, u.cloudInfo.Text)
	}
}

// TestRunAgainInTheCloud: a finished job's detail offers "クラウドで再実行" once the cloud is
// configured; it makes a new cloud job for the same file, whose detail names the region.
func TestRunAgainInTheCloud(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	ctx := context.Background()
	path := writeCSV(t, t.TempDir(), "users.csv", 20, 4)
	jobs, err := h.app.Submit(ctx, []string{path}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	if err := h.app.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	u.showJob(id)
	h.waitFor("the detail", func() bool { return u.detail.shownID == id && u.detail.shown == job.Cancelled })
	if hasButton(u.detail.root, "クラウドで再実行") {
		t.Fatal("run again in the cloud offered without a configured cloud")
	}

	offlineCloud(t, h)
	readCloud(h)
	h.waitFor("the button", func() bool { return hasButton(u.detail.root, "クラウドで再実行") })
	tapButton(t, u.detail.root, "クラウドで再実行")
	var again job.Job
	h.waitFor("the cloud job", func() bool {
		for _, j := range topLevel(t, h.app) {
			if j.ID != id {
				again = j
			}
		}
		return again.ID != 0
	})
	if again.Target != job.TargetCloud || inputPath(again) != path {
		t.Fatalf("new job runs on %q with %q", again.Target, inputPath(again))
	}
	u.showJob(again.ID)
	h.waitFor("the cloud job's detail", func() bool {
		text := strings.Join(labelTexts(u.detail.root), "\n")
		return u.detail.shownID == again.ID && strings.Contains(text, "リージョン") && strings.Contains(text, "ap-northeast-1")
	})
}

// TestCloudDetailLinksToConsole: a cloud job's detail lists its execution ARN and links to it
// in the AWS console.
func TestCloudDetailLinksToConsole(t *testing.T) {
	h := newHarness(t, LangEn)
	arn := "arn:aws:states:ap-northeast-1:123456789012:execution:csv:users-1"
	d := h.ui.detail
	d.cloudDetail = &app.CloudDetail{Region: "ap-northeast-1", ExecutionARN: arn, ConsoleURL: app.ConsoleURL("ap-northeast-1", arn)}
	d.show(job.Job{ID: 7, Name: "users.csv", Type: "csv", Status: job.Pending, Target: job.TargetCloud}, nil)
	text := strings.Join(labelTexts(d.root), "\n")
	if !strings.Contains(text, "Execution ARN") || !strings.Contains(text, arn) || !strings.Contains(text, "Region") {
		t.Fatalf("the detail shows %q", text)
	}
	var link *widget.Hyperlink
	for _, o := range test.LaidOutObjects(d.root) {
		if l, ok := o.(*widget.Hyperlink); ok {
			link = l
		}
	}
	if link == nil || link.Text != "Open in the console" || link.URL.String() != d.cloudDetail.ConsoleURL {
		t.Fatalf("console link %+v", link)
	}
}

// TestSettingsCloseRereadsCloud: closing the settings reads the cloud's state again, so a cloud
// configured there shows its choice and status without restarting the window.
func TestSettingsCloseRereadsCloud(t *testing.T) {
	h := newHarness(t, LangEn)
	readCloud(h)
	u := h.ui
	if u.targetSel.Visible() {
		t.Fatal("choice shown before the cloud is configured")
	}
	offlineCloud(t, h)
	sd := u.openSettings()
	sd.d.Hide()
	h.waitFor("the choice", func() bool { return u.targetSel.Visible() && u.cloudInfo.Visible() })
	if u.cloudInfo.Text != "Offline · 0 waiting to go out" {
		t.Fatalf("status bar %q", u.cloudInfo.Text)
	}
}

// TestRunAgainInTheCloudFollowsRetry: "run again in the cloud" is offered where Retry is — not
// on a job whose failure depends on its file alone (a wrong header, a damaged file), which the
// cloud would fail the same way — and on a job that succeeded.
func TestRunAgainInTheCloudFollowsRetry(t *testing.T) {
	h := newHarness(t, LangEn)
	offlineCloud(t, h)
	readCloud(h)
	d := h.ui.detail
	in := []byte(`{"path":"/data/users.csv"}`)
	for _, c := range []struct {
		name    string
		status  job.Status
		err     *job.Error
		offered bool
	}{
		{"wrong header", job.Failed, job.Errorf(job.E004, "the header is wrong").Permanent(), false},
		{"damaged file", job.Failed, job.Errorf(job.E005, "the file is damaged").Permanent(), false},
		{"network", job.Failed, job.Errorf(job.E001, "no answer"), true},
		{"timed out", job.TimedOut, job.Errorf(job.E002, "too slow"), true},
		{"succeeded", job.Succeeded, nil, true},
		{"cancelled", job.Cancelled, nil, true},
	} {
		j := job.Job{ID: 9, Name: "users.csv", Type: "csv", Status: c.status, Error: c.err, Input: in}
		d.shownID = 0
		d.show(j, nil)
		if got := hasButton(d.root, "Run again in the cloud"); got != c.offered {
			t.Errorf("%s: run again in the cloud offered %v; want %v (Retry offered %v)", c.name, got, c.offered, canRetry(j))
		}
	}
}
