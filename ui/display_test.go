package ui

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestX11Reachable: a display that does not exist or is malformed is not reachable; a listening
// TCP display is.
func TestX11Reachable(t *testing.T) {
	for _, d := range []string{"", "nonsense", ":abc", ":987", "127.0.0.1:1"} {
		if x11Reachable(d) {
			t.Errorf("%q reachable", d)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:6099")
	if err != nil {
		t.Skip("port 6099 is taken:", err)
	}
	defer l.Close()
	if !x11Reachable("127.0.0.1:99.0") {
		t.Error("a listening display is not reachable")
	}
}

// TestNoDisplayExitsCleanly builds JobDesk and starts it without a display: it prints the
// bilingual message and exits 2, with no panic.
func TestNoDisplayExitsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "jobdesk")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "DISPLAY=:987")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != ExitNoDisplay {
		t.Fatalf("exit %v, want %d\n%s", err, ExitNoDisplay, out)
	}
	if strings.Contains(string(out), "panic") || !strings.Contains(string(out), "DISPLAY") || !strings.Contains(string(out), "ディスプレイ") {
		t.Fatalf("output:\n%s", out)
	}
}
