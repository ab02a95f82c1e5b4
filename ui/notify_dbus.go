//go:build linux || freebsd || openbsd || netbsd || dragonfly

package ui

import (
	"os"
	"path/filepath"
	"sync"

	"fyne.io/fyne/v2"
	"github.com/godbus/dbus/v5"

	"jobdesk/assets"
)

// notificationClicks sends desktop notifications itself, through the freedesktop notification
// service on the session bus, with a default action, and calls the action's function when the
// person clicks one. (Fyne's notifications carry no action: a click would do nothing.)
type notificationClicks struct {
	conn    *dbus.Conn
	icon    string // a PNG of JobDesk's icon in the user's cache folder; "" without one
	actions bool   // the service supports actions (clicks)

	mu      sync.Mutex
	onClick map[uint32]func() // by notification id, until clicked or closed
}

const (
	notifyService = "org.freedesktop.Notifications"
	notifyPath    = "/org/freedesktop/Notifications"
)

// newNotificationClicks connects to the session bus and listens for clicks; nil when there is
// no reachable session bus (no connection is attempted then: the D-Bus library would start a
// bus of its own) or the connection fails.
func newNotificationClicks() *notificationClicks {
	if !sessionBusReachable() {
		return nil
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil
	}
	n := &notificationClicks{conn: conn, onClick: map[uint32]func(){}}
	var caps []string
	if conn.Object(notifyService, notifyPath).Call(notifyService+".GetCapabilities", 0).Store(&caps) == nil {
		for _, c := range caps {
			n.actions = n.actions || c == "actions"
		}
	}
	for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
		if err := conn.AddMatchSignal(dbus.WithMatchInterface(notifyService), dbus.WithMatchMember(member)); err != nil {
			conn.Close()
			return nil
		}
	}
	n.icon = iconFile()
	signals := make(chan *dbus.Signal, 16)
	conn.Signal(signals)
	go n.listen(signals)
	return n
}

// iconFile writes JobDesk's icon into the user's cache folder once and returns its path.
func iconFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, "jobdesk", "icon.png")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil || os.WriteFile(path, assets.Icon(), 0o644) != nil {
		return ""
	}
	return path
}

// send shows n with a default action labelled action; a click on it calls onClick (on the
// listening goroutine). It reports whether the service took the notification.
func (n *notificationClicks) send(note *fyne.Notification, action string, onClick func()) bool {
	var actions []string
	if n.actions {
		actions = []string{"default", action}
	}
	var id uint32
	err := n.conn.Object(notifyService, notifyPath).Call(notifyService+".Notify", 0,
		"JobDesk", uint32(0), n.icon, note.Title, note.Content, actions,
		map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant(AppID)}, int32(-1)).Store(&id)
	if err != nil {
		return false
	}
	if n.actions {
		n.mu.Lock()
		n.onClick[id] = onClick
		n.mu.Unlock()
	}
	return true
}

// listen calls the function of each clicked notification and forgets closed ones.
func (n *notificationClicks) listen(signals <-chan *dbus.Signal) {
	for s := range signals {
		if len(s.Body) < 2 {
			continue
		}
		id, ok := s.Body[0].(uint32)
		if !ok {
			continue
		}
		n.mu.Lock()
		f := n.onClick[id]
		delete(n.onClick, id)
		n.mu.Unlock()
		if key, _ := s.Body[1].(string); s.Name == notifyService+".ActionInvoked" && key == "default" && f != nil {
			f()
		}
	}
}

// close ends the connection (and the listener with it).
func (n *notificationClicks) close() { n.conn.Close() }
