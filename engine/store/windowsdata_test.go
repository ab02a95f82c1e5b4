package store

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// writeFiles makes dir with the given files (name → content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

var oldData = map[string]string{FileName: "db", FileName + "-wal": "wal", "ai.json": "{}", "results/1/result.md": "# 結果"}

// The data folder is %LocalAppData%\JobDesk; a folder an earlier JobDesk kept in %AppData% is
// moved there once, whole, and a note is left where it was.
func TestWindowsDataDirMovesRoamingFolderOnce(t *testing.T) {
	base := t.TempDir()
	f := WindowsFolders{Roaming: filepath.Join(base, "Roaming"), Local: filepath.Join(base, "Local")}
	old := filepath.Join(f.Roaming, "JobDesk")
	writeFiles(t, old, oldData)

	dir, err := WindowsDataDir(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(f.Local, "JobDesk"); dir != want {
		t.Fatalf("data folder %s, want %s", dir, want)
	}
	for name, content := range oldData {
		if got := readFile(t, filepath.Join(dir, filepath.FromSlash(name))); got != content {
			t.Errorf("%s: %q, want %q", name, got, content)
		}
	}
	entries, _ := os.ReadDir(old)
	if len(entries) != 1 || entries[0].Name() != MovedMarker {
		t.Fatalf("old folder holds %v, want only %s", entries, MovedMarker)
	}

	// Once: a new database in the old place (an old JobDesk started again) is not moved on top.
	writeFiles(t, old, map[string]string{FileName: "other"})
	if _, err := WindowsDataDir(f); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, FileName)); got != "db" {
		t.Fatalf("database replaced by a second move: %q", got)
	}
}

// Nothing to move: no old folder, an empty one, or a new folder already in use (both are kept;
// the user chooses with --data-dir).
func TestMoveDataDirLeavesFoldersAlone(t *testing.T) {
	base := t.TempDir()
	if err := MoveDataDir(filepath.Join(base, "none"), filepath.Join(base, "to1")); err != nil || exists(filepath.Join(base, "to1")) {
		t.Fatalf("missing old folder: err %v, new folder made: %v", err, exists(filepath.Join(base, "to1")))
	}
	os.Mkdir(filepath.Join(base, "empty"), 0o700)
	if err := MoveDataDir(filepath.Join(base, "empty"), filepath.Join(base, "to2")); err != nil || exists(filepath.Join(base, "to2")) {
		t.Fatalf("empty old folder: err %v", err)
	}
	old, used := filepath.Join(base, "old"), filepath.Join(base, "used")
	writeFiles(t, old, oldData)
	writeFiles(t, used, map[string]string{FileName: "newer"})
	if err := MoveDataDir(old, used); err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(used, FileName)) != "newer" || readFile(t, filepath.Join(old, FileName)) != "db" {
		t.Fatal("a folder in use was mixed with the old one")
	}
	// An empty new folder (made by hand, or by an installer) does not block the move.
	empty := filepath.Join(base, "emptynew")
	os.Mkdir(empty, 0o700)
	if err := MoveDataDir(old, empty); err != nil || readFile(t, filepath.Join(empty, FileName)) != "db" {
		t.Fatalf("move into an empty folder: %v", err)
	}
}

// A redirected %AppData% on another drive: the folder is copied, and the original is kept with
// the note.
func TestMoveDataDirAcrossDrivesCopies(t *testing.T) {
	base := t.TempDir()
	old, to := filepath.Join(base, "old"), filepath.Join(base, "new")
	writeFiles(t, old, oldData)
	first := true
	rename = func(a, b string) error {
		if first {
			first = false
			return &os.LinkError{Op: "rename", Old: a, New: b, Err: exdev()}
		}
		return os.Rename(a, b)
	}
	defer func() { rename = os.Rename }()
	if err := MoveDataDir(old, to); err != nil {
		t.Fatal(err)
	}
	for name, content := range oldData {
		if readFile(t, filepath.Join(to, filepath.FromSlash(name))) != content || readFile(t, filepath.Join(old, filepath.FromSlash(name))) != content {
			t.Errorf("%s not in both folders", name)
		}
	}
	if !exists(filepath.Join(old, MovedMarker)) || exists(to+".moving") {
		t.Fatal("no note in the old folder, or the temporary copy left behind")
	}
}

// Any other failure (the database open in a running JobDesk) stops: nothing is lost, and no
// fresh data folder is started beside the old one.
func TestMoveDataDirFailureKeepsEverything(t *testing.T) {
	base := t.TempDir()
	f := WindowsFolders{Roaming: filepath.Join(base, "Roaming"), Local: filepath.Join(base, "Local")}
	old := filepath.Join(f.Roaming, "JobDesk")
	writeFiles(t, old, oldData)
	rename = func(a, b string) error { return &os.LinkError{Op: "rename", Old: a, New: b, Err: errors.New("in use")} }
	defer func() { rename = os.Rename }()
	if _, err := WindowsDataDir(f); err == nil {
		t.Fatal("a failed move gave a data folder")
	}
	if readFile(t, filepath.Join(old, FileName)) != "db" || exists(filepath.Join(old, MovedMarker)) {
		t.Fatal("the old folder changed after a failed move")
	}
}

func TestIsUNC(t *testing.T) {
	for path, want := range map[string]bool{
		`\\server\share\JobDesk`:       true,
		`//server/share/JobDesk`:       true,
		`\\?\UNC\server\share\JobDesk`: true,
		`\\?\C:\Users\u\JobDesk`:       false,
		`\\.\pipe\x`:                   false,
		`C:\Users\u\AppData\Local`:     false,
		`Z:\JobDesk`:                   false, // a mapped drive: GetDriveTypeW decides, on Windows
		`/home/u/.local/share/JobDesk`: false,
	} {
		if got := isUNC(path); got != want {
			t.Errorf("isUNC(%q) = %v, want %v", path, got, want)
		}
	}
}

// exdev is the error a rename across drives fails with on this OS.
func exdev() error {
	if runtime.GOOS == "windows" {
		return syscall.Errno(17) // ERROR_NOT_SAME_DEVICE
	}
	return syscall.EXDEV
}
