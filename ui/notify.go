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
// whose menu shows how many jobs run and wait and opens the window. Fyne's notifications carry
// no click action, so clicking one shows the desktop's own behaviour (usually nothing, or the
// window raised); the ended job is selected in the list when the window is next looked at.

// trayAvailable reports whether the desktop has a tray JobDesk can use. On Linux and the BSDs
// the tray speaks D-Bus (StatusNotifierItem): without a session bus that takes a connection,
// Fyne's tray fails and then crashes when the window closes, so there is no tray there.
func trayAvailable() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
	default:
		return true
	}
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
		u.sendNotification(fyne.NewNotification(u.notificationTitle(j), u.notificationBody(j)))
	}
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

// notificationBody is the job's number and its last message or error, in the window's language.
func (u *UI) notificationBody(j job.Job) string {
	text := j.Message
	if j.Error != nil {
		text = errorSentence(j.Error, u.tr.lang)
	}
	return u.tr.T("notify.body", jobNumber(j), text)
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
	running := u.model.counts[job.Running]
	waiting := u.model.counts[job.Pending] + u.model.counts[job.Retrying]
	label := u.tr.T("status.engine", groupInt(int64(running)), groupInt(int64(waiting)))
	if u.trayCount.Label != label {
		u.trayCount.Label = label
		u.trayMenu.Refresh()
	}
}
