package ui

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"jobdesk/assets"
	"jobdesk/engine/job"
)

// This file tells people what happened while they looked elsewhere: a desktop notification when
// a job they started ends (succeeded, partial, failed or timed out; not one they cancelled),
// once per ending, with the job's name; and, where the desktop has a system tray, a tray icon
// whose menu shows how many jobs run and wait and opens the window. Where the desktop's
// notification service takes clicks (the freedesktop service on Linux and the BSDs,
// notify_dbus.go), clicking a job's notification brings the window forward with that job
// selected; elsewhere Fyne's notifications are shown, which take no click.

// trayAvailable reports whether the desktop has a tray JobDesk can use. On Linux and the BSDs
// the tray speaks D-Bus (StatusNotifierItem): without a session bus that takes a connection,
// Fyne's tray fails and then crashes when the window closes, so there is no tray there.
func trayAvailable() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return sessionBusReachable()
	default:
		return true
	}
}

// sessionBusReachable reports whether DBUS_SESSION_BUS_ADDRESS names a unix socket that takes
// a connection.
func sessionBusReachable() bool {
	for _, addr := range strings.Split(os.Getenv("DBUS_SESSION_BUS_ADDRESS"), ";") {
		kind, rest, _ := strings.Cut(addr, ":")
		if kind != "unix" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			path := ""
			switch k {
			case "path":
				path = v
			case "abstract":
				path = "@" + v
			}
			if path == "" {
				continue
			}
			if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
				c.Close()
				return true
			}
		}
	}
	return false
}

// noteEnded sends a notification for each job of jobs that ended since the window opened and
// was not notified for that ending yet. UI goroutine only.
func (u *UI) noteEnded(jobs []job.Job) {
	for _, j := range jobs {
		if j.ParentID != 0 || j.CompletedAt == nil || !j.Status.Final() || j.Status == job.Cancelled {
			continue
		}
		if j.CompletedAt.Before(u.openedAt) {
			continue
		}
		if at, ok := u.notified[j.ID]; ok && at.Equal(*j.CompletedAt) {
			continue
		}
		u.notified[j.ID] = *j.CompletedAt
		if !u.notifyOn() {
			continue
		}
		u.notifyJob(j.ID, fyne.NewNotification(u.notificationTitle(j), u.notificationBody(j)))
	}
}

// notifyJob shows n, about job id. Where the desktop takes clicks on notifications, clicking it
// brings the window forward with the job selected.
func (u *UI) notifyJob(id int64, n *fyne.Notification) {
	click := func() {
		u.do(func() {
			u.Window.Show()
			u.Window.RequestFocus()
			u.showJob(id)
		})
	}
	if u.clicks != nil && u.clicks.send(n, u.tr.T("notify.show"), click) {
		return
	}
	u.sendNotification(n)
}

// notifyOn reads the notifications setting (the data folder's settings.json).
func (u *UI) notifyOn() bool { return u.settings().NotifyOn() }

// notificationTitle is "JobDesk: <status> — <name>".
func (u *UI) notificationTitle(j job.Job) string {
	name := j.Name
	if name == "" {
		name = u.typeText(j.Type)
	}
	return fmt.Sprintf("JobDesk: %s — %s", u.statusText(j.Status), name)
}

// notificationBody is the job's number and what became of it, as its row in the list says it
// (the error, or the result's summary: never the last progress report, stale once it ended).
func (u *UI) notificationBody(j job.Job) string {
	return u.tr.T("notify.body", jobNumber(j), rowTail(u.tr, j))
}

// setupTray puts JobDesk in the system tray where the desktop has one: the icon, a line with the
// running and waiting counts, and Show window.
func (u *UI) setupTray() {
	desk, ok := u.fyneApp.(desktop.App)
	if !ok || !trayAvailable() {
		return
	}
	u.trayCount = fyne.NewMenuItem("", nil)
	u.trayCount.Disabled = true
	show := fyne.NewMenuItem(u.tr.T("tray.show"), func() {
		u.Window.Show()
		u.Window.RequestFocus()
	})
	u.trayMenu = fyne.NewMenu("JobDesk", u.trayCount, fyne.NewMenuItemSeparator(), show)
	desk.SetSystemTrayMenu(u.trayMenu)
	desk.SetSystemTrayIcon(fyne.NewStaticResource("icon.png", assets.Icon()))
	u.refreshTray()
}

// refreshTray writes the running and waiting counts into the tray menu.
func (u *UI) refreshTray() {
	if u.trayMenu == nil {
		return
	}
	counts := u.engineCounts()
	running := counts[job.Running]
	waiting := counts[job.Pending] + counts[job.Retrying]
	label := u.tr.T("status.engine", groupInt(int64(running)), groupInt(int64(waiting)))
	if u.trayCount.Label != label {
		u.trayCount.Label = label
		u.trayMenu.Refresh()
	}
}
