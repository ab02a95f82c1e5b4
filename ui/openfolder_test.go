//go:build linux || freebsd || openbsd || netbsd || dragonfly

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/job"
)

// TestOpenFolderSaysWhenNothingAnswers: when the desktop's opener finds no file manager (it
// exits with an error), the window says so and lists the files itself; while it works, the
// status bar says the folder is being opened.
func TestOpenFolderSaysWhenNothingAnswers(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho 'xdg-open: no method available for opening' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := newHarness(t, LangJa)
	u := h.ui
	dir := t.TempDir()
	u.openFolder(job.Job{ID: 1}, dir)
	if !strings.Contains(u.status.Text, "フォルダーを開いています") {
		t.Fatalf("no feedback while opening: %q", u.status.Text)
	}
	h.waitFor("the fallback", func() bool { return u.hasOverlay() })
	if !strings.Contains(u.status.Text, "開けませんでした") {
		t.Fatalf("the status bar reads %q after the opener failed", u.status.Text)
	}
	if text := strings.Join(labelTexts(u.Window.Canvas().Overlays().Top()), "\n"); !strings.Contains(text, dir) {
		t.Fatalf("the fallback does not name the folder:\n%s", text)
	}
}
