//go:build unix

package store

import (
	"errors"
	"syscall"
)

// FreeSpace returns how many bytes an unprivileged writer may still write on the file system
// holding dir; ok is false where that cannot be told.
func FreeSpace(dir string) (free uint64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}

func isQuotaExceeded(err error) bool { return errors.Is(err, syscall.EDQUOT) }
