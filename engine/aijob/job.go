package aijob

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
)

// An AI job (one of Types) is declared here once for both runtimes: its input (GoalInput for
// the goal generations, FileInput for a caption or an extraction), its workflow (Workflows), its
// execution's name (ExecutionName), its outcome (Outcome: PARTIAL for partly generated tasks or
// a fallback extraction), its failure (ExecutionFailure) and the goal's end
// (Service.EndGeneration). The device (app/aifamily) and the cloud (sync/cloudjobs, for the goal
// generations) each run it with RunJob and a Runtime.

// Runtime is what an AI job's runtime gives it beyond the executions.
type Runtime struct {
	orchestrator.Runtime
	// Service creates the goal a job names by its title instead of an id, and ends the
	// generation (Service.EndGeneration): the device family's, or in the cloud one on the
	// device's state.
	Service *Service
	// Ready, when set, says whether job raw of type typ can start here now: the device checks
	// a caption's image and defers every job while its provider is offline.
	Ready func(ctx context.Context, typ string, raw json.RawMessage) error
	// SendGoal, when set, puts goal goalID where the workflow reads it before execution name of
	// workflow runs (the cloud's objects, only while that execution does not exist yet). Nil:
	// the workflow reads the goal where it is (the device).
	SendGoal func(ctx context.Context, workflow, name string, goalID int64, r job.Reporter) error
	// Home, when set, brings what the execution of job jobID made (or left, when it failed)
	// home. Nil: it is home.
	Home func(ctx context.Context, jobID int64) error
	// Usage is the model usage of job jobID and every job under it, once its results are home.
	Usage func(ctx context.Context, jobID int64) (Usage, error)
	// Waiting, when set, reports that a job that ended with err waits for the runtime (a cloud
	// out of reach): its generation does not end.
	Waiting func(err error) bool
}

// ExecutionName is the name of the execution of workflow for job id (created at created): the
// workflow, the job and its creation time, so jobs of two devices sharing a backend never take
// each other's execution, and the same on every attempt, so a resumed job finds its execution
// again (and in the cloud never sends its goal under a running one).
func ExecutionName(workflow string, id int64, created time.Time) string {
	return fmt.Sprintf("%s-%d-%d", workflow, id, created.UnixMilli())
}

// RunJob runs one AI job of type typ (raw: its input) on rt as an execution of its workflow
// (the job's child on the device) and reports the outcome with the family's own statuses:
// PARTIAL for partly generated tasks or a fallback extraction, TIMED_OUT with seed 000's
// message, the failed function's coded error. A goal generation whose input names a goal by its
// title creates the goal first, so the workflow always runs on {"goal_id": …}; its end is the
// goal's (Service.EndGeneration: a cancel releases the goal, a failure for good fails it with a
// local notification, a success clears an earlier failure).
func RunJob(ctx context.Context, rt Runtime, typ string, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	if rt.Ready != nil {
		if err := rt.Ready(ctx, typ, raw); err != nil {
			return nil, err
		}
	}
	info, _ := job.InfoFrom(ctx)
	self, err := rt.Job(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	workflow := Workflows[typ]
	name := ExecutionName(workflow, info.ID, self.CreatedAt)
	in := raw
	var goalID int64
	if typ == TypeSubgoals || typ == TypeActions || typ == TypeTasks {
		var gi GoalInput
		if err := json.Unmarshal(raw, &gi); err != nil {
			return nil, job.Errorf(job.E014, "the job input is not valid").WithJa("ジョブの入力が正しくありません。").Permanent()
		}
		if gi.GoalID == 0 {
			id, err := rt.Service.CreateGoal(ctx, gi.Title, gi.Description, gi.Deadline)
			if err != nil {
				return nil, err
			}
			gi = GoalInput{GoalID: id, ActionIDs: gi.ActionIDs, Regenerate: gi.Regenerate}
		}
		if gi.ActionIDs == nil {
			gi.ActionIDs = []int64{}
		}
		in, _ = json.Marshal(gi)
		goalID = gi.GoalID
		if rt.SendGoal != nil {
			if err := rt.SendGoal(ctx, workflow, name, goalID, r); err != nil {
				return nil, err
			}
		}
	}
	if rt.SendGoal == nil {
		// Nothing to send that reports progress: the job says it starts.
		r.Progress(0, "starting the "+workflow+" workflow")
	}
	out, err := orchestrator.Run(ctx, rt.Executions, orchestrator.Spec{
		Workflow: workflow, Name: name, Input: in,
		What: "the generation", WhatJa: "生成",
		Outcome: func(ctx context.Context, x orchestrator.Execution) (json.RawMessage, error) {
			if rt.Home != nil {
				r.Progress(99, "Bringing the results home")
				if err := rt.Home(ctx, info.ID); err != nil {
					return nil, err
				}
			}
			u, err := rt.Usage(ctx, info.ID)
			if err != nil {
				return nil, err
			}
			out, msg, err := Outcome(typ, x, u)
			if msg != "" {
				r.Progress(100, msg) // the job's last word, instead of a workflow step's
			}
			return out, err
		},
		// What the generation left (a failed goal, the actions that got their tasks) comes
		// home too.
		Failure: func(ctx context.Context, x orchestrator.Execution, e *job.Error) error {
			if rt.Home != nil {
				if err := rt.Home(ctx, info.ID); err != nil {
					return err
				}
			}
			return ExecutionFailure(ctx, x, e)
		},
	}, r)
	// A cancel by the user returns the goal from processing; a timeout (the Task's or the whole
	// execution's) or a failure for good does not leave the goal processing: it becomes failed,
	// with a local notification. A runtime out of reach ends nothing: the job waits for it.
	if rt.Waiting == nil || !rt.Waiting(err) {
		rt.Service.EndGeneration(ctx, goalID, typ, err)
	}
	return out, err
}
