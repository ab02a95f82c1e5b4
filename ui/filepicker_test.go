package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// pickerIndex is the line of the picker showing name.
func pickerIndex(t *testing.T, p *filePicker, name string) int {
	t.Helper()
	for i, e := range p.entries {
		if e.name == name {
			return i
		}
	}
	t.Fatalf("the picker does not list %q (it lists %v)", name, p.entries)
	return -1
}

// TestPickerChoosesSeveralFiles: files ticked in two folders are submitted together as jobs,
// in name order; folders come first, hidden files are left out, and a second tap unticks.
func TestPickerChoosesSeveralFiles(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.Start()
	dir := t.TempDir()
	for _, f := range []string{"b請求書.bin", "a売上.bin", "c.bin", ".hidden", "月次/d.bin"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	p := u.openPicker(dir, func(paths []string) { got = paths })
	var names []string
	for _, e := range p.entries {
		names = append(names, e.name)
	}
	if want := []string{"月次", "a売上.bin", "b請求書.bin", "c.bin"}; !slices.Equal(names, want) {
		t.Fatalf("the picker lists %v; want %v", names, want)
	}
	if !p.open.Disabled() {
		t.Fatal("Open is on with nothing ticked")
	}
	p.list.Select(pickerIndex(t, p, "c.bin"))
	p.list.Select(pickerIndex(t, p, "a売上.bin"))
	p.list.Select(pickerIndex(t, p, "c.bin")) // unticked again
	p.list.Select(pickerIndex(t, p, "月次"))    // into the folder; the tick stays
	if p.dir != filepath.Join(dir, "月次") {
		t.Fatalf("the picker shows %s after tapping the folder", p.dir)
	}
	p.list.Select(pickerIndex(t, p, "d.bin"))
	if p.open.Text != "開く（2 件）" || !strings.HasPrefix(p.count.Text, "2 件") {
		t.Fatalf("Open reads %q, the count %q; want two files", p.open.Text, p.count.Text)
	}
	test.Tap(p.open)
	want := []string{filepath.Join(dir, "a売上.bin"), filepath.Join(dir, "月次", "d.bin")}
	if !slices.Equal(got, want) {
		t.Fatalf("picked %v; want %v", got, want)
	}
	if u.fyneApp.Preferences().String(prefPickerDir) != filepath.Join(dir, "月次") {
		t.Fatal("the picker does not remember its folder")
	}
	if u.hasOverlay() {
		t.Fatal("the picker is still open after Open")
	}

	// Through the window: Select all in the folder, Open, and each file becomes a job.
	p = u.openPicker(dir, u.submit)
	test.Tap(p.all)
	if p.open.Text != "開く（3 件）" {
		t.Fatalf("after Select all, Open reads %q", p.open.Text)
	}
	test.Tap(p.open)
	h.waitFor("three jobs", func() bool { return len(u.model.rows) == 3 })
}

// TestPickerUnreadableFolder: a folder that cannot be read says so instead of an empty list,
// and Esc closes the picker.
func TestPickerUnreadableFolder(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	p := u.openPicker(filepath.Join(t.TempDir(), "gone"), func([]string) { t.Fatal("picked from a missing folder") })
	if !p.note.Visible() || !strings.HasPrefix(p.note.Text, "This folder cannot be read.") {
		t.Fatalf("the note reads %q (visible %v)", p.note.Text, p.note.Visible())
	}
	u.typedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if u.hasOverlay() {
		t.Fatal("Esc left the picker open")
	}
}
