//go:build !windows

package blob

// lockedByOther is false outside Windows: file locks there are advisory and never stop a read.
func lockedByOther(error) bool { return false }
