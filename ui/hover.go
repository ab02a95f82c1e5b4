package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// hoverText shows content (a label cut with "…") and, while the pointer rests on it and the
// text does not fit, the whole text in a small pop-up beside the pointer: Fyne has no tooltips.
type hoverText struct {
	widget.BaseWidget
	u       *UI
	content fyne.CanvasObject
	full    string
	pop     *widget.PopUp
}

func newHoverText(u *UI, content fyne.CanvasObject, full string) *hoverText {
	h := &hoverText{u: u, content: content, full: full}
	h.ExtendBaseWidget(h)
	return h
}

// setFull changes the text the pop-up shows.
func (h *hoverText) setFull(s string) { h.full = s }

// CreateRenderer draws the content.
func (h *hoverText) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(h.content) }

// fits reports whether the whole text fits in the width the content has.
func (h *hoverText) fits() bool {
	w := fyne.MeasureText(h.full, theme.TextSize(), fyne.TextStyle{}).Width
	return w+2*theme.InnerPadding() <= h.Size().Width
}

// MouseIn shows the whole text when it is cut.
func (h *hoverText) MouseIn(e *desktop.MouseEvent) {
	if h.full == "" || h.fits() || h.u == nil || h.u.Window == nil {
		return
	}
	l := widget.NewLabel(wrapText(h.full, 60))
	h.pop = widget.NewPopUp(l, h.u.Window.Canvas())
	h.pop.ShowAtPosition(e.AbsolutePosition.Add(fyne.NewPos(12, 18)))
}

// MouseMoved does nothing: the pop-up stays where it opened.
func (h *hoverText) MouseMoved(*desktop.MouseEvent) {}

// MouseOut hides the pop-up.
func (h *hoverText) MouseOut() {
	if h.pop != nil {
		h.pop.Hide()
		h.pop = nil
	}
}
