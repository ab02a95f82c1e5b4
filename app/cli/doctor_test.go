package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/store"
)

// TestDoctorFindsDamageAndRestores: `doctor` passes a healthy database, finds a damaged one
// (whose commands are refused), and `doctor --restore` brings back the backup so that the
// commands work again with the jobs the backup held.
func TestDoctorFindsDamageAndRestores(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(in, []byte("hello"), 0o600)
	if code, _, errOut := runCLI(t, "--data-dir", dir, "run", "--type", "checksum", "--wait", in); code != ExitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if code, out, _ := runCLI(t, "--data-dir", dir, "doctor"); code != ExitOK || !strings.Contains(out, "OK") {
		t.Fatalf("doctor on a healthy database: %d %s", code, out)
	}
	// A backup as the running engine takes it daily, then damage every page after the first.
	db := openDB(t, dir)
	if _, err := store.Backup(context.Background(), db, 3); err != nil {
		t.Fatal(err)
	}
	db.Close()
	path := filepath.Join(dir, store.FileName)
	st, _ := os.Stat(path)
	junk := make([]byte, st.Size()-4096)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	f.WriteAt(junk, 4096)
	f.Close()

	code, out, _ := runCLI(t, "--data-dir", dir, "doctor")
	if code != ExitFailed || !strings.Contains(out, "DAMAGED") || !strings.Contains(out, "--restore") {
		t.Fatalf("doctor on a damaged database: %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, "--data-dir", dir, "ls"); code == ExitOK || !strings.Contains(errOut, "E009") {
		t.Fatalf("ls on a damaged database: %d %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "--data-dir", dir, "doctor", "--restore")
	if code != ExitOK || !strings.Contains(out, "restored") {
		t.Fatalf("doctor --restore: %d %s %s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "--data-dir", dir, "ls", "--json"); code != ExitOK || !strings.Contains(out, "a.txt") {
		t.Fatalf("ls after the restore: %d %s", code, out)
	}
}
