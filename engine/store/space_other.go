//go:build !unix

package store

// FreeSpace returns how many bytes may still be written on the file system holding dir; ok is
// false where that cannot be told (here).
func FreeSpace(dir string) (free uint64, ok bool) { return 0, false }

func isQuotaExceeded(err error) bool { return false }
