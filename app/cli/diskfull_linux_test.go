package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunWaitEndsOnFullDisk: 1M-row imports into a data folder on a 40 MB disk (the files on it
// too) fill it. The waiting command must not hang: it ends with E009 saying what to free and
// what becomes of each unfinished job, and what it says of a job matches the job's state: no
// job is left RUNNING, a job waiting says why and when it runs.
//
// Two ways to fill it: both files are there from the start, and the first import's own commits
// fill the disk (its outcomes could then not be recorded, and the jobs stayed RUNNING); or the
// second file and another leave 10 MB, and the second import fills it.
func TestRunWaitEndsOnFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a 40 MB disk with 1M-row imports")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a 40 MB tmpfs to fill")
	}
	first, _ := userLog(1_000_000, 50_000, nil)
	var b strings.Builder // every user's sums differ from the first's
	b.WriteString("ユーザーID,ログイン回数,投稿回数\r\n")
	for i := 1; i <= 1_000_000; i++ {
		fmt.Fprintf(&b, "U%05d,%d,%d\r\n", i%50_000+1, 10+i%89, 20+i%97)
	}
	second := b.String()
	t.Run("first import", func(t *testing.T) { runWaitOnFullDisk(t, first, second, false) })
	t.Run("second import", func(t *testing.T) { runWaitOnFullDisk(t, first, second, true) })
}

func runWaitOnFullDisk(t *testing.T, first, second string, late bool) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=40m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	data := filepath.Join(dir, "data")
	files := []string{filepath.Join(dir, "first.csv"), filepath.Join(dir, "second.csv")}
	var stderr string
	full := false
	writeFile(t, dir, "first.csv", []byte(first))
	if !late {
		writeFile(t, dir, "second.csv", []byte(second))
	}
	for i, f := range files {
		if i == 1 && late {
			// What the first import left, plus other files, leave 10 MB for the second: room
			// for the space JobDesk keeps aside, not for the import.
			writeFile(t, dir, "second.csv", []byte(second))
			var st syscall.Statfs_t
			if err := syscall.Statfs(dir, &st); err != nil {
				t.Fatal(err)
			}
			if free := int64(st.Bavail) * int64(st.Bsize); free > 10<<20 {
				writeFile(t, dir, "other.bin", make([]byte, free-10<<20))
			}
		}
		code, out, errOut := csvMain(t, "--data-dir", data, "run", "--wait", f)
		t.Logf("%s: %d %s %s", f, code, out, errOut)
		if code == ExitOK {
			continue
		}
		stderr = errOut
		full = true
		break
	}
	if !full {
		t.Fatal("the imports fitted on the disk")
	}
	t.Logf("the waiting command ended with:\n%s", stderr)
	if !strings.Contains(stderr, "E009") || !strings.Contains(stderr, "disk is full") || !strings.Contains(stderr, "ディスクがいっぱい") ||
		strings.Contains(stderr, "resumes by itself") {
		t.Fatalf("the waiting command on a full disk said:\n%s", stderr)
	}
	// Room again: every job is in the state the message gave it.
	for _, f := range append(files, filepath.Join(dir, "other.bin")) {
		os.Remove(f)
	}
	code, out, errOut := csvMain(t, "--data-dir", data, "ls", "--all", "--json")
	if code != ExitOK {
		t.Fatalf("ls: %d %s", code, errOut)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var j struct {
			ID       int64  `json:"id"`
			ParentID int64  `json:"parent_id"`
			Name     string `json:"name"`
			Status   string `json:"status"`
			Message  string `json:"message"`
			Error    *struct {
				Code      string `json:"code"`
				Message   string `json:"message"`
				Retryable bool   `json:"retryable"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		t.Logf("after: %s", line)
		if j.Status == "RUNNING" && j.ParentID == 0 {
			// Nothing runs now: a job left RUNNING says something that is not happening.
			t.Errorf("job %d (%s) was left RUNNING", j.ID, j.Name)
		}
		if j.Status == "PENDING" && j.ParentID == 0 && !strings.Contains(j.Message, "disk is full") {
			t.Errorf("job %d (%s) waits with the message %q, which does not say why nor when it runs", j.ID, j.Name, j.Message)
		}
		if j.Name != "first.csv" && j.Name != "second.csv" {
			continue
		}
		switch j.Status {
		case "SUCCEEDED":
		case "FAILED":
			if j.Error == nil || j.Error.Code != "E009" || j.Error.Retryable && !strings.Contains(j.Error.Message, "retried") ||
				strings.Contains(j.Error.Message, "resumes by itself") {
				t.Errorf("job %d failed with %+v", j.ID, j.Error)
			}
			if !strings.Contains(stderr, "retry it (jobdesk retry") {
				t.Errorf("job %d failed but the message did not say to retry it:\n%s", j.ID, stderr)
			}
		case "RUNNING", "PENDING", "RETRYING":
			if !strings.Contains(stderr, "("+j.Name+") could not finish: it runs again") && !strings.Contains(stderr, "("+j.Name+") waits") {
				t.Errorf("job %d is %s but the message did not say it runs again:\n%s", j.ID, j.Status, stderr)
			}
		default:
			t.Errorf("job %d is %s", j.ID, j.Status)
		}
	}
}
