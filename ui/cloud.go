package ui

import (
	"context"
	"net/url"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// cloudRefresh is how often the status bar's cloud state (online, outbox) is read again.
const cloudRefresh = 60 * time.Second

// cloudTimeout bounds one read of the cloud's state (its probes have their own limits).
const cloudTimeout = 45 * time.Second

// watchCloud reads the cloud's state now and every cloudRefresh until the window closes.
func (u *UI) watchCloud(ctx context.Context) {
	every(ctx, cloudRefresh, func() { u.readCloud(ctx) })
}

// refreshCloud reads the cloud's state again off the UI goroutine (after the settings close).
func (u *UI) refreshCloud() {
	go u.readCloud(u.ctx)
}

// readCloud probes the cloud (off the UI goroutine) and shows what it found. Without a
// configured cloud it probes nothing: a device-only installation makes no AWS calls.
func (u *UI) readCloud(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, cloudTimeout)
	defer cancel()
	var st app.CloudStatus
	if cfg, err := u.app.CloudConfig(); err == nil && cfg.Configured() {
		st, err = u.app.CloudStatus(ctx)
		if err != nil && ctx.Err() != nil {
			return // the window closed
		}
		if err != nil {
			st = app.CloudStatus{} // unreadable AWS settings: the window offers no cloud
		}
	}
	u.do(func() { u.showCloud(st) })
}

// showCloud applies a cloud state: the drop zone's choice, the status bar's cloud part and the
// detail pane's cloud buttons. UI goroutine only.
func (u *UI) showCloud(st app.CloudStatus) {
	changed := st.Configured != u.cloud.Configured
	u.cloud = st
	if u.targetSel != nil {
		setVisible(u.targetSel, st.Configured)
	}
	u.refreshCloudInfo()
	if changed && u.selected != 0 {
		u.detail.shownID = 0 // the pane's buttons depend on it: build it again
		u.detail.load(u.selected)
	}
}

// refreshCloudInfo writes the cloud's state into the status bar's right side.
func (u *UI) refreshCloudInfo() {
	if u.cloudInfo == nil {
		return
	}
	if !u.cloud.Configured {
		u.cloudInfo.SetText("")
		u.cloudInfo.Hide()
		u.cloudOps.Hide()
		return
	}
	u.cloudOps.Show()
	key := "status.cloud.offline"
	u.cloudInfo.Importance = widget.WarningImportance
	if u.cloud.Online {
		key = "status.cloud.online"
		u.cloudInfo.Importance = widget.SuccessImportance
	}
	u.cloudInfo.SetText(u.tr.T(key, groupInt(int64(u.cloud.Outbox))))
	u.cloudInfo.Show()
}

// canRunInCloud: a finished job that read a file may run once more in the cloud when it
// succeeded or Retry is offered (canRetry) — not after a failure that depends on its file alone
// (a damaged file, a wrong header), which the cloud would repeat.
func canRunInCloud(j job.Job) bool {
	return inputPath(j) != "" && (j.Status == job.Succeeded || canRetry(j))
}

// runInCloud submits the file finished job j read once more, forced, in the cloud.
func (u *UI) runInCloud(j job.Job) {
	if !canRunInCloud(j) {
		return
	}
	path := inputPath(j)
	opts := u.submitOptions()
	opts.Force, opts.Target = true, app.TargetCloud
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 30*time.Second)
		defer cancel()
		jobs, err := u.app.Submit(ctx, []string{path}, opts)
		u.do(func() {
			if err != nil {
				u.setStatusError(err)
				u.showError(u.tr.T("error.submit_title"), err)
				return
			}
			if len(jobs) > 0 {
				u.setStatus(u.tr.T("drop.added", len(jobs)))
				u.revealJob(jobs[0].ID)
			}
		})
	}()
}

// cloudFacts adds a cloud job's region, execution and console link to the detail's facts.
func (d *detailPane) cloudFacts(add func(key, value string), facts *[]fyne.CanvasObject) {
	c := d.cloudDetail
	if c == nil {
		return
	}
	add("detail.cloud.region", c.Region)
	add("detail.cloud.execution", c.ExecutionARN)
	if c.ConsoleURL == "" {
		return
	}
	link, err := url.Parse(c.ConsoleURL)
	if err != nil {
		return
	}
	k := hintText(d.tr.T("detail.cloud.console"), theme.SizeNameCaptionText, fyne.TextWrapOff, fyne.TextAlignLeading)
	h := widget.NewHyperlink(d.tr.T("detail.cloud.open_console"), link)
	h.SizeName = theme.SizeNameCaptionText
	*facts = append(*facts, k, h)
}
