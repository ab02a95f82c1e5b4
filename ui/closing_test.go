package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"jobdesk/engine/job"
)

// TestClosingWithJobsRunningAsks: closing while jobs run asks first, says they stop and start
// over at the next launch, offers the tray where there is one, and "Don't close" keeps the window.
func TestClosingWithJobsRunningAsks(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.mu.Lock()
	u.allCounts = map[job.Status]int{job.Running: 2, job.Pending: 5}
	u.mu.Unlock()
	u.trayMenu = fyne.NewMenu("JobDesk") // a desktop with a tray
	u.askBeforeClosing()
	top := u.Window.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("closing with 2 jobs running asked nothing")
	}
	text := strings.Join(labelTexts(top), "\n")
	if !strings.Contains(text, "2 件のジョブを実行中") || !strings.Contains(text, "最初からやり直します") {
		t.Fatalf("the question does not say what will happen:\n%s", text)
	}
	for _, b := range []string{"トレイで続ける", "中断して閉じる", "閉じない"} {
		if buttonIn(top, b) == nil {
			t.Fatalf("no %q button", b)
		}
	}
	test.Tap(buttonIn(top, "閉じない"))
	if u.hasOverlay() {
		t.Fatal("Don't close left the question open")
	}
}

// TestLongNameEndsInEllipsis: at 1024 px a name too long for its row ends in "…"; a short one
// is left whole.
func TestLongNameEndsInEllipsis(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	jobs := submitN(t, h, "2026年度_第3四半期_営業部_売上集計データ_全支店分_最終確定版_経理提出用.bin", "a.bin")
	u.Window.Resize(fyne.NewSize(1024, 700))
	u.Start()
	h.waitFor("the rows", func() bool { return h.row(jobs[0].ID) != nil && h.row(jobs[1].ID) != nil })
	if r := h.row(jobs[0].ID); r.name.Truncation != fyne.TextTruncateEllipsis {
		t.Fatalf("the long name is cut without an ellipsis (%v) at 1024 px", r.name.Truncation)
	}
	if r := h.row(jobs[1].ID); r.name.Truncation != fyne.TextTruncateClip {
		t.Fatal("a short name got an ellipsis")
	}
}
