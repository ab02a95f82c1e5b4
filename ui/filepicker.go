package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// This file is the window's file picker (Ctrl+O and the drop zone's button). Fyne 2.7's file
// dialog picks one file at a time; staff pick a month of invoices at once, so the picker is
// JobDesk's own: one folder's contents, folders first, a tap ticks or unticks a file (ticks
// survive moving to another folder), "Select all" ticks every file of the folder, and Open
// submits them all as one drop would. The last folder used is remembered.

// prefPickerDir is the preference holding the folder the picker showed last.
const prefPickerDir = "picker.dir"

// pickEntry is one line of the picker: a folder or a file of the folder shown.
type pickEntry struct {
	name  string
	dir   bool
	size  int64
	mtime time.Time
}

// filePicker is one open picker.
type filePicker struct {
	u       *UI
	dir     string
	entries []pickEntry
	chosen  map[string]bool // full paths ticked, in any folder
	onPick  func(paths []string)

	path    *widget.Label
	list    *widget.List
	note    *widget.Label // the folder's error, or that it holds nothing
	count   *widget.Label
	all     *widget.Button // Select all
	open    *widget.Button
	dlg     *dialog.CustomDialog
	picking bool

	// saving: the picker chooses where a file is saved (openSaver): a tapped file lends its
	// name to the name field, and Save hands over the folder shown joined with that name.
	saving bool
	name   *keyEntry
	onSave func(path string)
}

// pickFiles opens the picker; the files ticked when Open is pressed become jobs.
func (u *UI) pickFiles() {
	u.openPicker(u.pickerStart(), u.submit)
}

// pickerStart is the folder the picker opens on: the last one used, else the home folder.
func (u *UI) pickerStart() string {
	if d := u.fyneApp.Preferences().String(prefPickerDir); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "."
}

// openPicker shows a picker on folder dir that hands the chosen paths to onPick.
func (u *UI) openPicker(dir string, onPick func([]string)) *filePicker {
	return u.newPicker(&filePicker{u: u, chosen: map[string]bool{}, onPick: onPick}, dir)
}

// openSaver shows the picker on folder dir to choose where a file is saved, name proposed; the
// chosen path goes to onSave (after asking, when a file of that name is there). JobDesk's own
// picker, in the window's language and opening in the folder used last, instead of the
// toolkit's English save dialog that opened in the home folder.
func (u *UI) openSaver(dir, name string, onSave func(path string)) *filePicker {
	p := &filePicker{u: u, chosen: map[string]bool{}, saving: true, onSave: onSave}
	p.name = newKeyEntry(u, false)
	p.name.SetText(name)
	p.name.OnChanged = func(string) { p.refreshCount() }
	p.name.OnSubmitted = func(string) { p.pick() }
	return u.newPicker(p, dir)
}

// newPicker lays picker p out on folder dir and shows it.
func (u *UI) newPicker(p *filePicker, dir string) *filePicker {
	p.path = widget.NewLabel("")
	p.path.Truncation = fyne.TextTruncateEllipsis
	p.note = widget.NewLabel("")
	p.note.Wrapping = fyne.TextWrapWord
	p.note.Hide()
	p.count = widget.NewLabel("")
	p.list = widget.NewList(func() int { return len(p.entries) }, p.newRow, p.updateRow)
	p.list.OnSelected = func(id widget.ListItemID) {
		p.list.UnselectAll()
		p.tap(id)
	}
	up := widget.NewButtonWithIcon("", theme.MoveUpIcon(), func() { p.show(filepath.Dir(p.dir)) })
	places := container.NewHBox()
	for _, pl := range pickerPlaces() {
		dir := pl.dir
		places.Add(widget.NewButtonWithIcon(u.tr.T(pl.key), theme.FolderIcon(), func() { p.show(dir) }))
	}
	p.all = widget.NewButton(u.tr.T("picker.all"), p.selectAll)
	top := container.NewVBox(places, container.NewBorder(nil, nil, up, p.all, p.path))
	cancel := widget.NewButton(u.tr.T("dialog.cancel"), func() { p.dlg.Hide() })
	p.open = widget.NewButtonWithIcon("", theme.ConfirmIcon(), p.pick)
	p.open.Importance = widget.HighImportance
	bottom, title := fyne.CanvasObject(p.count), u.tr.T("picker.title")
	if p.saving {
		p.all.Hide()
		bottom = container.NewBorder(nil, nil, widget.NewLabel(u.tr.T("saver.name")), nil, p.name)
		title = u.tr.T("saver.title")
	}
	body := container.NewBorder(top, bottom, nil, nil, container.NewStack(p.list, p.note))
	p.dlg = dialog.NewCustomWithoutButtons(title, body, u.Window)
	p.dlg.SetButtons([]fyne.CanvasObject{cancel, p.open})
	p.show(dir)
	p.dlg.Resize(fyne.NewSize(860, 580))
	u.dialogOpened(p.dlg)
	p.dlg.Show()
	if p.saving {
		u.Window.Canvas().Focus(p.name)
	}
	return p
}

// pickerPlace is a folder offered above the list.
type pickerPlace struct{ key, dir string }

// pickerPlaces are the home folder and its usual folders that exist here.
func pickerPlaces() []pickerPlace {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	out := []pickerPlace{{"picker.home", home}}
	for _, p := range []pickerPlace{{"picker.desktop", "Desktop"}, {"picker.documents", "Documents"}, {"picker.downloads", "Downloads"}} {
		if st, err := os.Stat(filepath.Join(home, p.dir)); err == nil && st.IsDir() {
			out = append(out, pickerPlace{p.key, filepath.Join(home, p.dir)})
		}
	}
	return out
}

// show reads folder dir into the list: folders first, then files, each by name; hidden ones
// (a leading dot) are left out.
func (p *filePicker) show(dir string) {
	dir = filepath.Clean(dir)
	p.dir = dir
	p.path.SetText(dir)
	p.entries = p.entries[:0]
	des, err := os.ReadDir(dir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		e := pickEntry{name: de.Name(), dir: de.IsDir()}
		if info, err := os.Stat(filepath.Join(dir, de.Name())); err == nil { // follows links
			e.dir, e.size, e.mtime = info.IsDir(), info.Size(), info.ModTime()
		}
		p.entries = append(p.entries, e)
	}
	sort.SliceStable(p.entries, func(i, j int) bool {
		if p.entries[i].dir != p.entries[j].dir {
			return p.entries[i].dir
		}
		return strings.ToLower(p.entries[i].name) < strings.ToLower(p.entries[j].name)
	})
	switch {
	case err != nil:
		p.note.SetText(p.u.tr.T("picker.unreadable") + "\n" + err.Error())
		p.note.Show()
	case len(p.entries) == 0:
		p.note.SetText(p.u.tr.T("picker.empty"))
		p.note.Show()
	default:
		p.note.Hide()
	}
	p.list.Refresh()
	p.list.ScrollToTop()
	p.refreshCount()
}

// newRow is a list line: an icon, the name, and the size and date of a file.
func (p *filePicker) newRow() fyne.CanvasObject {
	name := widget.NewLabel("")
	name.Truncation = fyne.TextTruncateEllipsis
	info := widget.NewLabel("")
	return container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()), info, name)
}

// updateRow shows entry id in line o.
func (p *filePicker) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	if id >= len(p.entries) {
		return
	}
	e := p.entries[id]
	c := o.(*fyne.Container)
	name, icon, info := c.Objects[0].(*widget.Label), c.Objects[1].(*widget.Icon), c.Objects[2].(*widget.Label)
	name.SetText(e.name)
	switch {
	case e.dir:
		icon.SetResource(theme.FolderIcon())
		info.SetText("")
	case p.saving:
		icon.SetResource(theme.FileIcon())
		info.SetText(p.fileInfo(e))
	case p.chosen[filepath.Join(p.dir, e.name)]:
		icon.SetResource(theme.CheckButtonCheckedIcon())
		info.SetText(p.fileInfo(e))
	default:
		icon.SetResource(theme.CheckButtonIcon())
		info.SetText(p.fileInfo(e))
	}
}

// fileInfo is a file's size and modification time, as the list shows them.
func (p *filePicker) fileInfo(e pickEntry) string {
	return sizeText(e.size) + "  " + e.mtime.Local().Format("2006/01/02 15:04")
}

// sizeText is a file size for people: bytes up to a kilobyte, then KB, MB, GB with one decimal
// below ten.
func sizeText(n int64) string {
	if n < 1024 {
		return groupInt(n) + " B"
	}
	v, unit := float64(n)/1024, "KB"
	for _, u := range []string{"MB", "GB", "TB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// tap opens a folder or ticks (unticks) a file.
func (p *filePicker) tap(id widget.ListItemID) {
	if id < 0 || id >= len(p.entries) {
		return
	}
	e := p.entries[id]
	path := filepath.Join(p.dir, e.name)
	if e.dir {
		p.show(path)
		return
	}
	if p.saving {
		p.name.SetText(e.name)
		return
	}
	if p.chosen[path] {
		delete(p.chosen, path)
	} else {
		p.chosen[path] = true
	}
	p.list.RefreshItem(id)
	p.refreshCount()
}

// selectAll ticks every file of the folder shown, or unticks them when all are ticked.
func (p *filePicker) selectAll() {
	all := true
	for _, e := range p.entries {
		if !e.dir && !p.chosen[filepath.Join(p.dir, e.name)] {
			all = false
		}
	}
	for _, e := range p.entries {
		if !e.dir {
			if all {
				delete(p.chosen, filepath.Join(p.dir, e.name))
			} else {
				p.chosen[filepath.Join(p.dir, e.name)] = true
			}
		}
	}
	p.list.Refresh()
	p.refreshCount()
}

// refreshCount shows how many files are ticked; Open is on once one is.
func (p *filePicker) refreshCount() {
	if p.saving {
		p.count.Hide()
		p.open.SetText(p.u.tr.T("saver.save"))
		setEnabled(p.open, strings.TrimSpace(p.name.Text) != "")
		return
	}
	n := len(p.chosen)
	p.count.SetText(p.u.tr.T("picker.count", groupInt(int64(n))))
	p.open.SetText(p.u.tr.T("picker.open", groupInt(int64(n))))
	if n == 0 {
		p.open.Disable()
	} else {
		p.open.Enable()
	}
}

// pick closes the picker and hands over the ticked files in name order.
func (p *filePicker) pick() {
	if p.saving {
		p.save()
		return
	}
	if len(p.chosen) == 0 || p.picking {
		return
	}
	p.picking = true
	paths := make([]string, 0, len(p.chosen))
	for path := range p.chosen {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	p.u.fyneApp.Preferences().SetString(prefPickerDir, p.dir)
	p.dlg.Hide()
	p.onPick(paths)
}

// save hands over the folder shown joined with the name typed, asking first when a file of
// that name is there.
func (p *filePicker) save() {
	name := strings.TrimSpace(p.name.Text)
	if name == "" || p.picking {
		return
	}
	path := filepath.Join(p.dir, filepath.Base(name))
	done := func() {
		p.picking = true
		p.u.fyneApp.Preferences().SetString(prefPickerDir, p.dir)
		p.dlg.Hide()
		p.onSave(path)
	}
	if _, err := os.Stat(path); err != nil {
		done()
		return
	}
	tr := p.u.tr
	d := dialog.NewConfirm(tr.T("saver.replace_title"), tr.T("saver.replace", filepath.Base(path)), func(ok bool) {
		if ok {
			done()
		}
	}, p.u.Window)
	d.SetConfirmText(tr.T("saver.replace_yes"))
	d.SetDismissText(tr.T("dialog.cancel"))
	p.u.dialogOpened(d)
	d.Show()
}
