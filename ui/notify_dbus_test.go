//go:build linux

package ui

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"github.com/godbus/dbus/v5"

	"jobdesk/engine/job"
)

// startProcess starts name with args and env added to this process's, stopped when t ends.
func startProcess(t *testing.T, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	t.Cleanup(func() {
		if cmd.Process == nil {
			return
		}
		cmd.Process.Signal(syscall.SIGTERM) // Xvfb removes its lock file
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// desktopNotifications starts what a Linux desktop has: a display (Xvfb), a session bus
// (dbus-daemon) and a notification service on it (dunst, a real one), and points this process's
// D-Bus at the bus. It returns the environment that reaches them.
func desktopNotifications(t *testing.T) []string {
	t.Helper()
	for _, tool := range []string{"Xvfb", "dbus-daemon", "dunst", "dunstctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make test installs it)", tool)
		}
	}
	// Xvfb picks a free display itself and names it once it accepts clients (-displayfd): no
	// display number raced for with other servers, no client started before it listens.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	x := startProcess(t, nil, "Xvfb", "-displayfd", "3", "-screen", "0", "800x600x24", "-nolisten", "tcp")
	x.ExtraFiles = []*os.File{w}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	disp, err := readLine(r, 30*time.Second)
	r.Close()
	if err != nil || disp == "" {
		t.Fatalf("Xvfb named no display: %v", err)
	}
	dir := t.TempDir()
	bus := startProcess(t, nil, "dbus-daemon", "--session", "--nofork", "--print-address=1",
		"--address=unix:path="+filepath.Join(dir, "bus"))
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	env := []string{"DBUS_SESSION_BUS_ADDRESS=" + strings.TrimSpace(addr), "DISPLAY=:" + disp,
		"HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "XDG_CACHE_HOME=" + dir}
	// Notifications stay until clicked: with dunst's default ten seconds, a loaded machine let
	// the first job's notification expire before the second was shown and clicked.
	rc := "[urgency_low]\n    timeout = 0\n[urgency_normal]\n    timeout = 0\n[urgency_critical]\n    timeout = 0\n"
	if err := os.MkdirAll(filepath.Join(dir, "dunst"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dunst", "dunstrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	if err := startProcess(t, env, "dunst").Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var owned bool
		if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, notifyService).Store(&owned) == nil && owned {
			return env
		}
		if time.Now().After(deadline) {
			t.Fatal("dunst did not take the notification service")
		}
	}
}

// readLine reads one line from r, failing after timeout (a process that never writes it).
func readLine(r *os.File, timeout time.Duration) (string, error) {
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		got <- line{strings.TrimSpace(s), err}
	}()
	select {
	case l := <-got:
		return l.s, l.err
	case <-time.After(timeout):
		return "", fmt.Errorf("nothing read in %s", timeout)
	}
}

// TestNotificationClickShowsTheJob: with a real notification service, a job that ends shows a
// notification; clicking it (dunstctl's default action, as a click does) selects that job in
// the window.
func TestNotificationClickShowsTheJob(t *testing.T) {
	env := desktopNotifications(t)
	h := newHarness(t, LangJa)
	u := h.ui
	sent := recordNotifications(u) // Fyne's path: must not be taken
	u.clicks = newNotificationClicks()
	if u.clicks == nil || !u.clicks.actions {
		t.Fatal("the notification service on the session bus was not reached, or takes no clicks")
	}
	defer u.clicks.close()
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	var ids []int64
	for i, name := range []string{"請求書.bin", "見積書.bin"} {
		path, _ := writeFile(t, name, 100+i) // other bytes: not the same file dropped twice
		u.handleDrop(fyne.NewPos(1, 1), []fyne.URI{storage.NewFileURI(path)})
		h.waitFor("the row", func() bool { return len(u.model.rows) == len(ids)+1 })
		id := u.model.rows[0].ID
		h.waitFor("the job to succeed", h.statusIs(id, job.Succeeded))
		ids = append(ids, id)
	}
	u.showJob(ids[1])
	if len(*sent) != 0 {
		t.Fatalf("Fyne's notifications were used: %d", len(*sent))
	}
	// Both notifications on screen (dunst stacks them in one window, the oldest on top): a
	// click on the top one, the first job's, with the button dunst acts on (its default binding:
	// the middle button does the default action).
	// Each command has its own bound: one for them all ran out while a loaded machine was still
	// showing the notifications.
	run := func(name string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return strings.TrimSpace(string(out))
	}
	h.waitFor("both notifications on screen", func() bool { return run("dunstctl", "count", "displayed") == "2" })
	win := strings.Fields(run("xdotool", "search", "--sync", "--class", "dunst"))[0]
	geo := map[string]int{}
	for _, line := range strings.Fields(run("xdotool", "getwindowgeometry", "--shell", win)) {
		k, v, _ := strings.Cut(line, "=")
		var n int
		fmt.Sscan(v, &n)
		geo[k] = n
	}
	run("xdotool", "mousemove", fmt.Sprint(geo["X"]+geo["WIDTH"]/2), fmt.Sprint(geo["Y"]+8), "click", "2")
	h.waitFor("the clicked job selected", func() bool { return u.selected == ids[0] })
}
