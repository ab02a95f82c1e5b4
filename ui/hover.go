package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// hoverText shows content (a label cut with "…") and, while the pointer rests on it and the
// text does not fit, the whole text in the status bar: Fyne has no tooltips, and a pop-up would
// take the hover away from what opened it.
type hoverText struct {
	widget.BaseWidget
	u       *UI
	content fyne.CanvasObject
	full    string
}

func newHoverText(u *UI, content fyne.CanvasObject, full string) *hoverText {
	h := &hoverText{u: u, content: content, full: full}
	h.ExtendBaseWidget(h)
	return h
}

// CreateRenderer draws the content.
func (h *hoverText) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(h.content) }

// MouseIn shows the whole text when it is cut.
func (h *hoverText) MouseIn(*desktop.MouseEvent) {
	if h.full != "" && fyne.MeasureText(h.full, theme.TextSize(), fyne.TextStyle{}).Width+2*theme.InnerPadding() > h.Size().Width {
		h.u.showHint(h.full)
	}
}

// MouseMoved does nothing.
func (h *hoverText) MouseMoved(*desktop.MouseEvent) {}

// MouseOut puts the status bar back.
func (h *hoverText) MouseOut() { h.u.hideHint() }
