package store

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// checkLocalFolder refuses a data folder on a file server (a UNC path) or on a drive letter
// mapped to one (GetDriveTypeW says DRIVE_REMOTE).
func checkLocalFolder(dir string) error {
	if isUNC(dir) {
		return fmt.Errorf("%w: %s", ErrNetworkFolder, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	vol := filepath.VolumeName(abs)
	if vol == "" {
		return nil
	}
	root, err := windows.UTF16PtrFromString(vol + `\`)
	if err != nil {
		return nil
	}
	if windows.GetDriveType(root) == windows.DRIVE_REMOTE {
		return fmt.Errorf("%w: %s (drive %s)", ErrNetworkFolder, dir, vol)
	}
	return nil
}

// crossDevice reports whether a rename failed because source and target are on different
// drives.
func crossDevice(err error) bool { return errors.Is(err, windows.ERROR_NOT_SAME_DEVICE) }
