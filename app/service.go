package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"jobdesk/app/family"
	"jobdesk/engine/aijob"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// This file is the service API the window (ui) and the command line share: submit work (Submit,
// in app.go, and SubmitGoal), read it (List, Get, Counts, History, and DescribeResult /
// SummarizeResult in result_view.go for how a result reads), follow it (Subscribe, Wait), act on
// it (Cancel, Retry, Export). Callers never reach the queue or the database themselves, so what
// the window shows is exactly what the command line and the engine see.

// ListFilter selects jobs for List. Zero fields match everything.
type ListFilter struct {
	Status   job.Status // only jobs in this status
	Type     string     // only jobs of this type
	ParentID int64      // only the fan-out children of this job
	TopLevel bool       // only what a person submitted, not its fan-out (as the window lists jobs)
	Limit    int        // at most this many (0: 1000)
	BeforeID int64      // for paging: only jobs older than this one (a smaller id)
}

// List returns the jobs f selects, newest first.
func (a *App) List(ctx context.Context, f ListFilter) ([]job.Job, error) {
	return a.queue.List(ctx, queue.Filter{Status: f.Status, Type: f.Type, ParentID: f.ParentID,
		TopLevel: f.TopLevel, Limit: f.Limit, BeforeID: f.BeforeID})
}

// Get returns job id; a job that does not exist is refused with E014.
func (a *App) Get(ctx context.Context, id int64) (job.Job, error) {
	j, err := a.queue.Get(ctx, id)
	if err != nil {
		return j, err
	}
	return a.withFailedResult(ctx, j), nil
}

// JobByNumber returns the job a person started with number n (job.Job.Number: the "#12" the
// window and the command line show); a number no job has is refused with E014. Jobs with a
// parent (a workflow's tasks and map items) have no number: Get reaches them by id.
func (a *App) JobByNumber(ctx context.Context, n int64) (job.Job, error) {
	return a.queue.GetByNumber(ctx, n)
}

// Counts returns how many jobs a person submitted (jobs without a parent, as List with TopLevel
// returns them) are in each status, so that counts shown beside a list agree with it.
func (a *App) Counts(ctx context.Context) (map[job.Status]int, error) {
	c, err := a.queue.TopLevelCounts(ctx)
	if err != nil {
		return nil, job.Wrap(job.E009, err, "the job counts could not be read").WithJa("ジョブの件数を読み取れませんでした。")
	}
	return c, nil
}

// History returns job id's events in order, beginning with its submission.
func (a *App) History(ctx context.Context, id int64) ([]job.Event, error) {
	return a.queue.History(ctx, id)
}

// Subscribe returns a channel that receives every job event after its commit (status changes,
// progress, history entries), and a function that ends the subscription. A subscriber that
// falls more than buffer events behind loses events rather than slowing the engine; an event of
// kind job.EventExternalChange (another process wrote) tells it to re-read what it shows.
func (a *App) Subscribe(buffer int) (<-chan job.Event, func()) {
	return a.queue.Subscribe(buffer)
}

// Wait blocks until job id has finished (or ctx ends) and returns it.
func (a *App) Wait(ctx context.Context, id int64) (job.Job, error) {
	return a.queue.Wait(ctx, id)
}

// Cancel cancels job id: one that waits ends CANCELLED at once; a running one's handler is
// stopped and the job ends CANCELLED without retry (a cloud job's execution is stopped,
// StopExecution, by the dispatcher on its next beat, and ends ABORTED). Cancelling a finished job is refused;
// cancelling a cancelled one is not.
func (a *App) Cancel(ctx context.Context, id int64) error {
	return a.queue.Cancel(ctx, id)
}

// Retry runs finished job id again, as `jobdesk retry` and the window's Retry do: the job's
// family decides how when it has a Retry hook (an AI job gets a new job linked to it, whose id
// differs); otherwise the same job goes back to PENDING, keeping its id and history (a workflow
// execution's job then continues its execution from the state that failed). A cloud job runs
// where it ran: its family's job runs the orchestrator again, which starts a new execution
// "<name>-j<id>" beside the failed one (the job's history names both). It returns the job that
// will run.
func (a *App) Retry(ctx context.Context, id int64) (job.Job, error) {
	if j, err := a.queue.Get(ctx, id); err == nil {
		if f, ok := familyOf(a.families, j.Type); ok {
			if r, ok := f.(family.Retrier); ok {
				return r.Retry(ctx, j)
			}
		}
	}
	return a.queue.Retry(ctx, id)
}

// Export writes the result of finished job id to the file out in format ("csv", "xlsx", "md",
// …; empty: out's extension), as its family writes it. A job whose family writes no result
// file, a job still under way and a format the family does not write are refused with E014.
func (a *App) Export(ctx context.Context, id int64, format, out string) error {
	j, err := a.queue.Get(ctx, id)
	if err != nil {
		return err
	}
	f, _ := familyOf(a.families, j.Type)
	ex, ok := f.(family.Exporter)
	if !ok {
		return job.Errorf(job.E014, "job %s (%s) has no result file to export", j.Ref(), j.Type).
			WithJa(fmt.Sprintf("ジョブ %s（%s）には書き出せる結果ファイルがありません。", j.Ref(), j.Type))
	}
	if !j.Status.Final() {
		return job.Errorf(job.E014, "job %s is still %s; export it when it has finished", j.Ref(), j.Status).
			WithJa(fmt.Sprintf("ジョブ %s はまだ完了していません（%s）。完了後に書き出してください。", j.Ref(), j.Status))
	}
	if format == "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	}
	return ex.Export(ctx, j, format, out)
}

// GoalRequest is a goal a person typed into the window (or the CLI): the start of AI generation
// (seed 000: a goal becomes eight sub-goals, then actions and tasks).
type GoalRequest = family.GoalRequest

// SubmitGoal starts sub-goal generation for g, where g.Target says (device, cloud or auto, as
// JobTarget decides), and returns its job. Without an AI family it refuses with E014.
func (a *App) SubmitGoal(ctx context.Context, g GoalRequest) (job.Job, error) {
	for _, f := range a.families {
		if gs, ok := f.(family.GoalSubmitter); ok {
			target, err := JobTarget(ctx, a.DataDir(), g.Target, aijob.TypeSubgoals, "")
			if err != nil {
				return job.Job{}, err
			}
			g.Target = target
			return gs.SubmitGoal(ctx, g)
		}
	}
	return job.Job{}, job.Errorf(job.E014, "AI generation is not part of this build").
		WithJa("このビルドには AI 生成機能が含まれていません。")
}

// CountsByTarget returns how many top-level jobs that run on target (job.TargetDevice or
// job.TargetCloud) are in each status.
func (a *App) CountsByTarget(ctx context.Context, target string) (map[job.Status]int, error) {
	c, err := a.queue.CountsByTarget(ctx, target)
	if err != nil {
		return nil, job.Wrap(job.E009, err, "the jobs could not be counted").WithJa("ジョブを数えられませんでした。")
	}
	return c, nil
}

// LastCompleted returns when the newest job that ran on target finished (zero: none has).
func (a *App) LastCompleted(ctx context.Context, target string) (time.Time, error) {
	return a.queue.LastCompleted(ctx, target)
}

// Health is whether the engine can take work: DiskFull with the folder and since when, while
// the data folder's disk has no room (the engine then pauses and resumes by itself).
type Health = queue.Health

// Health returns the engine's health now; subscribers also receive queue.EventDiskFull and
// queue.EventResumed (job id 0) when it changes.
func (a *App) Health() Health { return a.queue.Health() }
