package ui

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/assets"
	"jobdesk/engine/job"
	"jobdesk/ui/bridge"
)

// AppID is the application id (preferences, desktop integration); FyneApp.toml uses the same.
const AppID = "jp.jobdesk.app"

// Version is shown in the About dialog when the binary carries no packaging metadata.
const Version = "0.1.0"

// dbusUnreachable is the toolkit's log line when a desktop service it calls has no session bus.
const dbusUnreachable = "Unable to connect to session D-Bus"

// prefLanguage is the preference key of the chosen language.
const prefLanguage = "language"

// UI is JobDesk's main window and everything it shows.
type UI struct {
	fyneApp fyne.App
	app     Service
	Window  fyne.Window
	tr      *translator

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// do runs a function on the UI goroutine; fyne.Do, or a queue pumped by tests.
	do func(func())

	mu         sync.Mutex // guards loadFilter, loadQuery and loadedN, read by the event loop
	loadFilter job.Status
	loadQuery  listQuery
	loadedN    int
	// allCounts are the counts of every job read last (the list's counts follow its search).
	allCounts map[job.Status]int

	// events carries the engine's events to the widgets (ui/bridge), made by bridge().
	events     *bridge.Bridge
	bridgeOnce sync.Once

	dialogs []dialog.Dialog // dialogs opened through dialogOpened, newest last (Esc closes it)
	// dialogShown holds those of dialogs still open.
	dialogShown map[dialog.Dialog]bool
	// schemaDlg is the schema dialog opened last (a CSV no saved schema fits).
	schemaDlg *schemaDialog
	// closing is the question asked on closing with jobs running, while it is open.
	closing dialog.Dialog
	// settingsDlg is the settings dialog opened last.
	settingsDlg *settingsDialog

	// cloud is the cloud's state read last (zero until read: not configured).
	cloud app.CloudStatus
	// eta estimates the time left of jobs under way from their progress (timeleft.go).
	eta *timeLeft

	// notifier sends the notifications of ended jobs and keeps the tray (notify.go).
	notifier

	metrics *metricsView // the metrics view opened last
	// alertBar is the header's alert banner (metrics.go).
	alertBar

	// widgets, rebuilt when the language changes
	filterBtns map[job.Status]*widget.Button
	allBtn     *widget.Button
	filterSel  *widget.Select // replaces the buttons when they do not fit
	filterBar  *fyne.Container
	search     *widget.Entry  // the list's search box (Ctrl+F)
	typeSel    *widget.Select // the type filter
	dateSel    *widget.Select // the date filter
	detail     *detailPane
	cloudInfo  *widget.Label  // the cloud's state, shown only when configured
	cloudOps   *widget.Button // opens the cloud operations console, shown only when configured

	// dropZone is the band that says what to drop (drop.go).
	dropZone

	// jobListView is the job list, its selection and paging (joblist.go).
	jobListView

	// statusBar is the bottom line: its message and the engine's counts (statusbar.go).
	statusBar

	// resultViews are the views of an ended job's result and its cards (resultviews.go).
	resultViews
}

// New builds the window for a (not yet shown) on fyneApp. The engine is not started: Run does
// that, and tests choose when.
func New(fyneApp fyne.App, a Service) *UI {
	u := &UI{
		fyneApp: fyneApp,
		app:     a,
		do:      fyne.Do,
		eta:     newTimeLeft(time.Now),

		dialogShown: map[dialog.Dialog]bool{},
	}
	u.notifier = notifier{
		openedAt:         time.Now().Truncate(time.Millisecond),
		notified:         map[int64]time.Time{},
		sendNotification: fyneApp.SendNotification,
		desktopApp:       fyneApp,
		do:               func(f func()) { u.do(f) },
		notifyOn:         u.notifyOn,
		showWindow: func() {
			u.Window.Show()
			u.Window.RequestFocus()
		},
		showJob:      u.showJob,
		engineCounts: u.engineCounts,
	}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.resultViews = newResultViews(u)
	u.jobListView = jobListView{
		model:          newJobModel(),
		ctx:            u.ctx,
		actions:        a,
		bar:            &u.statusBar,
		do:             func(f func()) { u.do(f) },
		fetch:          u.fetch,
		onSelect:       func(id int64) { u.detail.load(id) },
		onLoaded:       u.noteLoaded,
		onKey:          u.typedKey,
		confirmCancel:  u.confirmCancel,
		showError:      u.showError,
		setStatusError: u.setStatusError,
		timeLeft:       func(id int64) string { return u.eta.text(u.tr, id) },
	}
	u.dropZone = dropZone{
		target:          app.TargetDevice,
		cloudConfigured: func() bool { return u.cloud.Configured },
		ctx:             u.ctx,
		svc:             a,
		do:              func(f func()) { u.do(f) },
		options:         u.submitOptions,
		report:          u.setStatus,
		reportError:     u.setStatusError,
		errorDialog:     u.showError,
		reveal:          u.revealJob,
		selectJob:       u.showJob,
		askSchema:       func(path string, p *app.CSVSniffResult) { u.showSchemaDialog(path, p) },
		parent:          func() fyne.Window { return u.Window },
		opened:          u.dialogOpened,
	}
	u.alertBar = alertBar{
		svc:         a,
		do:          func(f func()) { u.do(f) },
		notifyOn:    u.notifyOn,
		send:        func(n *fyne.Notification) { u.sendNotification(n) },
		showMetrics: func() { u.showMetrics() },
	}
	u.tr = newTranslator(fyneApp.Preferences().StringWithFallback(prefLanguage, systemLanguage()))
	u.applyTheme(a.Settings().Theme) // the toolkit's colours, with text colours of enough contrast
	u.Window = fyneApp.NewWindow("JobDesk")
	u.Window.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon()))
	u.Window.Resize(fyne.NewSize(1180, 760))
	u.Window.SetMaster()
	u.Window.SetOnDropped(u.dropZone.handleDrop)
	u.acceptVirtualFiles()
	u.Window.SetContent(u.build())
	u.Window.SetOnClosed(u.stop)
	u.Window.SetCloseIntercept(u.askBeforeClosing)
	u.setupTray(u.tr)
	u.setupKeys()
	return u
}

// Start begins following the engine's events and reads the first page of jobs.
func (u *UI) Start() {
	// Subscribed before the first read of the jobs: a job submitted in between is not missed.
	follow := u.bridge().Listen()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		follow(u.ctx)
	}()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.reload()
	}()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.checkAlerts(u.ctx)
	}()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.watchCloud(u.ctx)
	}()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.tickTimeLeft(u.ctx)
	}()
}

// stop ends the event loop; it is safe to call more than once.
func (u *UI) stop() {
	u.cancel()
	u.wg.Wait()
}

// Run starts the engine in this process, shows the window and blocks until it closes. Running
// jobs go back to the queue when the caller then closes the App; nothing is lost.
//
// Without a display it prints NoDisplayMessage (in Japanese and English) and ends the process
// with ExitNoDisplay after closing a, instead of the toolkit's panic.
func Run(a *app.App, fyneApp fyne.App) error {
	if !CanOpenDisplay() {
		fmt.Fprint(os.Stderr, NoDisplayMessage)
		a.Close()
		os.Exit(ExitNoDisplay)
	}
	// The toolkit's complaint that there is no session bus is said once, not per notification.
	log.SetOutput(newOnceLog(log.Writer(), dbusUnreachable))
	u := New(fyneApp, a)
	// The engine lives until the caller closes the App (Worker.Stop hands running jobs back to
	// the queue), not until the window's own goroutines end.
	if err := a.StartEngine(context.Background()); err != nil {
		return err
	}
	if u.clicks = newNotificationClicks(); u.clicks != nil {
		defer u.clicks.close()
	}
	u.Start()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		returnMemory(u.ctx, releaseEvery, freeSlack)
	}()
	// The structured job log (logs/jobdesk.log in the data folder) while the window is open.
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		a.LogJobEvents(u.ctx)
	}()
	u.Window.ShowAndRun()
	u.stop()
	return nil
}

// build lays the window out: header, drop zone, filter bar, list and detail side by side, and
// a status bar.
func (u *UI) build() fyne.CanvasObject {
	u.selIdx = -1 // a new list has nothing selected yet
	title := canvas.NewText("JobDesk", theme.Color(theme.ColorNamePrimary))
	title.TextSize = theme.TextHeadingSize()
	title.TextStyle = fyne.TextStyle{Bold: true}
	subtitle := hintText(u.tr.T("app.tagline"), theme.SizeNameText, fyne.TextWrapOff, fyne.TextAlignLeading)
	subtitle.Truncation = fyne.TextTruncateEllipsis // a narrow window shortens the tagline, not the buttons

	lang := newSelect(u.tr, []string{"日本語", "English"}, nil)
	if u.tr.lang == LangEn {
		lang.SetSelected("English")
	} else {
		lang.SetSelected("日本語")
	}
	lang.OnChanged = func(s string) {
		if s == "English" {
			u.SetLanguage(LangEn)
		} else {
			u.SetLanguage(LangJa)
		}
	}
	settings := widget.NewButtonWithIcon(u.tr.T("settings.button"), theme.SettingsIcon(), u.showSettings)
	metrics := widget.NewButtonWithIcon(u.tr.T("metrics.button"), theme.InfoIcon(), func() { u.showMetrics() })
	header := container.NewBorder(nil, nil,
		container.NewHBox(widget.NewIcon(fyne.NewStaticResource("icon.png", assets.Icon())), title),
		container.NewHBox(lang, metrics, settings), u.buildAlertBanner(u.tr, subtitle))

	u.status = widget.NewLabel(u.tr.T("status.ready"))
	u.status.Truncation = fyne.TextTruncateEllipsis
	u.engineInfo = widget.NewLabel("")
	u.cloudInfo = widget.NewLabel("")
	u.cloudOps = widget.NewButtonWithIcon(u.tr.T("settings.cloud.console"), theme.StorageIcon(), u.showCloudConsole)
	u.cloudOps.Importance = widget.LowImportance
	u.refreshCloudInfo()
	statusBar := container.NewBorder(nil, nil, nil, container.NewHBox(u.cloudInfo, u.cloudOps, u.engineInfo), u.status)

	listPane := container.NewBorder(container.NewVBox(u.buildSearchBar(), u.buildFilters()), nil, nil, nil, u.buildList(u.tr))
	u.detail = u.newDetailPane()
	split := container.NewHSplit(listPane, u.detail.root)
	split.Offset = 0.62

	top := container.NewVBox(header, u.buildDropZone(u.tr, u.pickFiles, u.showGoalForm))
	u.refreshFilters()
	u.refreshList()
	u.refreshEngineInfo()
	if u.selected != 0 {
		u.detail.load(u.selected)
	}
	return container.NewBorder(top, container.NewVBox(widget.NewSeparator(), statusBar), nil, nil, split)
}

// SetLanguage switches the window's language ("ja" or "en"), remembers it, and redraws.
func (u *UI) SetLanguage(lang string) {
	if lang == u.tr.lang {
		return
	}
	u.tr = newTranslator(lang)
	u.fyneApp.Preferences().SetString(prefLanguage, u.tr.lang)
	u.Window.SetContent(u.build())
	u.setupTray(u.tr)
}

// setFilter shows only jobs in status s ("" for all) and rereads the list.
func (u *UI) setFilter(s job.Status) {
	if u.model.filter == s {
		return
	}
	u.model.filter = s
	u.model.replace(nil, false)
	u.noteLoaded()
	u.refreshFilters()
	u.refreshList()
	go u.reload()
}

// noteLoaded publishes the model's filter and size to the event loop. UI goroutine only.
func (u *UI) noteLoaded() {
	u.mu.Lock()
	u.loadFilter, u.loadQuery, u.loadedN = u.model.filter, u.model.query, len(u.model.rows)
	u.mu.Unlock()
}

// refreshEngineInfo writes the totals and the engine's state into the status bar.
func (u *UI) refreshEngineInfo() {
	if u.engineInfo == nil {
		return
	}
	counts := u.engineCounts()
	running := counts[job.Running]
	waiting := counts[job.Pending] + counts[job.Retrying]
	u.engineInfo.SetText(u.tr.T("status.engine", groupInt(int64(running)), groupInt(int64(waiting))))
	u.refreshTray()
}

// statusText is the translated name of a status.
func (u *UI) statusText(s job.Status) string { return statusLabel(u.tr, s) }

// typeText is the translated name of a job type (the type itself when there is none).
func (u *UI) typeText(t string) string { return typeLabel(u.tr, t) }

// setStatusError shows an error in the status bar, in the window's language.
func (u *UI) setStatusError(err error) { u.say(u.errorText(err), widget.DangerImportance) }

// errorText renders an error for people: its code and the sentence in the window's language.
func (u *UI) errorText(err error) string { return errorLine(u.tr, err) }

// errorLine renders an error for people: its code and the sentence in tr's language.
func errorLine(tr *translator, err error) string {
	e := job.AsError(err)
	msg := e.Message
	if tr.lang == LangJa && e.MessageJa != "" {
		msg = e.MessageJa
	}
	return fmt.Sprintf("%s: %s", e.Code, msg)
}

// showError opens a dialog with an error's code and both sentences.
func (u *UI) showError(title string, err error) {
	e := job.AsError(err)
	body := widget.NewLabel(wrapText(errorBody(e, u.tr.lang), 56))
	body.Selectable = true
	d := dialog.NewCustom(title, u.tr.T("dialog.close"), body, u.Window)
	u.dialogOpened(d)
	d.Show()
}

// errorBody is an error as a person reads it: the code, the sentence in the chosen language
// first, the other language second, and the cause when it adds something.
func errorBody(e *job.Error, lang string) string {
	first, second := e.MessageJa, e.Message
	if lang == LangEn {
		first, second = e.Message, e.MessageJa
	}
	if first == "" {
		first, second = second, ""
	}
	s := string(e.Code) + "  " + first
	if second != "" && second != first {
		s += "\n" + second
	}
	if e.Cause != "" && e.Cause != e.Message {
		s += "\n(" + e.Cause + ")"
	}
	return s
}

// listFilter is the list's query: top-level jobs of status s, at most n, older than before.
func listFilter(s job.Status, n int, before int64) app.ListFilter {
	return app.ListFilter{TopLevel: true, Status: s, Limit: n, BeforeID: before}
}

// wrapText breaks each line of s after at most width runes (a Japanese sentence has no spaces,
// so the break falls between characters; a Latin one breaks at its last space when it can), so
// a dialog sizes itself to its text instead of to one very long line.
func wrapText(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		r := []rune(line)
		for len(r) > width {
			cut := width
			for k := width; k > width/2; k-- {
				if r[k] == ' ' {
					cut = k
					break
				}
			}
			out = append(out, strings.TrimRight(string(r[:cut]), " "))
			r = []rune(strings.TrimLeft(string(r[cut:]), " "))
		}
		out = append(out, string(r))
	}
	return strings.Join(out, "\n")
}
