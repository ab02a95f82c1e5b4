//go:build !(linux || freebsd || openbsd || netbsd || dragonfly)

package ui

import "fyne.io/fyne/v2"

// notificationClicks: outside the freedesktop desktops Fyne's notifications are the only ones,
// and they take no click.
type notificationClicks struct{}

func newNotificationClicks() *notificationClicks { return nil }

func (*notificationClicks) send(*fyne.Notification, string, func()) bool { return false }

func (*notificationClicks) close() {}
