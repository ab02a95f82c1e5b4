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
