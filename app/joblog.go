package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"jobdesk/engine/job"
)

// This file writes the structured log of the specifications (seed 003, 8-5): one JSON object a
// line with timestamp, level (INFO / WARN / ERROR), job_type, job_id, correlation_id, message,
// data and error {code, message}, into logs/jobdesk.log in the data folder, rotated by size.

// Log file rotation: the file is renamed to jobdesk.log.1 (older ones shift up to LogKeep) when
// it would pass LogMaxBytes.
const (
	LogDir      = "logs"
	LogFile     = "jobdesk.log"
	LogMaxBytes = 5 << 20
	LogKeep     = 3
)

// RotatingFile is an io.Writer that appends to a file and rotates it by size.
type RotatingFile struct {
	mu   sync.Mutex
	path string
	max  int64
	keep int
	f    *os.File
	size int64
}

// OpenRotatingFile opens (creating) path for appending; it rotates past max bytes, keeping keep
// old files.
func OpenRotatingFile(path string, max int64, keep int) (*RotatingFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	r := &RotatingFile{path: path, max: max, keep: keep}
	return r, r.open()
}

func (r *RotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, st.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its limit.
func (r *RotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *RotatingFile) rotate() error {
	r.f.Close()
	for i := r.keep - 1; i >= 1; i-- {
		os.Rename(r.rotated(i), r.rotated(i+1))
	}
	os.Rename(r.path, r.rotated(1))
	return r.open()
}

// Close closes the file.
func (r *RotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// rotated is the name of the i-th older log file.
func (r *RotatingFile) rotated(i int) string { return r.path + "." + strconv.Itoa(i) }

// NewJSONLogger is a slog logger that writes the specifications' log format to w.
func NewJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 {
			return a
		}
		switch a.Key {
		case slog.TimeKey:
			return slog.String("timestamp", a.Value.Time().Format(time.RFC3339Nano))
		case slog.MessageKey:
			a.Key = "message"
		}
		return a
	}}))
}

// LogJobEvents writes one log line for every status change of every job (not progress) until
// ctx ends, into the data folder's rotated log. It returns when ctx ends or the log cannot be
// opened.
func (a *App) LogJobEvents(ctx context.Context) error {
	w, err := OpenRotatingFile(filepath.Join(a.DataDir(), LogDir, LogFile), LogMaxBytes, LogKeep)
	if err != nil {
		return err
	}
	defer w.Close()
	log := NewJSONLogger(w)
	events, stop := a.Subscribe(4096)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-events:
			if e.Kind == job.EventProgress || e.JobID == 0 {
				continue
			}
			a.logEvent(ctx, log, e)
		}
	}
}

// logEvent writes e as one line: the job's type, its top-level job as correlation id, the
// event's kind and status as data, and a failure's code and message.
func (a *App) logEvent(ctx context.Context, log *slog.Logger, e job.Event) {
	j, err := a.Get(ctx, e.JobID)
	if err != nil {
		return
	}
	level := slog.LevelInfo
	attrs := []any{slog.String("job_type", j.Type), slog.Int64("job_id", j.ID)}
	corr := j.ID
	if j.ParentID != 0 {
		corr = j.ParentID
	}
	attrs = append(attrs, slog.Int64("correlation_id", corr),
		slog.Group("data", slog.String("event", e.Kind), slog.String("status", string(e.Status)), slog.String("name", j.Name)))
	switch e.Status {
	case job.Failed, job.TimedOut:
		level = slog.LevelError
	case job.Retrying, job.Partial:
		level = slog.LevelWarn
	}
	if j.Error != nil && (e.Status == job.Failed || e.Status == job.TimedOut || e.Status == job.Retrying) {
		attrs = append(attrs, slog.Group("error", slog.String("code", string(j.Error.Code)), slog.String("message", j.Error.Message)))
	}
	msg := e.Message
	if msg == "" {
		msg = e.Kind
	}
	log.Log(ctx, level, msg, attrs...)
}
