package cli

import (
	"jobdesk/app"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyDataFolderNamed: a data folder on a read-only disk (a tmpfs remounted read-only)
// is refused naming the folder and the reason, in English and Japanese.
func TestReadOnlyDataFolderNamed(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	dir := filepath.Join(mnt, "data")
	a, err := app.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	if _, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		t.Skip("the remount did not make the folder read-only")
	}
	code, _, errOut := runCLI(t, "--data-dir", dir, "ls")
	if code == ExitOK || !strings.Contains(errOut, "E009") || !strings.Contains(errOut, dir) || !strings.Contains(errOut, "read-only") || !strings.Contains(errOut, "読み取り専用") {
		t.Fatalf("ls on a read-only folder: %d\n%s", code, errOut)
	}
}
