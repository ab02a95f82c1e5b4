package app

import (
	"context"
	"fmt"

	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// This file is the window's Redrive: a workflow execution's job that failed, timed out or was
// aborted continues from the state that did not finish (flow.Engine.RedriveExecution), as
// `jobdesk flow redrive` does; what succeeded does not run again.

// CanRedrive reports whether job j is a workflow execution that can be redriven.
func (a *App) CanRedrive(ctx context.Context, j job.Job) bool {
	if j.Type != flow.TypeExecution || !j.Status.Final() {
		return false
	}
	switch j.Status {
	case job.Failed, job.TimedOut, job.Cancelled:
	default:
		return false
	}
	eng := FlowEngine(a)
	if eng == nil {
		return false
	}
	x, err := eng.ExecutionByJob(ctx, j.ID)
	return err == nil && x.MapRunARN == ""
}

// Redrive continues the failed workflow execution of job id and returns its job.
func (a *App) Redrive(ctx context.Context, id int64) (job.Job, error) {
	eng := FlowEngine(a)
	if eng == nil {
		return job.Job{}, job.Errorf(job.E015, "the workflow engine is not running").WithJa("ワークフローエンジンが動いていません。")
	}
	x, err := eng.ExecutionByJob(ctx, id)
	if err != nil {
		return job.Job{}, job.Errorf(job.E014, "job %d is not a workflow execution", id).
			WithJa(fmt.Sprintf("ジョブ %d はワークフローの実行ではありません。", id))
	}
	if _, err := eng.RedriveExecution(ctx, x.ARN); err != nil {
		return job.Job{}, flowError(err)
	}
	return a.Get(ctx, id)
}
