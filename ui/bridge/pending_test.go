package bridge

import (
	"testing"

	"jobdesk/engine/job"
)

// TestPendingCoalesces: thousands of progress reports collapse to the latest per job, status
// changes to a set of ids, and an external change to one reload.
func TestPendingCoalesces(t *testing.T) {
	p := NewPending()
	for i := 0; i < 10000; i++ {
		p.Add(job.Event{JobID: int64(i%3 + 1), Kind: job.EventProgress, Progress: float64(i) / 100})
	}
	p.Add(job.Event{JobID: 2, Kind: job.EventSucceeded, Status: job.Succeeded})
	p.Add(job.Event{JobID: 2, Kind: job.EventSucceeded, Status: job.Succeeded})
	p.Add(job.Event{Kind: job.EventExternalChange})
	prog, changed, reload := p.Take()
	if len(prog) != 3 || prog[1].Progress != 99.99 || len(changed) != 1 || !reload {
		t.Fatalf("progress=%v changed=%v reload=%v", prog, changed, reload)
	}
	prog, changed, reload = p.Take()
	if len(prog) != 0 || len(changed) != 0 || reload {
		t.Fatal("take did not start afresh")
	}
}
