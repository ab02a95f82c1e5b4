package ui

import (
	"context"
	"strings"
	"testing"

	"jobdesk/app"
)

// TestDetailFollowsSelectedJob selects a waiting job, then starts the engine: the detail pane's
// status, progress and history follow without another click, up to the job's result.
func TestDetailFollowsSelectedJob(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path := sparseFile(t, "議事録.bin", 512<<20)
	u.Start()
	jobs, err := h.app.Submit(context.Background(), []string{path}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	h.waitFor("the row", func() bool { return h.row(id) != nil })
	u.list.Select(u.model.index[id])
	h.waitFor("the pending detail", func() bool { return strings.Contains(strings.Join(labelTexts(u.detail.root), "\n"), "待機中") })

	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the finished detail", func() bool {
		text := strings.Join(labelTexts(u.detail.root), "\n")
		return strings.Contains(text, "完了") && strings.Contains(text, "開始しました") &&
			strings.Contains(text, "完了しました") && strings.Contains(text, "SHA-256\n") && u.detail.bar.Value == 100
	})
}
