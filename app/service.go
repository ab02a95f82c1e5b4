package app

import (
	"context"
	"time"

	"jobdesk/engine/job"
)

// GoalRequest is a goal a person typed into the window (or the CLI): the start of AI generation
// (seed 000: a goal becomes eight sub-goals, then actions and tasks).
type GoalRequest struct {
	Title       string
	Description string
	Deadline    time.Time // zero: none
}

// goalSubmitter starts generation for a typed goal; the AI family sets it when it registers.
var goalSubmitter func(ctx context.Context, a *App, g GoalRequest) (job.Job, error)

// SubmitGoal starts sub-goal generation for g and returns its job. Without an AI family it
// refuses with E014.
func (a *App) SubmitGoal(ctx context.Context, g GoalRequest) (job.Job, error) {
	if goalSubmitter == nil {
		return job.Job{}, job.Errorf(job.E014, "AI generation is not part of this build").
			WithJa("このビルドには AI 生成機能が含まれていません。")
	}
	return goalSubmitter(ctx, a, g)
}

// RetryJob runs finished job id again, as `jobdesk retry` and the window's Retry do: the job's
// family decides how when it has a Retry hook (an AI job gets a new job linked to it, whose id
// differs); otherwise the queue puts the same job back to PENDING. It returns the job that will
// run.
func (a *App) RetryJob(ctx context.Context, id int64) (job.Job, error) {
	if j, err := a.Queue.Get(ctx, id); err == nil {
		if f, ok := familyOf(j.Type); ok && f.Retry != nil {
			return f.Retry(ctx, a, j)
		}
	}
	return a.Queue.Retry(ctx, id)
}
