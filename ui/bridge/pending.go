package bridge

import (
	"sync"

	"jobdesk/engine/job"
)

// Pending gathers engine events between two flushes: the latest progress of each job, the ids
// whose status changed, and whether another process changed the database.
type Pending struct {
	mu       sync.Mutex
	progress map[int64]job.Event
	changed  map[int64]struct{}
	reload   bool
}

// NewPending returns an empty Pending.
func NewPending() *Pending {
	return &Pending{progress: map[int64]job.Event{}, changed: map[int64]struct{}{}}
}

// Add records one event.
func (p *Pending) Add(e job.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case e.Kind == job.EventExternalChange || e.JobID == 0:
		p.reload = true
	case e.Kind == job.EventProgress:
		p.progress[e.JobID] = e
	default:
		p.changed[e.JobID] = struct{}{}
	}
}

// Empty reports whether nothing was gathered since the last Take.
func (p *Pending) Empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.progress) == 0 && len(p.changed) == 0 && !p.reload
}

// Take returns what was gathered and starts afresh.
func (p *Pending) Take() (progress map[int64]job.Event, changed map[int64]struct{}, reload bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	progress, changed, reload = p.progress, p.changed, p.reload
	if len(progress) > 0 {
		p.progress = map[int64]job.Event{}
	}
	if len(changed) > 0 {
		p.changed = map[int64]struct{}{}
	}
	p.reload = false
	return progress, changed, reload
}
