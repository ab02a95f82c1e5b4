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
	checkpoint(t, dir)
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

// With no backup in the data folder, `doctor` and the refused commands do not send the person
// to `doctor --restore` (which can only fail) but say there is no backup; `doctor --restore`
// then fails saying why in Japanese too, not only in English.
func TestDoctorWithoutBackup(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(in, []byte("hello"), 0o600)
	if code, _, errOut := runCLI(t, "--data-dir", dir, "run", "--type", "checksum", "--wait", in); code != ExitOK {
		t.Fatalf("run: %d %s", code, errOut)
	}
	path := filepath.Join(dir, store.FileName)
	checkpoint(t, dir)
	st, _ := os.Stat(path)
	junk := make([]byte, st.Size()-4096)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	f.WriteAt(junk, 4096)
	f.Close()

	code, out, _ := runCLI(t, "--data-dir", dir, "doctor")
	if code != ExitFailed || !strings.Contains(out, "DAMAGED") || strings.Contains(out, "--restore") ||
		!strings.Contains(out, "no backup to restore") || !strings.Contains(out, "バックアップはありません") {
		t.Fatalf("doctor on a damaged database without backups: %d\n%s", code, out)
	}
	code, _, errOut := runCLI(t, "--data-dir", dir, "ls")
	if code == ExitOK || !strings.Contains(errOut, "E009") || strings.Contains(errOut, "--restore") || !strings.Contains(errOut, "バックアップはありません") {
		t.Fatalf("ls on a damaged database without backups: %d\n%s", code, errOut)
	}
	code, _, errOut = runCLI(t, "--data-dir", dir, "doctor", "--restore")
	backups := filepath.Join(dir, store.BackupDir)
	if code == ExitOK || !strings.Contains(errOut, "there is no backup in "+backups) ||
		!strings.Contains(errOut, backups+" にバックアップがありません") {
		t.Fatalf("doctor --restore without backups: %d\n%s", code, errOut)
	}
	// A backup that does not pass the check: the Japanese line carries the reason too.
	os.MkdirAll(backups, 0o700)
	os.WriteFile(filepath.Join(backups, "jobdesk-20260101-000000.000.db"), junk, 0o600)
	code, _, errOut = runCLI(t, "--data-dir", dir, "doctor", "--restore")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code == ExitOK || len(lines) < 2 || !strings.Contains(lines[1], "jobdesk-20260101-000000.000.db") {
		t.Fatalf("doctor --restore with a damaged backup: %d\n%s", code, errOut)
	}
}

// checkpoint moves every page of data folder dir's database from its WAL into the file, so that
// junk written over the file lands on the pages (a command's last connection checkpoints as it
// closes, but not when another connection still reads at that moment).
func checkpoint(t *testing.T, dir string) {
	t.Helper()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, logged, moved int
	if err := db.W.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &moved); err != nil || busy != 0 {
		t.Fatalf("checkpoint: busy %d, %v", busy, err)
	}
}
