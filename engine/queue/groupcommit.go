package queue

import (
	"context"
	"database/sql"
	"runtime"
	"sync"
)

// Group commit across verbs: the writes this process asks for at about the same moment — a
// worker's finished attempts (Finish), its next claim (Claim), a workflow's new tasks
// (EnqueueBatch) — are committed in one transaction instead of one each. SQLite has one writer;
// when it is busy, the writes that queue up behind the running one go together in the next, so
// a worker finishing a job and claiming the next one costs one commit, not two, and a lone
// write is never held back: it is written as soon as the write before it has committed.
//
// Every caller still gets its own answer only after the commit (nothing is acknowledged that a
// crash could lose), and a write that fails inside a group does not fail the others: the group
// is rolled back and each write is tried again alone.

// write is one verb's part of a group: run does it inside the group's transaction and returns
// what to announce after the commit; alone does it in a transaction of its own (and announces).
type write struct {
	ctx   context.Context
	run   func(ctx context.Context, tx *sql.Tx) (Announce, error)
	alone func() error
	// rows is how many jobs the write changes, claim is set for a claim: a claim waits for the
	// group it joins, so it joins only groups whose other writes are small (claimBeside).
	rows  int
	claim bool
	err   error
	// next receives false when the write is done, true when its goroutine is to write the next
	// group (which holds the write).
	next chan bool
}

// writeGroup gathers the writes waiting for the writer.
type writeGroup struct {
	mu      sync.Mutex
	pending []*write
	busy    bool // a goroutine is writing groups
}

// do commits w, alone or with the writes waiting beside it, and returns its error. The write is
// committed (or failed) when do returns, whatever its ctx does meanwhile.
func (q *Queue) do(w *write) error {
	g := &q.writes
	w.next = make(chan bool, 1)
	g.mu.Lock()
	g.pending = append(g.pending, w)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead && !<-w.next {
		return w.err
	}
	// Write everything waiting (w included), then hand the writing on to the oldest write that
	// came meanwhile, so that no caller waits for more than two groups. The goroutines about to
	// write (a worker whose handler just returned, a workflow task just ready) run first and
	// join this group; a claim, which idle slots may be waiting for, does not wait for them.
	if !w.claim {
		runtime.Gosched()
	}
	g.mu.Lock()
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()
	q.commitGroup(batch)
	for _, o := range batch {
		if o != w {
			o.next <- false
		}
	}
	g.mu.Lock()
	if len(g.pending) > 0 {
		g.pending[0].next <- true
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return w.err
}

// claimBeside is how many jobs the other writes of a group may change for a claim to join it.
// A worker's claim is often what its idle slots wait for: committed with a few finished
// attempts it saves a commit, while behind a large batch of them it would only be late (a
// worker draining a backlog claims and finishes dozens of jobs at a time).
const claimBeside = 8

// commitGroup writes batch in one transaction and sets each write's error. A write whose ctx
// ended is not done (its error is the ctx's). Claims go first, by themselves, when the rest of
// the group is large (claimBeside).
func (q *Queue) commitGroup(batch []*write) {
	rows, claims := 0, 0
	for _, w := range batch {
		if w.claim {
			claims++
		} else {
			rows += w.rows
		}
	}
	if claims > 0 && claims < len(batch) && rows > claimBeside {
		rest := make([]*write, 0, len(batch)-claims)
		for _, w := range batch {
			if w.claim {
				q.commitGroup([]*write{w})
			} else {
				rest = append(rest, w)
			}
		}
		batch = rest
	}
	if len(batch) == 1 {
		w := batch[0]
		if w.err = w.ctx.Err(); w.err == nil {
			w.err = w.alone()
		}
		return
	}
	announces := make([]Announce, len(batch))
	failed := false // a write failed: the group is rolled back and tried write by write
	err := q.db.Tx(context.Background(), func(tx *sql.Tx) error {
		for i, w := range batch {
			if w.err = w.ctx.Err(); w.err != nil {
				continue
			}
			a, err := w.run(context.WithoutCancel(w.ctx), tx)
			if err != nil {
				failed = true
				return err
			}
			announces[i] = a
		}
		return nil
	})
	switch {
	case failed:
		for _, w := range batch {
			if w.err = w.ctx.Err(); w.err == nil {
				w.err = w.alone()
			}
		}
	case err != nil:
		// The commit failed: nothing was written.
		for _, w := range batch {
			if w.err == nil {
				w.err = q.dbError(err)
			}
		}
	default:
		for _, a := range announces {
			if a != nil {
				a()
			}
		}
	}
}
