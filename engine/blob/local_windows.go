package blob

import (
	"errors"

	"golang.org/x/sys/windows"
)

// lockedByOther reports whether err is Windows refusing access because another process holds
// the file: ERROR_SHARING_VIOLATION when it was opened without sharing (Excel, on open),
// ERROR_LOCK_VIOLATION when a byte range is locked (on read).
func lockedByOther(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}
