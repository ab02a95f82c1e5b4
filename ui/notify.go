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

// notifier sends the desktop notifications of jobs that ended and keeps the tray icon's menu
// (see the top of this file). The window keeps one; setupTray sets its language.
type notifier struct {
	tr *translator // the window's, set again by setupTray when the language changes

	// openedAt is when the window opened: jobs that ended before it are not notified.
	openedAt time.Time
	// notified holds, per job, the end time a notification was sent for.
	notified map[int64]time.Time
	// sendNotification shows a desktop notification (fyne's; tests record them).
	sendNotification func(*fyne.Notification)
	// clicks sends notifications that select their job when clicked, where the desktop's
	// notification service takes clicks (notify_dbus.go); nil: sendNotification alone.
	clicks    *notificationClicks
	trayMenu  *fyne.Menu
	trayCount *fyne.MenuItem

	desktopApp fyne.App // the toolkit's app, for the tray
	// do runs a function on the UI goroutine.
	do func(func())
	// notifyOn reports whether notifications are on.
	notifyOn func() bool
	// showWindow brings the window forward; showJob selects job id in it.
	showWindow func()
	showJob    func(id int64)
	// engineCounts are the engine's jobs per status.
	engineCounts func() map[job.Status]int
}

// noteEnded sends a notification for each job of jobs that ended since the window opened and
// was not notified for that ending yet. UI goroutine only.
func (n *notifier) noteEnded(jobs []job.Job) {
	for _, j := range jobs {
		if j.ParentID != 0 || j.CompletedAt == nil || !j.Status.Final() || j.Status == job.Cancelled {
			continue
		}
		if j.CompletedAt.Before(n.openedAt) {
			continue
		}
		if at, ok := n.notified[j.ID]; ok && at.Equal(*j.CompletedAt) {
			continue
		}
		n.notified[j.ID] = *j.CompletedAt
		if !n.notifyOn() {
			continue
		}
		n.notifyJob(j.ID, fyne.NewNotification(n.notificationTitle(j), n.notificationBody(j)))
	}
}

// notifyJob shows n, about job id. Where the desktop takes clicks on notifications, clicking it
// brings the window forward with the job selected.
func (n *notifier) notifyJob(id int64, note *fyne.Notification) {
	click := func() {
		n.do(func() {
			n.showWindow()
			n.showJob(id)
		})
	}
	if n.clicks != nil && n.clicks.send(note, n.tr.T("notify.show"), click) {
		return
	}
	n.sendNotification(note)
}

// notifyOn reads the notifications setting (the data folder's settings.json).
func (u *UI) notifyOn() bool { return u.settings().NotifyOn() }

// notificationTitle is "JobDesk: <status> — <name>".
func (n *notifier) notificationTitle(j job.Job) string {
	name := j.Name
	if name == "" {
		name = typeLabel(n.tr, j.Type)
	}
	return fmt.Sprintf("JobDesk: %s — %s", statusLabel(n.tr, j.Status), name)
}

// notificationBody is the job's number and what became of it, as its row in the list says it
// (the error, or the result's summary: never the last progress report, stale once it ended).
func (n *notifier) notificationBody(j job.Job) string {
	return n.tr.T("notify.body", jobNumber(j), rowTail(n.tr, j))
}

// setupTray puts JobDesk in the system tray where the desktop has one: the icon, a line with the
// running and waiting counts, and Show window.
func (n *notifier) setupTray(tr *translator) {
	n.tr = tr
	desk, ok := n.desktopApp.(desktop.App)
	if !ok || !trayAvailable() {
		return
	}
	n.trayCount = fyne.NewMenuItem("", nil)
	n.trayCount.Disabled = true
	show := fyne.NewMenuItem(n.tr.T("tray.show"), func() { n.showWindow() })
	n.trayMenu = fyne.NewMenu("JobDesk", n.trayCount, fyne.NewMenuItemSeparator(), show)
	desk.SetSystemTrayMenu(n.trayMenu)
	desk.SetSystemTrayIcon(fyne.NewStaticResource("icon.png", assets.Icon()))
	n.refreshTray()
}

// refreshTray writes the running and waiting counts into the tray menu.
func (n *notifier) refreshTray() {
	if n.trayMenu == nil {
		return
	}
	counts := n.engineCounts()
	running := counts[job.Running]
	waiting := counts[job.Pending] + counts[job.Retrying]
	label := n.tr.T("status.engine", groupInt(int64(running)), groupInt(int64(waiting)))
	if n.trayCount.Label != label {
		n.trayCount.Label = label
		n.trayMenu.Refresh()
	}
}
