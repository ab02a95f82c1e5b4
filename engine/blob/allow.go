package blob

import (
	"os"
	"path/filepath"
	"strings"
)

// AllowList is an allow rule for Local.Allow that confines a store to some folders: a path may
// be used when it lies inside one of Folders both as written and once symbolic links are
// resolved (so a link inside a folder cannot lead out of it), and is not one of Deny; a path
// outside them may be used when File accepts it exactly.
type AllowList struct {
	// Folders returns the folders whose files may be used; it is called on every check, so
	// the list may change while the store is in use.
	Folders func() []string
	// Deny lists files inside Folders that may not be used (compared after resolving links).
	Deny []string
	// File, when set, accepts single files outside Folders (files a person chose).
	File func(path string) bool
	// Refuse makes the error for a refused path; nil: an error naming the path.
	Refuse func(path string) error
}

// Check allows or refuses clean absolute path p.
func (a AllowList) Check(p string) error {
	real := Resolve(p)
	for _, d := range a.Deny {
		if real == Resolve(d) || p == filepath.Clean(d) {
			return a.refuse(p)
		}
	}
	var folders []string
	if a.Folders != nil {
		folders = a.Folders()
	}
	inside, realInside := false, false
	for _, f := range folders {
		if f == "" {
			continue
		}
		inside = inside || Inside(p, f)
		realInside = realInside || Inside(real, Resolve(f))
	}
	if inside && realInside {
		return nil
	}
	if a.File != nil && a.File(p) {
		return nil
	}
	return a.refuse(p)
}

func (a AllowList) refuse(p string) error {
	if a.Refuse != nil {
		return a.Refuse(p)
	}
	return &PathError{Op: "access", URI: p, Err: ErrNotAllowed}
}

// Inside reports whether clean absolute path p is folder or lies under it (by name only).
func Inside(p, folder string) bool {
	rel, err := filepath.Rel(filepath.Clean(folder), p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Resolve returns absolute path p with every symbolic link resolved, as far as p exists: the
// part of p that does not exist yet (a file about to be created) is kept as written.
func Resolve(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if _, err := os.Lstat(p); err == nil {
			// It exists but does not resolve (a dangling link, a loop): judged as written.
			return filepath.Join(p, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
