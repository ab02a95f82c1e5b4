package blob

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// A file another program opened without sharing (as Excel does) reads as in use, through the
// store and through os.Open; once closed it opens. Run under Wine by `make test-windows`.
func TestLockedFileIsInUse(t *testing.T) {
	// Not t.TempDir: its cleanup (os.RemoveAll) fails under Wine 8, which lacks the POSIX-style
	// delete Go uses there; the file and folder are removed one by one.
	dir, err := os.MkdirTemp("", "jobdesk-inuse-")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "売上 2026年.csv")
	defer os.Remove(dir)
	defer os.Remove(p)
	if err := os.WriteFile(p, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	name, _ := windows.UTF16PtrFromString(p)
	h, err := windows.CreateFile(name, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Local{}.Open(context.Background(), p)
	if !InUse(err) {
		windows.CloseHandle(h)
		t.Fatalf("open of a locked file: %v, want in use", err)
	}
	if _, err := os.Open(p); !InUse(err) {
		t.Errorf("os.Open of a locked file: %v, want in use", err)
	}
	windows.CloseHandle(h)
	f, err := Local{}.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("after closing: %v", err)
	}
	f.Close()
}
