package ui

import (
	"bytes"
	"io"
	"sync"
)

// onceLog passes the process's log through to w, except that a toolkit error whose reason is one
// of once is written the first time only, with its "Cause:" and "At:" lines: without a session
// bus the toolkit reports "Unable to connect to session D-Bus" on every notification, dozens of
// lines a minute that say nothing new.
type onceLog struct {
	w    io.Writer
	once [][]byte

	mu   sync.Mutex
	seen map[int]bool
	skip bool // the lines of a repeated error's block are being dropped
}

func newOnceLog(w io.Writer, once ...string) *onceLog {
	l := &onceLog{w: w, seen: map[int]bool{}}
	for _, s := range once {
		l.once = append(l.once, []byte(s))
	}
	return l
}

// Write takes one log line (the log package writes each entry in one call).
func (l *onceLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.skip && (bytes.Contains(p, []byte("  Cause:")) || bytes.Contains(p, []byte("  At:"))) {
		return len(p), nil
	}
	l.skip = false
	for i, s := range l.once {
		if bytes.Contains(p, s) {
			if l.seen[i] {
				l.skip = true
				return len(p), nil
			}
			l.seen[i] = true
		}
	}
	return l.w.Write(p)
}
