package store

import (
	"errors"
	"strings"
)

// ErrNetworkFolder is returned (wrapped) when the data folder is on a network drive or file
// server. SQLite's locking is not reliable over SMB, so two JobDesks, or JobDesk and a backup
// tool, could damage the database: the data folder must be on this PC.
var ErrNetworkFolder = errors.New("the data folder is on a network drive")

// isUNC reports whether path names a Windows file server share: \\server\share\…, its long
// form \\?\UNC\server\share\…, or the same with forward slashes. Device paths (\\.\, \\?\C:\)
// are local.
func isUNC(path string) bool {
	p := strings.ReplaceAll(path, "/", `\`)
	if len(p) >= 8 && strings.EqualFold(p[:8], `\\?\UNC\`) {
		return true
	}
	return len(p) > 2 && p[0] == '\\' && p[1] == '\\' && p[2] != '?' && p[2] != '.' && p[2] != '\\'
}
