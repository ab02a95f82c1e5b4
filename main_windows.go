package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// useParentConsole makes the GUI-subsystem JobDesk.exe a command-line program too. Windows gives
// such a program no console, so when it is started with a command from cmd.exe or PowerShell it
// attaches to the console of the shell that started it and prints there. Output the caller
// redirected (to a file, a pipe or NUL) stays where it was sent. With no command (the window), or
// when started from Explorer (no parent console), nothing changes.
//
// Japanese reads correctly whatever the console's code page (932 by default on a Japanese PC):
// writing to a console handle, Go converts UTF-8 to UTF-16 and calls WriteConsoleW. Redirected
// output is UTF-8 bytes.
func useParentConsole(args []string) {
	if len(args) == 0 {
		return
	}
	outOK, errOK := redirected(windows.STD_OUTPUT_HANDLE), redirected(windows.STD_ERROR_HANDLE)
	if outOK && errOK {
		return
	}
	if r, _, _ := attachConsole.Call(uintptr(attachParentProcess)); r == 0 {
		return // started from Explorer: no console to print to
	}
	con, err := os.OpenFile("CONOUT$", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	if !outOK {
		os.Stdout = con
		_ = windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, windows.Handle(con.Fd()))
	}
	if !errOK {
		os.Stderr = con
		_ = windows.SetStdHandle(windows.STD_ERROR_HANDLE, windows.Handle(con.Fd()))
	}
}

// attachConsole is kernel32's AttachConsole, which golang.org/x/sys/windows does not wrap.
var attachConsole = windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole")

// attachParentProcess is ATTACH_PARENT_PROCESS, (DWORD)-1: the console of the parent process.
const attachParentProcess = ^uint32(0)

// redirected reports whether the standard handle std leads somewhere: a file, a pipe, or a
// character device such as NUL. A GUI program started from a console without redirection has
// none.
func redirected(std uint32) bool {
	h, err := windows.GetStdHandle(std)
	if err != nil || h == 0 || h == windows.InvalidHandle {
		return false
	}
	t, err := windows.GetFileType(h)
	return err == nil && t != windows.FILE_TYPE_UNKNOWN
}
