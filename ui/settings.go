package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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

// settingsDialog is About & Settings: one page each for the window (version, data folder,
// language, theme, notifications), AI (ai.json), CSV (saved layouts, tolerance), documents,
// the engine and the cloud. Each page saves on its own button; the language, theme,
// notifications, CSV and document settings apply at once (to jobs started afterwards), the AI
// provider and the worker count at the next start (the page says so).
type settingsDialog struct {
	tr  *translator
	svc settingsService
	ctx context.Context
	bar *statusBar
	// do runs a function on the UI goroutine.
	do func(func())
	// window is the dialog's parent; versionText what the General page shows.
	window      fyne.Window
	versionText string

	// What the pages ask of the window and the other screens.
	copyText         func(string)
	setLanguage      func(lang string)
	applyTheme       func(name string)
	editSchema       func(s app.SavedSchema, done func()) *schemaDialog
	showCloudConsole func()
	closeTopDialog   func()

	d    *dialog.CustomDialog
	tabs *container.AppTabs

	theme  *widget.RadioGroup
	notify *widget.Check

	ai        app.AISettings
	provider  *widget.RadioGroup
	endpoint  *keyEntry
	model     *keyEntry
	fallback  *keyEntry
	bRegion   *keyEntry
	bModel    *keyEntry
	aiResult  *widget.Label
	aiTesting bool

	percent  *keyEntry
	count    *keyEntry
	schemas  *fyne.Container
	ocr      *widget.Check
	furigana *widget.Check
	maxPages *keyEntry
	workers  *keyEntry

	cloudText *widget.Label
	message   *widget.Label
}

// settingsService is what the settings pages read and save through the app.
type settingsService interface {
	DataDir() string
	Settings() app.Settings
	SaveSettings(s app.Settings) error
	SavedSchemas() ([]app.SavedSchema, error)
	DeleteSchema(name string) error
	CloudConfig() (app.CloudConfig, error)
	CloudStatus(ctx context.Context, overrides ...map[string]string) (app.CloudStatus, error)
}

// showSettings opens the settings dialog.
func (u *UI) showSettings() { u.openSettings() }

func (u *UI) openSettings() *settingsDialog {
	tr := u.tr
	sd := &settingsDialog{
		tr:               u.tr,
		svc:              u.app,
		ctx:              u.ctx,
		bar:              &u.statusBar,
		do:               func(f func()) { u.do(f) },
		window:           u.Window,
		versionText:      u.version(),
		copyText:         func(s string) { u.fyneApp.Clipboard().SetContent(s) },
		applyTheme:       u.applyTheme,
		editSchema:       u.editSchema,
		showCloudConsole: u.showCloudConsole,
		closeTopDialog:   u.closeTopDialog,
	}
	// The pages speak the language chosen on the General page from then on.
	sd.setLanguage = func(lang string) {
		u.SetLanguage(lang)
		sd.tr = u.tr
	}
	sd.message = widget.NewLabel("")
	sd.message.Wrapping = fyne.TextWrapWord
	sd.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon(tr.T("settings.page.general"), theme.SettingsIcon(), sd.generalPage()),
		container.NewTabItemWithIcon(tr.T("settings.page.ai"), theme.ComputerIcon(), sd.aiPage()),
		container.NewTabItemWithIcon(tr.T("settings.page.csv"), theme.GridIcon(), sd.csvPage()),
		container.NewTabItemWithIcon(tr.T("settings.page.documents"), theme.DocumentIcon(), sd.docPage()),
		container.NewTabItemWithIcon(tr.T("settings.page.engine"), theme.MediaPlayIcon(), sd.enginePage()),
		container.NewTabItemWithIcon(tr.T("settings.page.cloud"), theme.StorageIcon(), sd.cloudPage()),
	)
	body := container.NewBorder(nil, sd.message, nil, nil, sd.tabs)
	sd.d = dialog.NewCustom(tr.T("settings.title"), tr.T("dialog.close"), body, u.Window)
	sd.d.Resize(fyne.NewSize(860, 560))
	sd.d.SetOnClosed(u.refreshCloud) // the Cloud page may have changed cloud.json
	u.settingsDlg = sd
	u.dialogOpened(sd.d)
	sd.d.Show()
	return sd
}

func (sd *settingsDialog) label(key string) fyne.CanvasObject {
	return hintText(sd.tr.T(key), theme.SizeNameText, fyne.TextWrapOff, fyne.TextAlignLeading)
}

// note is a wrapped hint under a page's fields.
func (sd *settingsDialog) note(key string, args ...any) fyne.CanvasObject {
	text := sd.tr.T(key, args...)
	return hintText(text, theme.SizeNameText, wrapFor(text), fyne.TextAlignLeading)
}

// say shows the outcome of a page's action under the pages.
func (sd *settingsDialog) say(err error, okKey string, args ...any) {
	if err != nil {
		sd.message.Importance = widget.DangerImportance
		sd.message.SetText(errorLine(sd.tr, err))
		return
	}
	sd.message.Importance = widget.SuccessImportance
	sd.message.SetText(sd.tr.T(okKey, args...))
}

func (sd *settingsDialog) generalPage() fyne.CanvasObject {
	tr := sd.tr
	dir := widget.NewLabel(sd.svc.DataDir())
	dir.Selectable = true
	dir.Wrapping = fyne.TextWrapBreak
	copyBtn := widget.NewButtonWithIcon(tr.T("settings.copy"), theme.ContentCopyIcon(), func() {
		sd.copyText(sd.svc.DataDir())
		sd.bar.setStatus(tr.T("settings.copied"))
	})
	var types []string
	for _, t := range app.Types() {
		types = append(types, typeLabel(tr, t)) // its name, not the internal type (SUBGOAL_GENERATION)
	}
	lang := widget.NewRadioGroup([]string{"日本語", "English"}, nil)
	lang.Horizontal = true
	if tr.lang == LangEn {
		lang.Selected = "English"
	} else {
		lang.Selected = "日本語"
	}
	lang.OnChanged = func(s string) {
		sd.d.Hide()
		if s == "English" {
			sd.setLanguage(LangEn)
		} else {
			sd.setLanguage(LangJa)
		}
	}
	set := sd.svc.Settings()
	themes := []string{tr.T("settings.theme.system"), tr.T("settings.theme.light"), tr.T("settings.theme.dark")}
	sd.theme = widget.NewRadioGroup(themes, nil)
	sd.theme.Horizontal = true
	sd.theme.Selected = tr.T("settings.theme." + orDefault(set.Theme, "system"))
	sd.theme.OnChanged = func(s string) {
		set := sd.svc.Settings()
		for _, v := range []string{"system", "light", "dark"} {
			if tr.T("settings.theme."+v) == s {
				set.Theme = v
			}
		}
		err := sd.svc.SaveSettings(set)
		if err == nil {
			sd.applyTheme(set.Theme)
		}
		sd.say(err, "settings.saved")
	}
	sd.notify = widget.NewCheck(tr.T("settings.notify_on"), nil)
	sd.notify.Checked = set.NotifyOn()
	sd.notify.OnChanged = func(on bool) {
		set := sd.svc.Settings()
		set.Notify = &on
		sd.say(sd.svc.SaveSettings(set), "settings.saved")
	}
	typesLabel := widget.NewLabel(strings.Join(types, ", "))
	typesLabel.Wrapping = fyne.TextWrapWord
	form := container.New(layout.NewFormLayout(),
		sd.label("settings.version"), widget.NewLabel("JobDesk "+sd.versionText),
		sd.label("settings.data_dir"), container.NewBorder(nil, nil, nil, copyBtn, dir),
		sd.label("settings.types"), typesLabel,
		sd.label("settings.language"), lang,
		sd.label("settings.theme"), sd.theme,
		sd.label("settings.notify"), sd.notify,
	)
	return container.NewVScroll(container.NewVBox(form, sd.note("settings.note")))
}

func (sd *settingsDialog) aiPage() fyne.CanvasObject {
	tr := sd.tr
	s, err := app.LoadAISettingsFile(sd.svc.DataDir())
	if err != nil {
		sd.say(err, "")
	}
	sd.ai = s
	sd.provider = widget.NewRadioGroup([]string{tr.T("settings.ai.device"), tr.T("settings.ai.bedrock"), tr.T("settings.ai.auto")}, nil)
	sd.provider.Horizontal = true
	switch s.Provider {
	case "bedrock":
		sd.provider.Selected = tr.T("settings.ai.bedrock")
	case "auto":
		sd.provider.Selected = tr.T("settings.ai.auto")
	default:
		sd.provider.Selected = tr.T("settings.ai.device")
	}
	entry := func(v, placeholder string) *keyEntry {
		e := newKeyEntryEsc(sd.closeTopDialog, false)
		e.SetText(v)
		e.SetPlaceHolder(placeholder)
		return e
	}
	sd.endpoint = entry(s.Endpoint, "http://127.0.0.1:11434/v1")
	sd.model = entry(s.Model, app.DefaultAIModel)
	sd.fallback = entry(s.FallbackModel, "")
	sd.bRegion = entry(s.BedrockRegion, "ap-northeast-1")
	sd.bModel = entry(s.BedrockModel, "anthropic.claude-3-haiku-20240307-v1:0")
	sd.aiResult = widget.NewLabel("")
	sd.aiResult.Wrapping = fyne.TextWrapWord
	save := widget.NewButtonWithIcon(tr.T("settings.save"), theme.DocumentSaveIcon(), func() {
		err := app.SaveAISettings(sd.svc.DataDir(), sd.aiSettings())
		sd.say(err, "settings.saved_restart")
	})
	save.Importance = widget.HighImportance
	testBtn := widget.NewButtonWithIcon(tr.T("settings.test"), theme.MediaPlayIcon(), sd.testAI)
	form := widget.NewForm(
		widget.NewFormItem(tr.T("settings.ai.provider"), sd.provider),
		widget.NewFormItem(tr.T("settings.ai.endpoint"), sd.endpoint),
		widget.NewFormItem(tr.T("settings.ai.model"), sd.model),
		widget.NewFormItem(tr.T("settings.ai.fallback"), sd.fallback),
		widget.NewFormItem(tr.T("settings.ai.region"), sd.bRegion),
		widget.NewFormItem(tr.T("settings.ai.bedrock_model"), sd.bModel),
	)
	return container.NewVScroll(container.NewVBox(form, container.NewHBox(save, testBtn), sd.aiResult,
		sd.note("settings.ai.note")))
}

// aiSettings reads the AI page back into the settings it was opened with (keys it does not
// show, such as prices, stay).
func (sd *settingsDialog) aiSettings() app.AISettings {
	tr := sd.tr
	s := sd.ai
	switch sd.provider.Selected {
	case tr.T("settings.ai.bedrock"):
		s.Provider = "bedrock"
	case tr.T("settings.ai.auto"):
		s.Provider = "auto"
	default:
		s.Provider = "openai"
	}
	s.Endpoint = strings.TrimSpace(sd.endpoint.Text)
	s.Model = strings.TrimSpace(sd.model.Text)
	s.FallbackModel = strings.TrimSpace(sd.fallback.Text)
	s.BedrockRegion = strings.TrimSpace(sd.bRegion.Text)
	s.BedrockModel = strings.TrimSpace(sd.bModel.Text)
	return s
}

// testAI sends one tiny request with the page's settings and says what answered.
func (sd *settingsDialog) testAI() {
	if sd.aiTesting {
		return
	}
	sd.aiTesting = true
	tr := sd.tr
	sd.aiResult.Importance = widget.MediumImportance
	sd.aiResult.SetText(tr.T("settings.testing"))
	s := sd.aiSettings()
	go func() {
		r, err := app.TestAIConnection(sd.ctx, s)
		sd.do(func() {
			sd.aiTesting = false
			if err != nil {
				sd.aiResult.Importance = widget.DangerImportance
				sd.aiResult.SetText(tr.T("settings.test_failed", errorLine(tr, err)))
				return
			}
			sd.aiResult.Importance = widget.SuccessImportance
			sd.aiResult.SetText(tr.T("settings.ai.answered", r.Provider, r.Model, r.Latency.Round(time.Millisecond), r.Reply))
		})
	}()
}

func (sd *settingsDialog) csvPage() fyne.CanvasObject {
	tr := sd.tr
	set := sd.svc.Settings()
	sd.percent = newKeyEntryEsc(sd.closeTopDialog, false)
	sd.percent.SetText(strconv.FormatFloat(set.CSV.TolerancePercent, 'f', -1, 64))
	sd.count = newKeyEntryEsc(sd.closeTopDialog, false)
	sd.count.SetText(strconv.Itoa(set.CSV.ToleranceCount))
	save := widget.NewButtonWithIcon(tr.T("settings.save"), theme.DocumentSaveIcon(), func() {
		set := sd.svc.Settings()
		p, err1 := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(sd.percent.Text), "%"), 64)
		n, err2 := strconv.Atoi(strings.TrimSpace(sd.count.Text))
		if err1 != nil || err2 != nil {
			sd.say(errorf(tr.T("settings.csv.bad_number")), "")
			return
		}
		set.CSV.TolerancePercent, set.CSV.ToleranceCount = p, n
		sd.say(sd.svc.SaveSettings(set), "settings.saved")
	})
	save.Importance = widget.HighImportance
	sd.schemas = container.NewVBox()
	sd.fillSchemas()
	form := widget.NewForm(
		widget.NewFormItem(tr.T("schema.tolerance_percent"), sd.percent),
		widget.NewFormItem(tr.T("schema.tolerance_count"), sd.count),
	)
	head := widget.NewLabel(tr.T("settings.csv.schemas"))
	head.TextStyle = fyne.TextStyle{Bold: true}
	return container.NewVScroll(container.NewVBox(form, container.NewHBox(save), sd.note("settings.csv.note"),
		widget.NewSeparator(), head, sd.schemas))
}

// fillSchemas lists the saved CSV layouts, each with Edit and Delete.
func (sd *settingsDialog) fillSchemas() {
	tr := sd.tr
	sd.schemas.RemoveAll()
	saved, err := sd.svc.SavedSchemas()
	if err != nil {
		sd.say(err, "")
	}
	if len(saved) == 0 {
		sd.schemas.Add(sd.note("settings.csv.none"))
	}
	for _, s := range saved {
		s := s
		name := widget.NewLabel(fmt.Sprintf("%s  (%s)", s.Name, strings.Join(s.Names(), ", ")))
		name.Truncation = fyne.TextTruncateEllipsis
		edit := widget.NewButtonWithIcon(tr.T("settings.edit"), theme.DocumentCreateIcon(), func() {
			sd.editSchema(s, sd.fillSchemas)
		})
		del := widget.NewButtonWithIcon(tr.T("settings.delete"), theme.DeleteIcon(), func() {
			dialog.ShowConfirm(tr.T("settings.delete"), tr.T("settings.csv.delete_question", s.Name), func(yes bool) {
				if yes {
					sd.say(sd.svc.DeleteSchema(s.Name), "settings.csv.deleted", s.Name)
					sd.fillSchemas()
				}
			}, sd.window)
		})
		sd.schemas.Add(container.NewBorder(nil, nil, nil, container.NewHBox(edit, del), name))
	}
	sd.schemas.Refresh()
}

func (sd *settingsDialog) docPage() fyne.CanvasObject {
	tr := sd.tr
	set := sd.svc.Settings()
	sd.ocr = widget.NewCheck(tr.T("settings.docs.ocr"), nil)
	sd.ocr.Checked = set.Docs.OCR
	sd.furigana = widget.NewCheck(tr.T("settings.docs.furigana"), nil)
	sd.furigana.Checked = set.Docs.Furigana
	sd.maxPages = newKeyEntryEsc(sd.closeTopDialog, false)
	sd.maxPages.SetText(strconv.Itoa(set.Docs.MaxPages))
	save := widget.NewButtonWithIcon(tr.T("settings.save"), theme.DocumentSaveIcon(), func() {
		set := sd.svc.Settings()
		n, err := strconv.Atoi(strings.TrimSpace(sd.maxPages.Text))
		if err != nil {
			sd.say(errorf(tr.T("settings.docs.bad_pages")), "")
			return
		}
		set.Docs = app.DocSettings{OCR: sd.ocr.Checked, Furigana: sd.furigana.Checked, MaxPages: n}
		sd.say(sd.svc.SaveSettings(set), "settings.saved")
	})
	save.Importance = widget.HighImportance
	form := widget.NewForm(
		widget.NewFormItem("", sd.ocr),
		widget.NewFormItem("", sd.furigana),
		widget.NewFormItem(tr.T("settings.docs.max_pages"), sd.maxPages),
	)
	return container.NewVScroll(container.NewVBox(form, container.NewHBox(save), sd.note("settings.docs.note")))
}

func (sd *settingsDialog) enginePage() fyne.CanvasObject {
	tr := sd.tr
	set := sd.svc.Settings()
	sd.workers = newKeyEntryEsc(sd.closeTopDialog, false)
	sd.workers.SetText(strconv.Itoa(set.Engine.Workers))
	save := widget.NewButtonWithIcon(tr.T("settings.save"), theme.DocumentSaveIcon(), func() {
		set := sd.svc.Settings()
		n, err := strconv.Atoi(strings.TrimSpace(sd.workers.Text))
		if err != nil {
			sd.say(errorf(tr.T("settings.engine.bad_workers")), "")
			return
		}
		set.Engine.Workers = n
		sd.say(sd.svc.SaveSettings(set), "settings.saved_restart")
	})
	save.Importance = widget.HighImportance
	form := widget.NewForm(widget.NewFormItem(tr.T("settings.engine.workers"), sd.workers))
	return container.NewVScroll(container.NewVBox(form, container.NewHBox(save), sd.note("settings.engine.note")))
}

func (sd *settingsDialog) cloudPage() fyne.CanvasObject {
	tr := sd.tr
	sd.cloudText = widget.NewLabel(tr.T("settings.cloud.press"))
	sd.cloudText.Wrapping = fyne.TextWrapWord
	testBtn := widget.NewButtonWithIcon(tr.T("settings.test"), theme.MediaPlayIcon(), sd.testCloud)
	consoleBtn := widget.NewButtonWithIcon(tr.T("settings.cloud.console"), theme.StorageIcon(), sd.showCloudConsole)
	if cfg, err := sd.svc.CloudConfig(); err != nil || !cfg.Configured() {
		consoleBtn.Disable()
	}
	testBtn.Importance = widget.HighImportance
	return container.NewVScroll(container.NewVBox(container.NewHBox(testBtn, consoleBtn), sd.cloudText, sd.note("settings.cloud.note"),
		sd.note("settings.cloud.console_note")))
}

// testCloud runs the checks of `jobdesk cloud status` and shows them.
func (sd *settingsDialog) testCloud() {
	tr := sd.tr
	sd.cloudText.SetText(tr.T("settings.testing"))
	go func() {
		ctx, cancel := context.WithTimeout(sd.ctx, 60*time.Second)
		defer cancel()
		st, err := sd.svc.CloudStatus(ctx)
		sd.do(func() {
			if err != nil {
				sd.cloudText.SetText(errorLine(tr, err))
				return
			}
			sd.cloudText.SetText(cloudStatusText(tr, st))
		})
	}()
}

// cloudStatusText is `jobdesk cloud status` in the window's language.
func cloudStatusText(tr *translator, st app.CloudStatus) string {
	var b strings.Builder
	if st.Configured {
		b.WriteString(tr.T("settings.cloud.configured") + "\n")
	} else {
		b.WriteString(tr.T("settings.cloud.missing", st.Missing) + "\n")
	}
	fmt.Fprintf(&b, "%s: %s\n", tr.T("settings.cloud.region"), orDefault(st.Region, "—"))
	if st.Identity != "" {
		fmt.Fprintf(&b, "%s: %s (%s)\n", tr.T("settings.cloud.identity"), st.Identity, st.Account)
	}
	if st.Online {
		b.WriteString(tr.T("settings.cloud.online") + "\n")
	} else {
		b.WriteString(tr.T("settings.cloud.offline") + "\n")
	}
	for _, p := range st.Probes {
		state := "OK"
		if p.Error != "" {
			state = p.Error
			if tr.lang == LangJa && p.ErrorJa != "" {
				state = p.ErrorJa
			}
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", p.Service, p.Resource, state)
	}
	fmt.Fprintf(&b, "%s\n", tr.T("settings.cloud.outbox", groupInt(int64(st.Outbox))))
	if st.LastSync != nil {
		fmt.Fprintf(&b, "%s\n", tr.T("settings.cloud.last_sync", st.LastSync.Format(time.DateTime)))
	} else {
		b.WriteString(tr.T("settings.cloud.never") + "\n")
	}
	return strings.TrimSpace(b.String())
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// applyTheme sets the window's theme: "light", "dark" or "system" (the desktop's choice).
func (u *UI) applyTheme(name string) {
	switch name {
	case "light":
		u.fyneApp.Settings().SetTheme(contrastTheme{Theme: theme.DefaultTheme(), variant: theme.VariantLight, forced: true})
	case "dark":
		u.fyneApp.Settings().SetTheme(contrastTheme{Theme: theme.DefaultTheme(), variant: theme.VariantDark, forced: true})
	default:
		u.fyneApp.Settings().SetTheme(contrastTheme{Theme: theme.DefaultTheme()})
	}
}
