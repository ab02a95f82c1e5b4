package ui

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudops/cloudopstest"
)

// startBackend runs a local cloud backend (local-aws-sqs, versitygw, the Step Functions
// stand-in with machines) and writes its cloud.json into h's data folder.
func startBackend(t *testing.T, h *harness, machines map[string]string) (*cloudopstest.Backend, *app.CloudConsole) {
	t.Helper()
	b := cloudopstest.Start(t, app.CloudJobTypes(), machines)
	b.WriteConfig(h.app.DataDir())
	con, err := h.app.CloudConsole(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b, con
}

// openConsole opens the console and waits for its queues.
func openConsole(h *harness) *consoleView {
	cv := h.ui.openCloudConsole()
	h.waitFor("the queues", func() bool { return len(cv.queues) == len(app.CloudJobTypes()) })
	return cv
}

// squash is texts run together without white space, as a person reads a wrapped sentence.
func squash(texts []string) string {
	return strings.Join(strings.Fields(strings.Join(texts, "")), "")
}

// confirmShown waits for a new confirmation on top of the console and returns it.
func confirmShown(h *harness, cv *consoleView, before fyne.CanvasObject) fyne.CanvasObject {
	h.t.Helper()
	var top fyne.CanvasObject
	h.waitFor("the confirmation", func() bool {
		top = h.ui.Window.Canvas().Overlays().Top()
		return cv.confirm != nil && top != nil && top != before
	})
	return top
}

// ask taps button (after clearing the console's last confirmation) and returns the
// confirmation it opens.
func ask(h *harness, cv *consoleView, console fyne.CanvasObject, button fyne.Tappable) fyne.CanvasObject {
	h.t.Helper()
	cv.confirm = nil
	test.Tap(button)
	return confirmShown(h, cv, console)
}

// wantAsks fails the test unless the confirmation top, opened by what (e.g. "the purge"), says
// want.
func wantAsks(t *testing.T, top fyne.CanvasObject, what, want string) {
	t.Helper()
	if q := squash(labelTexts(top)); !strings.Contains(q, squash([]string{want})) {
		t.Fatalf("%s asks %q", what, q)
	}
}

// TestCloudConsoleQueues: the queues tab shows the real counts; a queue's dead letters are
// listed with their job's error; redrive and purge ask first, saying how many messages, and
// cancelling changes nothing; confirming a redrive moves the message back.
func TestCloudConsoleQueues(t *testing.T) {
	h := newHarness(t, LangJa)
	b, con := startBackend(t, h, nil)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := con.SendMessage(ctx, "EVALUATION", `{"trigger":"NEW_SUBSIDY","subsidy_ids":["s1"]}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := con.SendMessage(ctx, "CAPTION_GENERATION", `{"s3_path":"inputs/photo.png"}`); err != nil {
		t.Fatal(err)
	}
	jobID := b.DeadLetter("CAPTION_GENERATION", job.Errorf(job.E006, "the image cannot be decoded"))

	cv := openConsole(h)
	console := h.ui.Window.Canvas().Overlays().Top()
	text := strings.Join(labelTexts(console), "\n")
	for _, want := range []string{"キュー", "メッセージ送信", "実行", "待機中", "デッドレター", "EVALUATION — 判定・再評価", "CAPTION_GENERATION — 説明文生成"} {
		if !strings.Contains(text, want) {
			t.Errorf("the console does not show %q:\n%s", want, text)
		}
	}
	row := map[string]int{}
	for i, q := range cv.queues {
		row[q.JobType] = i
	}
	if got := cv.queueCell(cv.queues[row["EVALUATION"]], 1); got != "2" {
		t.Errorf("EVALUATION waiting %q; want 2", got)
	}
	if got := cv.queueCell(cv.queues[row["CAPTION_GENERATION"]], 4); got != "1" {
		t.Errorf("CAPTION_GENERATION dead letters %q; want 1", got)
	}

	// The dead letter, with its error.
	cv.queueTable.Select(row["CAPTION_GENERATION"])
	h.waitFor("the dead letters", func() bool { return len(cv.deadLetters) == 1 })
	text = strings.Join(labelTexts(cv.dlqList), "\n")
	if !strings.Contains(text, jobID) || !strings.Contains(text, "E006: the image cannot be decoded") {
		t.Fatalf("the dead letters show %q", text)
	}

	// Redrive asks first; cancelled, nothing moves.
	top := ask(h, cv, console, cv.redrive)
	wantAsks(t, top, "the redrive", "1 件のメッセージを CAPTION_GENERATION — 説明文生成 のデッドレターキューから元のキューに戻します")
	tapButton(t, top, "キャンセル")
	h.pump()
	if n := b.Queue("CAPTION_GENERATION", true); n.Visible != 1 {
		t.Fatalf("a cancelled redrive moved messages: %+v", n)
	}

	// Purge asks too, with the count; cancelled, nothing is deleted.
	top = ask(h, cv, console, cv.purge)
	wantAsks(t, top, "the purge", "キューのメッセージ（現在 0 件）をすべて削除します。元に戻せません。")
	tapButton(t, top, "キャンセル")
	top = ask(h, cv, console, cv.purgeDLQ)
	wantAsks(t, top, "the dead letters' purge", "デッドレターキューのメッセージ（現在 1 件）")
	tapButton(t, top, "キャンセル")
	h.pump()
	if n := b.Queue("CAPTION_GENERATION", true); n.Visible != 1 {
		t.Fatalf("a cancelled purge deleted messages: %+v", n)
	}

	// Confirmed, the redrive moves the message back and the table follows.
	top = ask(h, cv, console, cv.redrive)
	tapButton(t, top, "再投入")
	h.waitFor("the redrive", func() bool {
		return strings.Contains(cv.message.Text, "1 件をキューに戻す処理を開始しました")
	})
	h.waitFor("the message back in its queue", func() bool {
		return b.Queue("CAPTION_GENERATION", true).Visible == 0 && b.Queue("CAPTION_GENERATION", false).Visible == 1
	})
	test.Tap(buttonIn(console, "更新"))
	h.waitFor("the table to follow", func() bool {
		q, _ := cv.queue("CAPTION_GENERATION")
		return q.DeadLetter.Visible == 0 && q.Queue.Visible == 1 && cv.queueCell(q, 1) == "1"
	})

	// Esc closes the console.
	h.ui.typedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if h.ui.dialogShown[cv.d] {
		t.Fatal("Esc left the console open")
	}
}

// TestCloudConsoleSend: a job type's template fills the editor; a body that fails its schema
// is refused with the sentence naming the field; a good one is sent.
func TestCloudConsoleSend(t *testing.T) {
	h := newHarness(t, LangEn)
	b, _ := startBackend(t, h, nil)
	cv := openConsole(h)
	cv.tabs.SelectIndex(1)
	cv.typeSel.SetSelected("NOTIFICATION — Notification (email, in-app)")
	if !strings.Contains(cv.body.Text, `"notification_type": "NEW_MATCH"`) || !strings.Contains(cv.body.Text, `"company_id"`) {
		t.Fatalf("template %q", cv.body.Text)
	}

	cv.body.SetText(`{"notification_type":"NEW_MATCH","company_id":"c1","data":{"title":"t","message":"m"}}`)
	test.Tap(buttonIn(h.ui.Window.Canvas().Overlays().Top(), "Send"))
	h.waitFor("the refusal", func() bool { return strings.HasPrefix(cv.sent.Text, "E014") })
	if want := `E014: NOTIFICATION message: field "user_id" is missing`; cv.sent.Text != want {
		t.Fatalf("refusal %q; want %q", cv.sent.Text, want)
	}
	if n := b.Queue("NOTIFICATION", false); n.Visible != 0 {
		t.Fatalf("a refused message was sent: %+v", n)
	}

	cv.body.SetText(`{"notification_type":"NEW_MATCH","user_id":"u1","company_id":"c1","data":{"title":"t","message":"m"}}`)
	test.Tap(buttonIn(h.ui.Window.Canvas().Overlays().Top(), "Fill in common fields"))
	if !strings.Contains(cv.body.Text, `"job_id"`) || !strings.Contains(cv.body.Text, `"triggered_by": "USER"`) {
		t.Fatalf("filled %q", cv.body.Text)
	}
	test.Tap(buttonIn(h.ui.Window.Canvas().Overlays().Top(), "Send"))
	h.waitFor("the message sent", func() bool { return strings.HasPrefix(cv.sent.Text, "Sent NOTIFICATION") })
	// The SQS server counts a sent message a moment after it answered the send.
	h.waitFor("the message in its queue", func() bool { return b.Queue("NOTIFICATION", false).Visible == 1 })
	if n := b.Queue("NOTIFICATION", false); n.Visible != 1 {
		t.Fatalf("after sending: %+v", n)
	}
}

// TestCloudConsoleExecutions: the executions tab lists each state machine's executions with the
// status filter; only a failed one offers Redrive, which asks first.
func TestCloudConsoleExecutions(t *testing.T) {
	h := newHarness(t, LangEn)
	b, _ := startBackend(t, h, map[string]string{
		"boom": `{"StartAt":"Boom","States":{"Boom":{"Type":"Fail","Error":"Boom","Cause":"on purpose"}}}`,
		"fine": `{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}`,
	})
	failed := b.Run("boom", "boom-1")
	b.Run("fine", "fine-1")
	cv := openConsole(h)
	console := h.ui.Window.Canvas().Overlays().Top()
	cv.tabs.SelectIndex(2)
	h.waitFor("the executions", func() bool { return len(cv.executions) == 2 })
	text := strings.Join(labelTexts(cv.execList), "\n")
	if !strings.Contains(text, "boom-1  ·  boom  ·  Failed") || !strings.Contains(text, "fine-1  ·  fine  ·  Succeeded") {
		t.Fatalf("the executions show %q", text)
	}
	var redrives []*widget.Button
	for _, o := range test.LaidOutObjects(cv.execList) {
		if btn, ok := o.(*widget.Button); ok && btn.Text == "Redrive" && btn.Visible() {
			redrives = append(redrives, btn)
		}
	}
	if len(redrives) != 1 {
		t.Fatalf("%d rows offer Redrive; want the failed one", len(redrives))
	}
	var links int
	for _, o := range test.LaidOutObjects(cv.execList) {
		if l, ok := o.(*widget.Hyperlink); ok && l.URL != nil && strings.HasSuffix(l.URL.String(), failed) {
			links++
		}
	}
	if links != 1 {
		t.Fatalf("%d console links to %s", links, failed)
	}

	cv.statusSel.SetSelected("Failed")
	h.waitFor("the failed executions", func() bool { return len(cv.executions) == 1 && cv.executions[0].Name == "boom-1" })

	top := ask(h, cv, console, redrives[0])
	wantAsks(t, top, "the redrive", "boom-1 (boom, Failed) will run again")
	tapButton(t, top, "Cancel")
	h.pump()
	top = ask(h, cv, console, redrives[0])
	tapButton(t, top, "Redrive")
	h.waitFor("the redrive", func() bool { return cv.message.Text == "boom-1 is running again." })
	b.WaitStopped(failed)
	cv.loadExecutions()
	h.waitFor("the redriven execution", func() bool {
		return len(cv.executions) == 1 && cv.executions[0].RedriveCount == 1
	})
}

// TestCloudConsoleError: a backend that does not answer shows a coded sentence, not the SDK's
// error text.
func TestCloudConsoleError(t *testing.T) {
	h := newHarness(t, LangEn)
	offlineCloud(t, h)
	t.Setenv("JOBDESK_CLOUD_QUEUES", "EVALUATION=http://127.0.0.1:1/123456789012/q")
	cv := h.ui.openCloudConsole()
	h.waitFor("the error", func() bool { return strings.HasPrefix(cv.message.Text, "E001") })
	if strings.Contains(cv.message.Text, "operation error") || strings.Contains(cv.message.Text, "dial tcp") {
		t.Fatalf("the console shows the SDK's error: %q", cv.message.Text)
	}
}
