package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// version is the packaged version, or Version for a plain `go build`.
func (u *UI) version() string {
	if v := u.fyneApp.Metadata().Version; v != "" && v != "0.0.1" {
		return v
	}
	return Version
}

// showSettings opens About & Settings: version, the data folder (copyable), the job types this
// build runs, and the language.
func (u *UI) showSettings() {
	tr := u.tr
	dir := widget.NewLabel(u.app.DataDir())
	dir.Selectable = true
	dir.Wrapping = fyne.TextWrapBreak
	copyBtn := widget.NewButtonWithIcon(tr.T("settings.copy"), theme.ContentCopyIcon(), func() {
		u.fyneApp.Clipboard().SetContent(u.app.DataDir())
		u.setStatus(tr.T("settings.copied"))
	})
	var types []string
	for _, t := range app.Types() {
		if name := u.typeText(t); name != t {
			types = append(types, fmt.Sprintf("%s (%s)", name, t))
		} else {
			types = append(types, t)
		}
	}
	lang := widget.NewRadioGroup([]string{"日本語", "English"}, nil)
	lang.Horizontal = true
	if tr.lang == LangEn {
		lang.Selected = "English"
	} else {
		lang.Selected = "日本語"
	}
	var d dialog.Dialog
	lang.OnChanged = func(s string) {
		d.Hide()
		if s == "English" {
			u.SetLanguage(LangEn)
		} else {
			u.SetLanguage(LangJa)
		}
	}
	label := func(key string) fyne.CanvasObject {
		return hintText(tr.T(key), theme.SizeNameText, fyne.TextWrapOff, fyne.TextAlignLeading)
	}
	typesLabel := widget.NewLabel(strings.Join(types, ", "))
	typesLabel.Wrapping = fyne.TextWrapWord
	form := container.New(layout.NewFormLayout(),
		label("settings.version"), widget.NewLabel("JobDesk "+u.version()),
		label("settings.data_dir"), container.NewBorder(nil, nil, nil, copyBtn, dir),
		label("settings.types"), typesLabel,
		label("settings.language"), lang,
	)
	note := hintText(tr.T("settings.note"), theme.SizeNameText, fyne.TextWrapWord, fyne.TextAlignLeading)
	d = dialog.NewCustom(tr.T("settings.title"), tr.T("dialog.close"), container.NewVBox(form, note), u.Window)
	d.Resize(fyne.NewSize(640, 360))
	d.Show()
}
