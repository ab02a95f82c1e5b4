package cli

import (
	"context"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// The wait of run --wait (and every command that waits) wakes for an event of a job it waits
// for, or of no job in particular (another process wrote, the disk filled or has room again),
// and sleeps through the events of other jobs, such as the task jobs of a workflow.
func TestWaitWakesOnlyForTheJobsItWaitsFor(t *testing.T) {
	waited := map[int64]bool{7: true, 9: true}
	never := make(chan time.Time) // no tick: only events wake it here
	for _, wake := range []job.Event{
		{JobID: 9, Kind: job.EventProgress},
		{JobID: 7, Kind: job.EventSucceeded},
		{Kind: job.EventExternalChange},
	} {
		events := make(chan job.Event, 600)
		for id := int64(100); id < 600; id++ { // a workflow's task jobs
			events <- job.Event{JobID: id, Kind: job.EventProgress}
		}
		events <- wake
		events <- job.Event{JobID: 7, Kind: job.EventProgress} // after the wake-up: left for the next wait
		if !waitForChange(context.Background(), events, never, waited) {
			t.Fatalf("%+v: the wait ended as if interrupted", wake)
		}
		if len(events) != 1 {
			t.Fatalf("%+v: %d events left; want the wait to have slept through the 500 of other jobs and woken at this one", wake, len(events))
		}
	}
	// Ctrl-C (the context ends) ends the wait, reported as such.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	events := make(chan job.Event)
	if waitForChange(ctx, events, never, waited) {
		t.Fatal("an interrupted wait reported a change")
	}
	// The tick wakes it too (the time limits and the disk-full grace are checked then).
	tick := make(chan time.Time, 1)
	tick <- time.Now()
	if !waitForChange(context.Background(), events, tick, waited) {
		t.Fatal("the tick did not wake the wait")
	}
}
