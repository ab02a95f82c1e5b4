package store

import (
	"errors"
	"strings"
	"syscall"
)

// IsDiskFull reports whether err says the disk (or the user's quota) is full: SQLite's
// SQLITE_FULL ("database or disk is full") or the system's ENOSPC / EDQUOT from a file write.
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || isQuotaExceeded(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "SQLITE_FULL") ||
		strings.Contains(msg, "no space left on device") || strings.Contains(msg, "disk quota exceeded")
}
