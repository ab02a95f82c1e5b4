package orchestrator

import (
	"context"

	"jobdesk/engine/job"
)

// Runtime is where a family's job runs its workflow: the device (the flow engine) or the cloud
// (Step Functions, sync/cloudjobs). A family declares its job once — its typed input, workflow,
// execution name, outcome and failure (engine/csvjob.RunJob, engine/docjob.RunJob) — and the
// runtime supplies what differs: the executions, how the input gets where the workflow reads it
// (stage-in) and, in the family's own runtime type, how results come home.
type Runtime struct {
	// Executions starts and follows the workflow's executions.
	Executions Executions
	// Job reads a job by id (a family names or ranks its execution by the job's creation time
	// and priority). A family that needs neither leaves it unused.
	Job func(ctx context.Context, id int64) (job.Job, error)
	// StageIn puts the job's input file (path, on this machine; sha256 its SHA-256 when the job
	// carries one, else "") where the workflow reads it and returns the URI the workflow is
	// given: in the cloud the uploaded object's s3:// URI. Nil: the workflow reads the file
	// where it is (the device).
	StageIn func(ctx context.Context, path, sha256 string, r job.Reporter) (string, error)
}

// Staged reports whether the runtime copies the input somewhere else first (StageIn is set).
func (rt Runtime) Staged() bool { return rt.StageIn != nil }

// Stage returns the URI the workflow reads the input file at path from (Runtime.StageIn; the
// path itself when the runtime stages nothing).
func (rt Runtime) Stage(ctx context.Context, path, sha256 string, r job.Reporter) (string, error) {
	if rt.StageIn == nil {
		return path, nil
	}
	return rt.StageIn(ctx, path, sha256, r)
}
