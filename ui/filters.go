package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// filterLayout lays the status filter out in the width it gets, never wider: every button in a
// row when they all fit; otherwise "All", the active filter and the statuses that have jobs;
// and when even those do not fit (a narrow window, a split dragged left), one drop-down list
// that offers every status. Its objects are the buttons (All first, then job.Statuses in
// order) followed by the drop-down.
type filterLayout struct {
	u *UI
}

// MinSize is the drop-down's: the bar can always shrink to it, so it never widens the window.
func (l *filterLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	h := float32(0)
	for _, o := range objects {
		h = max(h, o.MinSize().Height)
	}
	sel := objects[len(objects)-1]
	return fyne.NewSize(sel.MinSize().Width, h)
}

// Layout chooses the widest form that fits in size and places it.
func (l *filterLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	btns, sel := objects[:len(objects)-1], objects[len(objects)-1]
	pad := theme.Padding()
	rowWidth := func(keep func(i int) bool) float32 {
		w, n := float32(0), 0
		for i, b := range btns {
			if keep(i) {
				w += b.MinSize().Width
				n++
			}
		}
		return w + pad*float32(max(n-1, 0))
	}
	every := func(int) bool { return true }
	busy := func(i int) bool {
		if i == 0 {
			return true // All
		}
		s := job.Statuses[i-1]
		return l.u.model.counts[s] > 0 || l.u.model.filter == s
	}
	var keep func(int) bool
	switch {
	case rowWidth(every) <= size.Width:
		keep = every
	case rowWidth(busy) <= size.Width:
		keep = busy
	}
	if keep == nil {
		for _, b := range btns {
			setVisible(b, false)
		}
		setVisible(sel, true)
		w := min(size.Width, max(sel.MinSize().Width, 240))
		h := sel.MinSize().Height
		sel.Move(fyne.NewPos(0, (size.Height-h)/2))
		sel.Resize(fyne.NewSize(w, h))
		return
	}
	setVisible(sel, false)
	x := float32(0)
	for i, b := range btns {
		if !keep(i) {
			setVisible(b, false)
			continue
		}
		setVisible(b, true)
		ms := b.MinSize()
		b.Move(fyne.NewPos(x, (size.Height-ms.Height)/2))
		b.Resize(ms)
		x += ms.Width + pad
	}
}

// setVisible shows or hides o, touching it only when that changes something.
func setVisible(o fyne.CanvasObject, on bool) {
	if on && !o.Visible() {
		o.Show()
	} else if !on && o.Visible() {
		o.Hide()
	}
}

// buildFilters makes the status filter: "All" and one button per status, each with its count,
// and the drop-down that replaces them when they do not fit.
func (u *UI) buildFilters() fyne.CanvasObject {
	u.filterBtns = map[job.Status]*widget.Button{}
	u.allBtn = widget.NewButton("", func() { u.setFilter("") })
	objs := []fyne.CanvasObject{u.allBtn}
	for _, s := range job.Statuses {
		s := s
		b := widget.NewButton("", func() { u.setFilter(s) })
		u.filterBtns[s] = b
		objs = append(objs, b)
	}
	u.filterSel = newSelect(u.tr, nil, nil)
	u.filterSel.OnChanged = func(string) {
		// The options are "All n" then job.Statuses in order; their text carries the counts.
		switch i := u.filterSel.SelectedIndex(); {
		case i == 0:
			u.setFilter("")
		case i > 0 && i <= len(job.Statuses):
			u.setFilter(job.Statuses[i-1])
		}
	}
	objs = append(objs, u.filterSel)
	u.filterBar = container.New(&filterLayout{u: u}, objs...)
	return u.filterBar
}

// refreshFilters writes the counts into the filter buttons and the drop-down, highlights the
// active filter, and lays the bar out again (which statuses have jobs may have changed).
func (u *UI) refreshFilters() {
	if u.allBtn == nil {
		return
	}
	set := func(b *widget.Button, text string, active bool) {
		imp := widget.LowImportance
		if active {
			imp = widget.HighImportance
		}
		if b.Text != text || b.Importance != imp {
			b.Text, b.Importance = text, imp
			b.Refresh()
		}
	}
	options := []string{u.tr.T("filter.all", groupInt(int64(u.model.total())))}
	selected := 0
	set(u.allBtn, options[0], u.model.filter == "")
	for i, s := range job.Statuses {
		text := fmt.Sprintf("%s %s", u.statusText(s), groupInt(int64(u.model.counts[s])))
		set(u.filterBtns[s], text, u.model.filter == s)
		options = append(options, text)
		if u.model.filter == s {
			selected = i + 1
		}
	}
	// Set the drop-down's fields directly: SetSelected would call OnChanged, and this is not
	// the person choosing.
	u.filterSel.Options = options
	u.filterSel.Selected = options[selected]
	u.filterSel.Refresh()
	u.filterBar.Refresh()
	u.refreshEngineInfo()
}
