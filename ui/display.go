package ui

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ExitNoDisplay is the exit status when there is no display to open the window on.
const ExitNoDisplay = 2

// NoDisplayMessage is printed instead of a panic when JobDesk starts without a display.
const NoDisplayMessage = `jobdesk: no display to open the window on (DISPLAY is not set or cannot be reached).
         Use the command line (jobdesk help), or set DISPLAY to a running X server.
         ウィンドウを開くディスプレイがありません（DISPLAY が未設定か、接続できません）。
         コマンドライン（jobdesk help）を使うか、DISPLAY に動作中の X サーバーを指定してください。
`

// CanOpenDisplay reports whether the window can be opened: on Linux and the BSDs, DISPLAY names
// an X server that accepts a connection (Fyne's desktop driver speaks X11); elsewhere the
// desktop is always there.
func CanOpenDisplay() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
	default:
		return true
	}
	return x11Reachable(os.Getenv("DISPLAY"))
}

// x11Reachable reports whether the X display named display ("[host]:N[.S]") takes a
// connection: its Unix socket (file or abstract) for a local display, TCP port 6000+N for a
// remote one.
func x11Reachable(display string) bool {
	i := strings.LastIndexByte(display, ':')
	if i < 0 {
		return false
	}
	host, num := display[:i], display[i+1:]
	if j := strings.IndexByte(num, '.'); j >= 0 {
		num = num[:j]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return false
	}
	dial := func(network, addr string) bool {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	if host == "" || host == "unix" {
		sock := "/tmp/.X11-unix/X" + strconv.Itoa(n)
		return dial("unix", sock) || dial("unix", "@"+sock)
	}
	return dial("tcp", net.JoinHostPort(host, strconv.Itoa(6000+n)))
}
