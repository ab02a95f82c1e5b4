package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"jobdesk/app"
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

// TestSaveAsOwnPicker: saving a result asks in JobDesk's own picker, in the window's language,
// opening in the folder used last with the file's name proposed; Save writes the file there,
// and an existing file is replaced only after asking.
func TestSaveAsOwnPicker(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path, _ := badRowsCSV(t, 300)
	j := runAndShow(t, h, []string{path}, app.SubmitOptions{Extra: map[string]string{"tolerate-percent": "50", "tolerate-count": "100000"}})
	last := t.TempDir()
	u.fyneApp.Preferences().SetString(prefPickerDir, last)
	u.askSave(j, "csv")
	top := u.Window.Canvas().Overlays().Top()
	text := strings.Join(labelTexts(top), "\n")
	if !strings.Contains(text, "保存先を選ぶ") || !strings.Contains(text, last) || strings.Contains(text, "Save File") {
		t.Fatalf("the save dialog is not JobDesk's, in Japanese, on the last folder:\n%s", text)
	}
	e, ok := u.Window.Canvas().Focused().(*keyEntry)
	if !ok || e.Text != suggestedName(j, "csv") {
		t.Fatalf("the name field %T is not focused with the proposed name", u.Window.Canvas().Focused())
	}
	test.Tap(buttonIn(top, "保存"))
	out := filepath.Join(last, suggestedName(j, "csv"))
	h.waitFor("the saved file", func() bool { st, err := os.Stat(out); return err == nil && st.Size() > 0 })

	// Again: the file is there, so it asks before replacing it.
	u.askSave(j, "csv")
	test.Tap(buttonIn(u.Window.Canvas().Overlays().Top(), "保存"))
	if buttonIn(u.Window.Canvas().Overlays().Top(), "上書きする") == nil {
		t.Fatal("an existing file was replaced without asking")
	}
	u.closeTopDialog()
}
