package ui

import (
	"context"
	"fmt"
	"image/color"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// This file is the metrics view and the alert banner: jobs started, succeeded, failed and timed
// out per hour over the last day, jobs per type, processing-time percentiles, the queue depth,
// AI tokens and cost (app.Metrics), drawn with canvas rectangles; and the specifications' alert
// rules, checked every alertEvery, which show a banner above the list and send one notification
// each time a rule starts to hold.

// alertEvery is how often the window checks the alert rules.
const alertEvery = 30 * time.Second

// metricsSpan is how far back the metrics view looks.
const metricsSpan = 24 * time.Hour

// Chart colours: started, succeeded, failed, timed out.
var (
	colStarted   = color.NRGBA{0x2E, 0x6B, 0xE6, 0xFF}
	colSucceeded = color.NRGBA{0x2E, 0x9D, 0x5B, 0xFF}
	colFailed    = color.NRGBA{0xD0, 0x3B, 0x3B, 0xFF}
	colTimedOut  = color.NRGBA{0xE0, 0x8A, 0x1E, 0xFF}
)

// metricsView is the open metrics dialog.
type metricsView struct {
	tr  *translator
	ctx context.Context
	svc metricsService
	// do runs a function on the UI goroutine.
	do func(func())

	d       *dialog.CustomDialog
	content *fyne.Container
	report  app.MetricsReport
	scroll  *container.Scroll
	chart   fyne.CanvasObject // the jobs-per-hour chart drawn last
}

// metricsService is what the metrics view reads from the app.
type metricsService interface {
	Metrics(ctx context.Context, since time.Time) (app.MetricsReport, error)
}

// showMetrics opens the metrics view and fills it.
func (u *UI) showMetrics() *metricsView {
	mv := &metricsView{tr: u.tr, ctx: u.ctx, svc: u.app, do: func(f func()) { u.do(f) }, content: container.NewVBox(widget.NewLabel(u.tr.T("metrics.loading")))}
	refresh := widget.NewButtonWithIcon(u.tr.T("metrics.refresh"), theme.ViewRefreshIcon(), mv.load)
	// The content keeps clear of the scroll bar, which would cover the latest hour's bars.
	gutter := canvas.NewRectangle(color.Transparent)
	gutter.SetMinSize(fyne.NewSize(theme.ScrollBarSize()+theme.Padding(), 0))
	mv.scroll = container.NewVScroll(container.NewBorder(nil, nil, nil, gutter, mv.content))
	body := container.NewBorder(container.NewHBox(refresh), nil, nil, nil, mv.scroll)
	mv.d = dialog.NewCustom(u.tr.T("metrics.title"), u.tr.T("dialog.close"), body, u.Window)
	mv.d.Resize(fyne.NewSize(900, 640))
	u.metrics = mv
	u.dialogOpened(mv.d)
	mv.d.Show()
	mv.load()
	return mv
}

// load reads the metrics off the UI goroutine and redraws.
func (mv *metricsView) load() {
	go func() {
		ctx, cancel := context.WithTimeout(mv.ctx, 10*time.Second)
		defer cancel()
		r, err := mv.svc.Metrics(ctx, time.Now().Add(-metricsSpan))
		mv.do(func() {
			if err != nil {
				mv.content.Objects = []fyne.CanvasObject{problemLine(mv.tr, err)}
				mv.content.Refresh()
				return
			}
			mv.report = r
			mv.draw()
		})
	}()
}

// draw lays the report out: alerts, the figures, the hourly chart and the per-type bars.
func (mv *metricsView) draw() {
	tr, r := mv.tr, mv.report
	var objs []fyne.CanvasObject
	for _, a := range r.Alerts {
		objs = append(objs, alertLine(alertSentence(tr, a)))
	}
	figure := func(key, value string) fyne.CanvasObject {
		v := widget.NewLabel(value)
		v.TextStyle = fyne.TextStyle{Bold: true}
		return container.NewVBox(hintText(tr.T(key), theme.SizeNameCaptionText, fyne.TextWrapOff, fyne.TextAlignLeading), v)
	}
	objs = append(objs, container.NewGridWithColumns(4,
		figure("metrics.queue_depth", groupInt(int64(r.QueueDepth))),
		figure("metrics.running", groupInt(int64(r.Running))),
		figure("metrics.p50", humanDuration(r.P50)),
		figure("metrics.p90_p99", humanDuration(r.P90)+" / "+humanDuration(r.P99)),
		figure("metrics.ai_calls", groupInt(int64(r.AI.Calls))),
		figure("metrics.ai_tokens", groupInt(r.AI.PromptTokens)+" / "+groupInt(r.AI.CompletionTokens)),
		figure("metrics.ai_cost", fmt.Sprintf("$%.4f", r.AI.CostUSD)),
		figure("metrics.window", tr.T("metrics.window_value", groupInt(int64(r.Window.Ended)), groupInt(int64(r.Window.Failed)))),
	))
	head := func(key string) fyne.CanvasObject {
		l := widget.NewLabel(tr.T(key))
		l.TextStyle = fyne.TextStyle{Bold: true}
		return l
	}
	objs = append(objs, widget.NewSeparator(), head("metrics.per_hour"), mv.legend(), mv.hourChart(), widget.NewSeparator(),
		head("metrics.per_type"), mv.typeBars())
	mv.content.Objects = objs
	mv.content.Refresh()
}

// legend names the chart's colours.
func (mv *metricsView) legend() fyne.CanvasObject {
	tr := mv.tr
	item := func(c color.Color, key string) fyne.CanvasObject {
		sw := canvas.NewRectangle(c)
		sw.SetMinSize(fyne.NewSize(12, 12))
		return container.NewHBox(container.NewCenter(sw), widget.NewLabel(tr.T(key)))
	}
	return container.NewHBox(item(colStarted, "metrics.started"), item(colSucceeded, "metrics.succeeded"),
		item(colFailed, "metrics.failed"), item(colTimedOut, "metrics.timed_out"))
}

// hourChart draws four bars per hour over the last day (all types together).
func (mv *metricsView) hourChart() fyne.CanvasObject {
	type hour struct{ started, ok, failed, timedOut int }
	now := mv.report.Now.Local().Truncate(time.Hour)
	if mv.report.Now.IsZero() {
		now = time.Now().Truncate(time.Hour)
	}
	hours := make([]hour, 24)
	for _, h := range mv.report.Hours {
		i := 23 - int(now.Sub(h.Hour)/time.Hour)
		if i < 0 || i > 23 {
			continue
		}
		hours[i].started += h.Started
		hours[i].ok += h.Succeeded
		hours[i].failed += h.Failed
		hours[i].timedOut += h.TimedOut
	}
	top := 1
	for _, h := range hours {
		top = max(top, h.started, h.ok, h.failed, h.timedOut)
	}
	const height = 110
	var bars []fyne.CanvasObject
	for i, h := range hours {
		var four []fyne.CanvasObject
		for k, n := range []int{h.started, h.ok, h.failed, h.timedOut} {
			four = append(four, bar([]color.Color{colStarted, colSucceeded, colFailed, colTimedOut}[k], height*float32(n)/float32(top)))
		}
		col := container.New(&fixedSize{height: height}, container.NewGridWithColumns(4, four...))
		label := ""
		if i%3 == 2 {
			label = now.Add(time.Duration(i-23) * time.Hour).Format("15時")
			if mv.tr.lang == LangEn {
				label = now.Add(time.Duration(i-23) * time.Hour).Format("15:00")
			}
		}
		bars = append(bars, container.NewBorder(nil, hintText(label, theme.SizeNameCaptionText, fyne.TextWrapOff, fyne.TextAlignCenter), nil, nil, col))
	}
	axis := hintText(groupInt(int64(top)), theme.SizeNameCaptionText, fyne.TextWrapOff, fyne.TextAlignTrailing)
	mv.chart = container.NewGridWithColumns(24, bars...)
	return container.NewBorder(nil, nil, container.NewVBox(axis), nil, mv.chart)
}

// typeBars draws one horizontal bar per job type: the jobs started in the last day.
func (mv *metricsView) typeBars() fyne.CanvasObject {
	tr := mv.tr
	types := make([]string, 0, len(mv.report.ByType))
	top := 1
	for t, n := range mv.report.ByType {
		types = append(types, t)
		top = max(top, n)
	}
	sort.Slice(types, func(i, j int) bool { return mv.report.ByType[types[i]] > mv.report.ByType[types[j]] })
	if len(types) == 0 {
		return widget.NewLabel(tr.T("metrics.none"))
	}
	var rows []fyne.CanvasObject
	for _, t := range types {
		n := mv.report.ByType[t]
		r := canvas.NewRectangle(colStarted)
		name := widget.NewLabel(typeLabel(tr, t))
		count := widget.NewLabel(groupInt(int64(n)))
		rows = append(rows, container.NewBorder(nil, nil, container.New(&fixedSize{width: 150}, name), count,
			container.New(&hbarLayout{frac: float32(n) / float32(top)}, r)))
	}
	return container.NewVBox(rows...)
}

// bar is one bar of the hourly chart, h tall, standing on the column's baseline.
func bar(c color.Color, h float32) fyne.CanvasObject {
	r := canvas.NewRectangle(c)
	r.SetMinSize(fyne.NewSize(2, h))
	if h <= 0 {
		r.Hide()
	}
	return container.NewVBox(layout.NewSpacer(), r)
}

// hbarLayout draws its one object as a bar frac of the width.
type hbarLayout struct{ frac float32 }

func (l *hbarLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(40, 18) }

func (l *hbarLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Resize(fyne.NewSize(size.Width*l.frac, size.Height*0.6))
		o.Move(fyne.NewPos(0, size.Height*0.2))
	}
}

// humanDuration is a short duration: 850ms, 12.3s, 4m05s, 1h02m.
func humanDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// alertText is an alert in the window's language.
func (u *UI) alertText(a app.Alert) string { return alertSentence(u.tr, a) }

// alertSentence is an alert in tr's language.
func alertSentence(tr *translator, a app.Alert) string {
	if tr.lang == LangJa {
		return a.MessageJa
	}
	return a.Message
}

// alertLine is one alert as a warning line.
func alertLine(text string) fyne.CanvasObject {
	l := widget.NewLabel(text)
	l.Importance = widget.WarningImportance
	l.Wrapping = fyne.TextWrapWord
	return container.NewBorder(nil, nil, widget.NewIcon(theme.WarningIcon()), nil, l)
}

// alertBar is the band in the header that shows the alert rules that hold, read every
// alertEvery (checkAlerts), with a button to the metrics; a rule that starts to hold is also
// notified. The window builds its widgets (buildAlertBanner) and keeps one.
type alertBar struct {
	tr          *translator     // the window's, set again by buildAlertBanner
	alerts      []app.Alert     // the alert rules that hold
	alertActive map[string]bool // their names, to notify a rule once when it starts to hold
	alertBanner *fyne.Container
	alertLabel  *widget.Label
	tagline     fyne.CanvasObject // the header's tagline, which the alert banner covers

	svc metricsService
	// do runs a function on the UI goroutine.
	do func(func())
	// notifyOn reports whether notifications are on; send shows one.
	notifyOn func() bool
	send     func(*fyne.Notification)
	// showMetrics opens the metrics view.
	showMetrics func()
}

// buildAlertBanner is the band in the header, over the tagline, that shows the alert rules that
// hold (hidden while none does): one line, cut with "…", with a button to the metrics. It takes
// the tagline's place rather than a row of its own, so the list below never moves when an alert
// comes or goes.
func (b *alertBar) buildAlertBanner(tr *translator, tagline fyne.CanvasObject) fyne.CanvasObject {
	b.tr = tr
	b.alertLabel = widget.NewLabel("")
	b.alertLabel.Importance = widget.WarningImportance
	b.alertLabel.Truncation = fyne.TextTruncateEllipsis
	bg := canvas.NewRectangle(color.NRGBA{0xE0, 0x8A, 0x1E, 0x30})
	bg.CornerRadius = 8
	// Beside the header's own Metrics button: this one says what it shows.
	open := widget.NewButtonWithIcon(b.tr.T("alert.details"), theme.InfoIcon(), func() { b.showMetrics() })
	open.Importance = widget.LowImportance
	b.alertBanner = container.NewStack(bg, container.NewBorder(nil, nil, widget.NewIcon(theme.WarningIcon()), open, b.alertLabel))
	b.tagline = tagline
	b.showAlerts(b.alerts)
	return container.NewStack(tagline, b.alertBanner)
}

// checkAlerts evaluates the alert rules every alertEvery until ctx ends.
func (b *alertBar) checkAlerts(ctx context.Context) {
	every(ctx, alertEvery, func() { b.checkAlertsOnce(ctx) })
}

// every calls f now and then every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkAlertsOnce reads the alert rules once and posts them to the window.
func (b *alertBar) checkAlertsOnce(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := b.svc.Metrics(cctx, time.Now().Add(-app.AlertWindow))
	if err != nil {
		return
	}
	b.do(func() { b.showAlerts(r.Alerts) })
}

// showAlerts shows alerts in the banner and notifies each rule that did not hold before.
func (b *alertBar) showAlerts(alerts []app.Alert) {
	active := map[string]bool{}
	var lines []string
	for _, a := range alerts {
		active[a.Rule] = true
		lines = append(lines, alertSentence(b.tr, a))
		if !b.alertActive[a.Rule] && b.notifyOn() {
			b.send(fyne.NewNotification(b.tr.T("metrics.alert_title"), alertSentence(b.tr, a)))
		}
	}
	b.alertActive = active
	b.alerts = alerts
	if b.alertBanner == nil {
		return
	}
	if len(lines) == 0 {
		b.alertBanner.Hide()
		b.tagline.Show()
		return
	}
	b.alertLabel.SetText(strings.Join(lines, " · "))
	b.tagline.Hide()
	b.alertBanner.Show()
}
