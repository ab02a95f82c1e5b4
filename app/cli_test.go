package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"jobdesk/engine/job"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCLIRunWaitJSONAndShow(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(t.TempDir(), "売上データ.bin")
	os.WriteFile(f, bytes.Repeat([]byte("jobdesk"), 1<<20), 0o600)
	code, out, errOut := runCLI(t, "--data-dir", dir, "run", "--wait", "--json", f)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"id", "type", "name", "status", "progress", "message", "target", "attempts",
		"max_attempts", "input", "result", "error", "parent_id", "created_at", "started_at", "updated_at", "completed_at"} {
		if _, ok := j[k]; !ok {
			t.Errorf("--json output lacks %q", k)
		}
	}
	if j["status"] != "SUCCEEDED" || j["name"] != "売上データ.bin" || j["progress"].(float64) != 100 {
		t.Fatalf("%v", j)
	}
	id := int64(j["id"].(float64))
	code, out, _ = runCLI(t, "--data-dir", dir, "show", "--history", itoa(id))
	if code != 0 || !strings.Contains(out, "SUCCEEDED") || !strings.Contains(out, "TaskStarted") || !strings.Contains(out, "sha256") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "ls", "--json", "--status", "succeeded", "--data-dir="+dir)
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("ls: %d %q", code, out)
	}
	// Retrying a succeeded job is refused with a clear message.
	code, _, errOut = runCLI(t, "--data-dir", dir, "retry", itoa(id))
	if code != ExitUsage || !strings.Contains(errOut, "E014") || !strings.Contains(errOut, "再実行") {
		t.Fatalf("retry: %d %s", code, errOut)
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run"}, ExitUsage, "name at least one file"},
		{[]string{"run", filepath.Join(dir, "nope.csv")}, ExitUsage, "見つからない"},
		{[]string{"run", "--type", "nosuch", os.Args[0]}, ExitUsage, "unknown job type"},
		{[]string{"show", "abc"}, ExitUsage, "not a job id"},
		{[]string{"show", "42"}, ExitUsage, "E014"},
		{[]string{"cancel", "42"}, ExitUsage, "E014"},
		{[]string{"ls", "--status", "DONE"}, ExitUsage, "unknown status"},
		{[]string{"frobnicate"}, ExitUsage, "unknown command"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, append([]string{"--data-dir", dir}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

func TestCLIDamagedDatabase(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "jobdesk.db"), bytes.Repeat([]byte{0xde, 0xad}, 4096), 0o600)
	code, _, errOut := runCLI(t, "--data-dir", dir, "ls")
	if code != ExitFailed || !strings.Contains(errOut, "damaged") || !strings.Contains(errOut, "壊れて") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestExitCode(t *testing.T) {
	mk := func(ss ...job.Status) []job.Job {
		var js []job.Job
		for _, s := range ss {
			js = append(js, job.Job{Status: s})
		}
		return js
	}
	cases := []struct {
		jobs []job.Job
		want int
	}{
		{mk(job.Succeeded, job.Succeeded), 0},
		{mk(job.Succeeded, job.Partial), 3},
		{mk(job.Partial, job.Failed), 1},
		{mk(job.TimedOut), 1},
		{mk(job.Cancelled, job.Partial), 1},
	}
	for _, c := range cases {
		if got := ExitCode(c.jobs); got != c.want {
			t.Errorf("%v: %d, want %d", c.jobs, got, c.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
