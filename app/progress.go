package app

import (
	"context"
	"time"

	"jobdesk/engine/job"
)

// followProgress passes a workflow execution's progress on to the job that started it: every
// 200 ms the execution job's percent and message, when they changed, are reported through r
// (held below 100: the caller reports the end). The window and `--wait` thus show a workflow
// job moving, not its "starting" message until it ends. stop ends it and returns when it has.
func followProgress(ctx context.Context, a *App, r job.Reporter, execJobID int64) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		last, lastMsg := -1.0, ""
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if j, err := a.Queue.Get(ctx, execJobID); err == nil && (j.Progress != last || j.Message != lastMsg) {
					last, lastMsg = j.Progress, j.Message
					r.Progress(min(j.Progress, 99), j.Message)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
