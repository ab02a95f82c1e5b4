//go:build !windows

package ui

// acceptVirtualFiles does nothing here: on Linux and macOS Fyne's own drop (SetOnDropped)
// already takes every file a file manager gives; only Windows has Outlook's virtual files.
func (u *UI) acceptVirtualFiles() {}
