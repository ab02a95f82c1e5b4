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
