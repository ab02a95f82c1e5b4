package ui

import (
	"strings"
	"testing"
)

// TestDropZoneLightsUpWhileDragging: while files are dragged over the window (Windows tells it,
// through its drop target) the drop zone is drawn stronger and says to let go; it rests again
// when they leave.
func TestDropZoneLightsUpWhileDragging(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	rest := u.dropBg.FillColor
	u.setDropHover(true)
	if u.dropBg.FillColor == rest || u.dropBg.StrokeWidth != 4 || !strings.HasPrefix(u.dropHead.Text, "ここで離すと") {
		t.Fatalf("over: fill %v, stroke %v, title %q", u.dropBg.FillColor, u.dropBg.StrokeWidth, u.dropHead.Text)
	}
	u.setDropHover(false)
	if u.dropBg.FillColor != rest || u.dropBg.StrokeWidth != 2 || u.dropHead.Text != u.tr.T("drop.title") {
		t.Fatalf("after: fill %v, stroke %v, title %q", u.dropBg.FillColor, u.dropBg.StrokeWidth, u.dropHead.Text)
	}
}
