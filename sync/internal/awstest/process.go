package awstest

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a server process a test runs: started by StartProcess, its output collected in Log.
type Process struct {
	Log     *Log
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	waitErr error         // how it exited, once exited is closed
}

// FreeAddr returns a free address of 127.0.0.1 (127.0.0.1:PORT) for a server to listen on.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Listening returns a readiness test for StartProcess: whether addr accepts a connection.
func Listening(addr string) func(*Process) bool {
	return func(*Process) bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
}

// StartProcess starts cmd (name names it in errors) with its standard output and error in the
// Process's Log, and returns when ready says the server is ready. It returns an error, and leaves
// no process behind, when the process exits first or is not ready within the given time. The
// process is killed when this process dies; the caller stops it with Stop.
func StartProcess(name string, cmd *exec.Cmd, ready func(*Process) bool, within time.Duration) (*Process, error) {
	p := &Process{Log: &Log{}, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(within)
	for !ready(p) {
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited: %v\n%s", name, p.waitErr, p.Log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-p.exited
			return nil, fmt.Errorf("%s was not ready within %v\n%s", name, within, p.Log)
		}
	}
	return p, nil
}

// Stop asks the process to end (SIGTERM) and kills it when it has not within grace.
func (p *Process) Stop(grace time.Duration) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// startServer starts a test server with StartProcess, on a new free address each of three
// tries; it is stopped when the test ends. command gives the server's command for an address.
func startServer(t testing.TB, name string, command func(addr string) *exec.Cmd, ready func(addr string) func(*Process) bool) (*Process, string) {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr, err := FreeAddr()
		if err != nil {
			lastErr = err
			continue
		}
		p, err := StartProcess(name, command(addr), ready(addr), 15*time.Second)
		if err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(func() { p.Stop(5 * time.Second) })
		return p, addr
	}
	t.Fatalf("%s did not start: %v", name, lastErr)
	return nil, ""
}

// Log collects a process's output while a test reads it.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
