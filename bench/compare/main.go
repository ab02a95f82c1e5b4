// Command compare measures JobDesk's queue next to two SQLite job queues on the same machine in
// the same run: goqite (maragu.dev/goqite, with its jobs runner) and River with its SQLite driver
// (riverqueue/river/riverdriver/riversqlite). Each gets a fresh database file in WAL mode through
// the same driver (modernc.org/sqlite) and is asked to do the same work:
//
//   - enqueue: N jobs, one call (one transaction) each;
//   - drain: N already-enqueued no-op jobs run by 4 workers, from start to the last completion.
//
// It lives in its own Go module so the product's go.mod never depends on the queues it beats.
// Usage: go run . [-n 5000]
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"maragu.dev/goqite"
	"maragu.dev/goqite/jobs"
	_ "modernc.org/sqlite"

	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

const workers = 4

// result is one queue's figures.
type result struct {
	name           string
	enqueue, drain float64 // jobs per second
	err            error
}

func main() {
	n := flag.Int("n", 5000, "jobs per measurement")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "jobdesk-compare-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	results := []result{
		measure("jobdesk", filepath.Join(tmp, "jobdesk"), *n, jobdeskQueue),
		measure("goqite v0.4.0", filepath.Join(tmp, "goqite"), *n, goqiteQueue),
		measure("river v0.47.0 (riversqlite)", filepath.Join(tmp, "river"), *n, riverQueue),
	}
	fmt.Printf("Queue comparison: %d jobs, %d workers, file database (WAL), modernc.org/sqlite\n", *n, workers)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "queue\tenqueue (jobs/s)\tdrain, 4 workers (jobs/s)\tvs jobdesk (drain)\t")
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(tw, "%s\terror: %v\t\t\t\n", r.name, r.err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f×\t\n", r.name, r.enqueue, r.drain, r.drain/results[0].drain)
	}
	tw.Flush()
}

// subject is a queue under test: enqueue adds one no-op job; drain runs every enqueued job with
// 4 workers and returns when the last one completed.
type subject struct {
	enqueue func(ctx context.Context) error
	drain   func(ctx context.Context, n int) error
	close   func()
}

func measure(name, dir string, n int, open func(dir string) (subject, error)) result {
	r := result{name: name}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.err = err
		return r
	}
	s, err := open(dir)
	if err != nil {
		r.err = err
		return r
	}
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := s.enqueue(ctx); err != nil {
			r.err = fmt.Errorf("enqueue: %w", err)
			return r
		}
	}
	r.enqueue = float64(n) / time.Since(start).Seconds()
	start = time.Now()
	if err := s.drain(ctx, n); err != nil {
		r.err = fmt.Errorf("drain: %w", err)
		return r
	}
	r.drain = float64(n) / time.Since(start).Seconds()
	return r
}

var payload = json.RawMessage(`{"path":"/data/report.csv"}`)

func jobdeskQueue(dir string) (subject, error) {
	db, err := store.OpenDir(dir)
	if err != nil {
		return subject{}, err
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir})
	if err != nil {
		db.Close()
		return subject{}, err
	}
	return subject{
		enqueue: func(ctx context.Context) error {
			_, _, err := q.Enqueue(ctx, queue.Params{Type: "noop", Input: payload})
			return err
		},
		drain: func(ctx context.Context, n int) error {
			var done atomic.Int64
			finished := make(chan struct{})
			w := queue.NewWorker(q, queue.WorkerOptions{Workers: workers})
			w.Handle("noop", func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) {
				return nil, nil
			}, queue.TypeOptions{})
			// Completions are committed in groups after the handler returns; count them as
			// subscribers see them, after commit.
			events, unsub := q.Subscribe(n + 16)
			defer unsub()
			go func() {
				for e := range events {
					if e.Status == job.Succeeded && done.Add(1) == int64(n) {
						close(finished)
						return
					}
				}
			}()
			if err := w.Start(ctx); err != nil {
				return err
			}
			defer w.Stop()
			select {
			case <-finished:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		close: func() { q.Close(); db.Close() },
	}, nil
}

// openSQLite opens a database file the way each library's documentation suggests for SQLite:
// WAL, a busy timeout, one connection.
func openSQLite(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

const goqiteSchema = `create table goqite (
  id text primary key default ('m_' || lower(hex(randomblob(16)))),
  created text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  updated text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  queue text not null,
  body blob not null,
  timeout text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  received integer not null default 0,
  priority integer not null default 0
) strict;
create trigger goqite_updated_timestamp after update on goqite begin
  update goqite set updated = strftime('%Y-%m-%dT%H:%M:%fZ') where id = old.id;
end;
create index goqite_queue_priority_created_idx on goqite (queue, priority desc, created);`

func goqiteQueue(dir string) (subject, error) {
	db, err := openSQLite(filepath.Join(dir, "goqite.db"))
	if err != nil {
		return subject{}, err
	}
	if _, err := db.Exec(goqiteSchema); err != nil {
		db.Close()
		return subject{}, err
	}
	q := goqite.New(goqite.NewOpts{DB: db, Name: "jobs"})
	return subject{
		enqueue: func(ctx context.Context) error {
			_, err := jobs.Create(ctx, q, "noop", goqite.Message{Body: payload})
			return err
		},
		drain: func(ctx context.Context, n int) error {
			var done atomic.Int64
			finished := make(chan struct{})
			r := jobs.NewRunner(jobs.NewRunnerOpts{Limit: workers, Queue: q})
			r.Register("noop", func(context.Context, []byte) error {
				if done.Add(1) == int64(n) {
					close(finished)
				}
				return nil
			})
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			go r.Start(rctx)
			select {
			case <-finished:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		close: func() { db.Close() },
	}, nil
}

// noopArgs is River's job: it does nothing.
type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

func riverQueue(dir string) (subject, error) {
	db, err := openSQLite(filepath.Join(dir, "river.db"))
	if err != nil {
		return subject{}, err
	}
	driver := riversqlite.New(db)
	ctx := context.Background()
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		db.Close()
		return subject{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		db.Close()
		return subject{}, err
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, noopWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers: ws,
	})
	if err != nil {
		db.Close()
		return subject{}, err
	}
	return subject{
		enqueue: func(ctx context.Context) error {
			_, err := client.Insert(ctx, noopArgs{}, nil)
			return err
		},
		drain: func(ctx context.Context, n int) error {
			events, cancel := client.Subscribe(river.EventKindJobCompleted)
			defer cancel()
			if err := client.Start(ctx); err != nil {
				return err
			}
			defer client.Stop(context.Background())
			for done := 0; done < n; {
				select {
				case <-events:
					done++
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		},
		close: func() { db.Close() },
	}, nil
}
