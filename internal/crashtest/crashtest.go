// Package crashtest is the harness JobDesk's crash tests share: a parent test runs one test
// function of its own test binary again as a child process working on a data folder, and kills
// it, restarts it or waits for it; the child test finds its folder with Child and is skipped
// when the test binary runs as itself.
package crashtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// dirEnv carries the child's data folder from the parent.
const dirEnv = "JOBDESK_CRASH_CHILD_DIR"

// Child returns the data folder the parent gave this child test, and skips the test when it was
// not started by a parent (parent names the test that starts it, for the skip message).
func Child(t testing.TB, parent string) string {
	t.Helper()
	dir := os.Getenv(dirEnv)
	if dir == "" {
		t.Skip("run by " + parent)
	}
	return dir
}

// Command returns the command that runs the test function child of this test binary as a
// child process on dir, with args added to its flags (-test.v, …). ctx, when it ends, kills it.
func Command(ctx context.Context, child, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^" + child + "$", "-test.count=1"}, args...)...)
	cmd.Env = append(os.Environ(), dirEnv+"="+dir)
	return cmd
}

// Killed reports whether err, what a child's Wait or Run returned, says it died by SIGKILL
// (rather than ending by itself, with or without an error).
func Killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
