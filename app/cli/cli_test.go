package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"jobdesk/app/aifamily"
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
	for _, k := range []string{"id", "number", "type", "name", "status", "progress", "message", "target", "attempts",
		"max_attempts", "input", "result", "error", "parent_id", "created_at", "started_at", "updated_at", "completed_at"} {
		if _, ok := j[k]; !ok {
			t.Errorf("--json output lacks %q", k)
		}
	}
	if j["status"] != "SUCCEEDED" || j["name"] != "売上データ.bin" || j["progress"].(float64) != 100 {
		t.Fatalf("%v", j)
	}
	if j["number"] != 1.0 {
		t.Fatalf("the first job's number: %v, want 1", j["number"])
	}
	code, out, _ = runCLI(t, "--data-dir", dir, "show", "--history", "1")
	if code != 0 || !strings.Contains(out, "SUCCEEDED") || !strings.Contains(out, "TaskStarted") || !strings.Contains(out, "sha256") ||
		!strings.Contains(out, "#1") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	if code, again, _ := runCLI(t, "--data-dir", dir, "show", "--history", "#1"); code != 0 || again != out {
		t.Fatalf("show #1: %d\n%s", code, again)
	}
	code, out, _ = runCLI(t, "ls", "--json", "--status", "succeeded", "--data-dir="+dir)
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("ls: %d %q", code, out)
	}
	// Retrying a succeeded job is refused with a clear message.
	code, _, errOut = runCLI(t, "--data-dir", dir, "retry", "1")
	if code != ExitUsage || !strings.Contains(errOut, "E014") || !strings.Contains(errOut, "再実行") || !strings.Contains(errOut, "job #1 is SUCCEEDED") {
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
		{[]string{"show", "abc"}, ExitUsage, "not a job number"},
		{[]string{"show", "42"}, ExitUsage, "there is no job #42"},
		{[]string{"show", "id:42"}, ExitUsage, "there is no job with id 42"},
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

// Without a terminal, --wait prints a line when a job's status, quarter of progress or message
// changes, with the message (why it waits), and never the same line twice: a job going back and
// forth between PENDING and RUNNING while its provider is offline prints two lines, not two a
// turn.
func TestWaitLinesWithoutTerminal(t *testing.T) {
	j := func(st job.Status, pct float64, msg string) []job.Job {
		return []job.Job{{ID: 7, Number: 2, Name: "目標", Status: st, Progress: pct, Message: msg}}
	}
	steps := [][]job.Job{
		j(job.Pending, 0, ""),
		j(job.Pending, 0, "AI provider offline"),
		j(job.Running, 0, "AI provider offline"),
		j(job.Pending, 0, "AI provider offline"),
		j(job.Running, 0, "AI provider offline"),
		j(job.Pending, 0, "AI provider offline"),
		j(job.Running, 0, "starting the subgoal-generation workflow"),
		j(job.Running, 10, "Generating 8 sub-goals"),
		j(job.Running, 50, "Sub-goals generated; saving"),
		j(job.Succeeded, 100, "8 sub-goals generated for goal 1"),
	}
	var errb bytes.Buffer
	c := &CLI{Stdout: io.Discard, Stderr: &errb}
	printed := printedLines{}
	for _, s := range steps {
		c.drawProgress(s, false, printed)
	}
	want := strings.Join([]string{
		"job #2 目標 PENDING 0%",
		"job #2 目標 PENDING 0% · AI provider offline",
		"job #2 目標 RUNNING 0% · AI provider offline",
		"job #2 目標 RUNNING 0% · starting the subgoal-generation workflow",
		"job #2 目標 RUNNING 50% · Sub-goals generated; saving",
		"job #2 目標 SUCCEEDED 100% · 8 sub-goals generated for goal 1",
	}, "\n") + "\n"
	if errb.String() != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", errb.String(), want)
	}
}

// run (and worker) take the --ai-* flags like generate does, for AI jobs run in this process.
func TestRunTakesAIFlags(t *testing.T) {
	for _, k := range []string{aifamily.EnvEndpoint, aifamily.EnvModel, aifamily.EnvProvider} {
		t.Setenv(k, os.Getenv(k)) // the flags set the environment; put it back afterwards
	}
	f := filepath.Join(t.TempDir(), "a.bin")
	os.WriteFile(f, []byte("x"), 0o600)
	code, out, errOut := runCLI(t, "--data-dir", t.TempDir(), "run", "--ai-endpoint", "http://127.0.0.1:9/v1", "--ai-model", "m", "--wait", f)
	if code != ExitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
}
