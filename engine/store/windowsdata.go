package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WindowsFolders are the two per-user folders Windows gives a program.
type WindowsFolders struct {
	// Roaming is %AppData%: copied to and from a server at sign-in and sign-out on PCs of a
	// domain with roaming profiles, meant for small settings.
	Roaming string
	// Local is %LocalAppData%: this PC only, for caches and anything large or busy.
	Local string
}

// MovedMarker is the file left in a data folder JobDesk has moved, saying where it went. A folder
// holding it is never moved again.
const MovedMarker = "MOVED-TO.txt"

// WindowsDataDir returns the data folder on Windows, %LocalAppData%\JobDesk, moving the folder an
// earlier JobDesk kept at %AppData%\JobDesk there first (once). Everything stays in one local
// folder, settings included: the SQLite database and its WAL must not roam (a roaming profile
// copies files at sign-out, and a copy taken mid-write is damaged), results can be large, and the
// settings name things of this PC (a local AI server, the number of workers).
//
// The folders are parameters so that the choice and the move are tested on any OS.
func WindowsDataDir(f WindowsFolders) (string, error) {
	if f.Local == "" {
		return "", errors.New("%LocalAppData% is not set")
	}
	dir := filepath.Join(f.Local, "JobDesk")
	if f.Roaming != "" {
		if err := MoveDataDir(filepath.Join(f.Roaming, "JobDesk"), dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// rename is os.Rename; tests replace it to play a move across drives.
var rename = os.Rename

// MoveDataDir moves data folder from to to, once, never losing data:
//   - nothing happens when from does not exist, is empty, or holds MovedMarker (moved before);
//   - nothing happens when to already holds files: both folders are left as they are (the user
//     chooses with --data-dir) rather than mixing two databases;
//   - otherwise from is renamed to to, and from is made again holding only MovedMarker;
//   - when a rename cannot cross drives (a redirected %AppData% on a server), from is copied to
//     to (through a temporary folder renamed into place when complete) and kept, with
//     MovedMarker added.
//
// Any other failure (a running JobDesk holding the database open) is returned: the caller stops
// rather than start afresh beside the user's data.
func MoveDataDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the old data folder %s: %w", from, err)
	}
	for _, e := range entries {
		if e.Name() == MovedMarker {
			return nil
		}
	}
	if existing, err := os.ReadDir(to); err == nil && len(existing) > 0 {
		return nil
	} else if err == nil {
		if err := os.Remove(to); err != nil {
			return fmt.Errorf("move the data folder to %s: %w", to, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return fmt.Errorf("move the data folder to %s: %w", to, err)
	}
	err = rename(from, to)
	if err != nil && !crossDevice(err) {
		return fmt.Errorf("move the data folder %s to %s (close every JobDesk and try again): %w", from, to, err)
	}
	if err != nil {
		tmp := to + ".moving"
		os.RemoveAll(tmp)
		if err := copyTree(from, tmp); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("copy the data folder %s to %s: %w", from, to, err)
		}
		if err := rename(tmp, to); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("copy the data folder %s to %s: %w", from, to, err)
		}
	} else if err := os.MkdirAll(from, 0o700); err != nil {
		return nil // moved; only the note for people could not be left
	}
	// The note is for people; the move happened either way, and a folder that now holds files
	// at to is never moved onto again.
	note := fmt.Sprintf("JobDesk moved its data folder from here to\r\n%s\r\non %s.\r\n"+
		"JobDesk はデータフォルダーをここから上記のフォルダーに移動しました。\r\n", to, time.Now().Format("2006-01-02 15:04"))
	_ = os.WriteFile(filepath.Join(from, MovedMarker), []byte(note), 0o600)
	return nil
}

// copyTree copies folder src to dst (which must not exist), files and sub-folders: contents
// only, files 0600 and folders 0700 as JobDesk makes them.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
