package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"jobdesk/app"
)

// TestReadOnlyDataFolderNamed: on a data folder on a read-only disk (a tmpfs remounted
// read-only), ls and show still read the jobs, and a command that writes is refused naming
// the folder and the reason, in English and Japanese.
func TestReadOnlyDataFolderNamed(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	defer unmount(mnt)
	dir := filepath.Join(mnt, "data")
	a, err := app.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "見積書.bin")
	os.WriteFile(f, []byte("jobdesk"), 0o600)
	jobs, err := a.Submit(context.Background(), []string{f}, app.SubmitOptions{})
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	a.Close()
	// The database's last connection may close a moment after Close returns (the queue's
	// watcher lets go of its own): until then the mount is busy.
	var remount error
	for try := 0; try < 50; try++ {
		out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput()
		if remount = err; err == nil {
			break
		}
		remount = fmt.Errorf("%v %s", err, out)
		time.Sleep(50 * time.Millisecond)
	}
	if remount != nil {
		t.Skipf("cannot remount read-only: %v", remount)
	}
	if _, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		t.Skip("the remount did not make the folder read-only")
	}
	id := strconv.FormatInt(jobs[0].Number, 10)
	if code, out, errOut := runCLI(t, "--data-dir", dir, "ls"); code != ExitOK || !strings.Contains(out, "見積書.bin") {
		t.Fatalf("ls on a read-only folder: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "--data-dir", dir, "show", "--json", id); code != ExitOK || !strings.Contains(out, "見積書.bin") {
		t.Fatalf("show on a read-only folder: %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"cancel", id}, {"run", f}} {
		code, _, errOut := runCLI(t, append([]string{"--data-dir", dir}, args...)...)
		if code == ExitOK || !strings.Contains(errOut, "E009") || !strings.Contains(errOut, dir) || !strings.Contains(errOut, "read-only") || !strings.Contains(errOut, "読み取り専用") {
			t.Fatalf("%s on a read-only folder: %d\n%s", args[0], code, errOut)
		}
	}
}

// unmount unmounts mnt, waiting for the connections that close a moment after the App does;
// a mount still busy after that is detached lazily, so the test's folder can be removed.
func unmount(mnt string) {
	for try := 0; try < 50; try++ {
		if exec.Command("umount", mnt).Run() == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	exec.Command("umount", "-l", mnt).Run()
}
