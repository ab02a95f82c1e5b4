//go:build !windows

package store

import (
	"errors"
	"syscall"
)

// checkLocalFolder accepts every folder outside Windows: there the data folder is the user's
// home (or --data-dir), and network file systems are the administrator's choice.
func checkLocalFolder(string) error { return nil }

// crossDevice reports whether a rename failed because source and target are on different file
// systems.
func crossDevice(err error) bool { return errors.Is(err, syscall.EXDEV) }
