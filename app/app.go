// Package app is JobDesk's composition root: it opens the data folder and database, registers
// every job family's handlers with the engine, and offers the service API that the window (ui)
// and the command line (cli.go) both use — submit, list, watch, cancel, retry. Nothing below it
// knows about windows or flags; nothing above it touches SQL.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Config is what JobDesk needs to start.
type Config struct {
	// DataDir is the data folder (database, result files). Empty: store.DefaultDataDir().
	DataDir string
	// Workers is how many jobs run at once (0: number of CPUs).
	Workers int
	// Retention is how long finished jobs are kept (0: 90 days).
	Retention time.Duration
}

// App is one running JobDesk: its database, queue and (once started) engine.
type App struct {
	cfg    Config
	DB     *store.DB
	Queue  *queue.Queue
	worker *queue.Worker

	stateMu sync.Mutex
	state   map[string]any // families' own state (SetState)
}

// Open opens (creating when missing) the data folder and database.
func Open(cfg Config) (*App, error) {
	if cfg.DataDir == "" {
		d, err := store.DefaultDataDir()
		if err != nil {
			return nil, job.Wrap(job.E014, err, "cannot find the user data folder; pass --data-dir").
				WithJa("ユーザーデータフォルダーが見つかりません。--data-dir を指定してください。")
		}
		cfg.DataDir = d
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err == nil {
		cfg.DataDir = abs
	}
	db, err := store.OpenDir(cfg.DataDir, migrations()...)
	if err != nil {
		switch {
		case errors.Is(err, store.ErrDamaged):
			return nil, job.Wrap(job.E009, err, fmt.Sprintf("the database in %s is damaged; move it aside to start afresh", cfg.DataDir)).
				WithJa("データベースが壊れています。ファイルを別の場所に移すと新しく始められます。").Permanent()
		case errors.Is(err, store.ErrNetworkFolder):
			return nil, job.Wrap(job.E014, err, fmt.Sprintf("the data folder %s is on a network drive, where the database could be damaged; choose a folder on this PC with --data-dir", cfg.DataDir)).
				WithJa(fmt.Sprintf("データフォルダー %s はネットワークドライブ上にあり、データベースが壊れるおそれがあります。--data-dir でこの PC 上のフォルダーを指定してください。", cfg.DataDir))
		case errors.Is(err, store.ErrTooNew):
			return nil, job.Wrap(job.E009, err, "the database was created by a newer JobDesk; please update JobDesk").
				WithJa("データベースは新しいバージョンの JobDesk で作成されています。JobDesk を更新してください。").Permanent()
		}
		return nil, job.Wrap(job.E009, err, "the database could not be opened").WithJa("データベースを開けませんでした。")
	}
	q, err := queue.Open(db, queue.Options{DataDir: cfg.DataDir, Retention: cfg.Retention})
	if err != nil {
		db.Close()
		return nil, job.Wrap(job.E009, err, "the job queue could not be opened").WithJa("ジョブキューを開けませんでした。")
	}
	a := &App{cfg: cfg, DB: db, Queue: q}
	for _, f := range families {
		if f.Open == nil {
			continue
		}
		if err := f.Open(a); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// DataDir returns the data folder in use.
func (a *App) DataDir() string { return a.cfg.DataDir }

// migrations lists every package's schema, applied at open.
func migrations() []store.Migrations {
	sets := []store.Migrations{queue.Migrations}
	for _, f := range families {
		sets = append(sets, f.Migrations...)
	}
	return sets
}

// register adds every job family's handlers to w.
func (a *App) register(w *queue.Worker) {
	for _, f := range families {
		if f.Register != nil {
			f.Register(a, w)
		}
	}
}

// StartEngine starts running jobs in this process until Close.
func (a *App) StartEngine(ctx context.Context) error {
	if a.worker != nil {
		return nil
	}
	w := queue.NewWorker(a.Queue, queue.WorkerOptions{Workers: a.cfg.Workers})
	a.register(w)
	if err := w.Start(ctx); err != nil {
		return err
	}
	a.worker = w
	return nil
}

// EngineRunning reports whether an engine runs in this process or in another live process on
// this machine using the same data folder.
func (a *App) EngineRunning(ctx context.Context) bool {
	if a.worker != nil {
		return true
	}
	elsewhere, err := a.Queue.WorkerElsewhere(ctx)
	return err == nil && elsewhere
}

// Close stops the engine (running jobs go back to the queue) and closes the database.
func (a *App) Close() error {
	if a.worker != nil {
		a.worker.Stop()
	}
	for _, f := range families {
		if f.Close != nil {
			f.Close(a)
		}
	}
	a.Queue.Close()
	return a.DB.Close()
}

// SubmitOptions adjust Submit.
type SubmitOptions struct {
	Type     string            // job type; empty: detected from each file
	Priority int               // higher runs first
	Force    bool              // run again even when the same input was already processed
	Extra    map[string]string // families' own options (Family.RunFlags), by flag name
}

// Submit enqueues one job per file and returns them in the order of paths (a family that
// recognises a file it processed before returns that job instead of a new one). A missing or
// unreadable path is refused with a clear error before anything is enqueued; should a later
// step fail, the jobs made so far are returned, in order, with the error.
func (a *App) Submit(ctx context.Context, paths []string, o SubmitOptions) ([]job.Job, error) {
	type request struct {
		path, typ string
		f         Family
	}
	var reqs []request
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, job.Wrap(job.E014, err, fmt.Sprintf("%s does not exist or cannot be read", p)).
				WithJa(fmt.Sprintf("%s が見つからないか、読み取れません。", p))
		}
		if st.IsDir() {
			return nil, job.Errorf(job.E014, "%s is a folder; drop files instead", p).
				WithJa(fmt.Sprintf("%s はフォルダーです。ファイルを指定してください。", p))
		}
		typ := o.Type
		if typ == "" {
			typ = DetectType(abs)
		}
		f, ok := familyOf(typ)
		if !ok {
			return nil, job.Errorf(job.E014, "unknown job type %q (known: %s)", typ, strings.Join(Types(), ", ")).
				WithJa(fmt.Sprintf("ジョブの種類 %q は存在しません。", typ))
		}
		reqs = append(reqs, request{abs, typ, f})
	}
	out := make([]job.Job, len(reqs))
	done := make([]bool, len(reqs))
	made := func() []job.Job {
		var js []job.Job
		for i, ok := range done {
			if ok {
				js = append(js, out[i])
			}
		}
		return js
	}
	// Plain jobs go in one transaction; families with their own Submit start theirs one by one.
	var ps []queue.Params
	var plain []int // indexes of reqs enqueued through ps
	for i, r := range reqs {
		if r.f.Submit != nil {
			j, err := r.f.Submit(ctx, a, r.path, r.typ, o)
			if err != nil {
				return made(), err
			}
			out[i], done[i] = j, true
			continue
		}
		in, _ := jsonMarshal(map[string]string{"path": r.path})
		ps = append(ps, queue.Params{Type: r.typ, Name: filepath.Base(r.path), Input: in, Priority: o.Priority})
		plain = append(plain, i)
	}
	ids, err := a.Queue.EnqueueBatch(ctx, ps)
	if err != nil {
		return made(), err
	}
	for k, id := range ids {
		j, err := a.Queue.Get(ctx, id)
		if err != nil {
			return made(), err
		}
		out[plain[k]], done[plain[k]] = j, true
	}
	return out, nil
}

// Types returns the job types a person can ask for.
func Types() []string {
	var out []string
	for _, f := range families {
		out = append(out, f.Types...)
	}
	return out
}

// KnownType reports whether typ is one of Types.
func KnownType(typ string) bool {
	_, ok := familyOf(typ)
	return ok
}

// DetectType picks the job type for a dropped file: the first family (by priority) that takes it.
func DetectType(path string) string {
	head := readHead(path)
	for _, f := range families {
		if f.Detect == nil {
			continue
		}
		if t := f.Detect(path, head); t != "" {
			return t
		}
	}
	return ""
}
