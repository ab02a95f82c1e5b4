package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/mirror"
	"jobdesk/sync/sfnexec"
)

// A workflow job's execution, and redrive: the job a person sees (a CSV import, a conversion, an
// AI generation, or a `flow start` execution's own job) goes on from the state that failed, in
// the same execution, on the device (the flow engine) or in the cloud (Step Functions).

// ExecutionRef names the workflow execution of a job.
type ExecutionRef struct {
	ARN   string
	Cloud bool // a Step Functions execution of a cloud job (else the device's flow engine)
}

// ExecutionOf returns the latest workflow execution of job id: a flow.execution job's own; on the
// device, the newest execution a family job started (its child); for a cloud job, the one its
// history records (the status mirror records each execution a job waits on). A job that ran none
// is refused with E014.
func (a *App) ExecutionOf(ctx context.Context, id int64) (ExecutionRef, error) {
	j, err := a.queue.Get(ctx, id)
	if err != nil {
		return ExecutionRef{}, err
	}
	if j.Target == job.TargetCloud {
		evs, err := a.queue.History(ctx, id)
		if err != nil {
			return ExecutionRef{}, err
		}
		if arn := mirror.LastExecution(evs); arn != "" {
			return ExecutionRef{ARN: arn, Cloud: true}, nil
		}
		return ExecutionRef{}, noExecution(j)
	}
	execJob := id
	if j.Type != flow.TypeExecution {
		kids, err := a.queue.List(ctx, queue.Filter{ParentID: id, Type: flow.TypeExecution, Limit: 1})
		if err != nil {
			return ExecutionRef{}, err
		}
		if len(kids) == 0 {
			return ExecutionRef{}, noExecution(j)
		}
		execJob = kids[0].ID
	}
	x, err := a.flow.ExecutionByJob(ctx, execJob)
	if err != nil {
		return ExecutionRef{}, executionError(err)
	}
	return ExecutionRef{ARN: x.ARN}, nil
}

func noExecution(j job.Job) error {
	return job.Errorf(job.E014, "job %s (%s) has run no workflow execution", j.Ref(), j.Type).
		WithJa(fmt.Sprintf("ジョブ %s（%s）はワークフローを実行していません。", j.Ref(), j.Type))
}

// Redrive runs failed workflow job id again from the state that failed: its execution is redriven
// (the states that succeeded are not run again) and the job, back to PENDING, waits for it — the
// job's handler finds the redriven execution RUNNING under its name, so the job ends with that
// execution's outcome. It works for a FAILED, TIMED_OUT or CANCELLED job whose execution is
// FAILED, TIMED_OUT or ABORTED, on the device (flow.Engine.RedriveExecution) and in the cloud
// (Step Functions RedriveExecution). A job whose failure a redrive cannot fix (the input was not
// valid; the file is damaged, password-protected or unreadable: E004, E005, E006) is refused
// with E014 saying why, as is a job that ran no execution. It returns the job as it is now.
func (a *App) Redrive(ctx context.Context, id int64) (job.Job, error) {
	j, err := a.queue.Get(ctx, id)
	if err != nil {
		return job.Job{}, err
	}
	if j.Type == flow.TypeExecution && j.ParentID != 0 {
		// The execution of a family job (a CSV import's, say): the job a person submitted is
		// redriven, so that it waits for its execution again.
		if p, err := a.queue.Get(ctx, j.ParentID); err == nil && p.Type != flow.TypeExecution && p.Status.Final() &&
			p.Status != job.Succeeded && p.Status != job.Partial {
			return a.Redrive(ctx, p.ID)
		}
	}
	switch j.Status {
	case job.Failed, job.TimedOut, job.Cancelled:
	default:
		return job.Job{}, job.Errorf(job.E014, "job %s is %s; only a failed, timed-out or cancelled workflow job can be redriven", j.Ref(), j.Status).
			WithJa(fmt.Sprintf("ジョブ %s は %s です。再開（redrive）できるのは失敗・タイムアウト・キャンセルしたワークフローのジョブだけです。", j.Ref(), j.Status))
	}
	if err := redrivable(j); err != nil {
		return job.Job{}, err
	}
	x, err := a.ExecutionOf(ctx, id)
	if err != nil {
		return job.Job{}, err
	}
	if x.Cloud {
		c, err := a.cloudClients(ctx)
		if err != nil {
			return job.Job{}, err
		}
		if err := c.Exec.Redrive(ctx, x.ARN); err != nil {
			return job.Job{}, err
		}
		return a.queue.Retry(ctx, id)
	}
	if _, err := a.flow.RedriveExecution(ctx, x.ARN); err != nil {
		return job.Job{}, executionError(err)
	}
	if j.Type == flow.TypeExecution { // the execution's own job went back to PENDING with it
		return a.queue.Get(ctx, id)
	}
	return a.queue.Retry(ctx, id)
}

// redrivable refuses a job whose failure running the same steps again cannot fix.
func redrivable(j job.Job) error {
	e := j.Error
	if e == nil {
		return nil
	}
	switch {
	case e.ErrorName() == "ValidationError" || e.Code == job.E014:
		return job.Errorf(job.E014, "job %s cannot be redriven: its input was not valid (%s: %s); correct it and submit the job again", j.Ref(), e.Code, e.Message).
			WithJa(fmt.Sprintf("ジョブ %s は再開できません。入力が正しくありません（%s: %s）。入力を直して、もう一度実行してください。", j.Ref(), e.Code, e.MessageJa))
	case e.Code == job.E004 || e.Code == job.E005 || e.Code == job.E006:
		return job.Errorf(job.E014, "job %s cannot be redriven: the file itself is the problem (%s: %s), and a redrive reads the same file; fix the file and submit it again", j.Ref(), e.Code, e.Message).
			WithJa(fmt.Sprintf("ジョブ %s は再開できません。ファイルそのものに問題があります（%s: %s）。ファイルを直して、もう一度実行してください。", j.Ref(), e.Code, e.MessageJa))
	}
	return nil
}

// executionError words the flow engine's refusals (an execution that is not there or cannot be
// redriven) as E014.
func executionError(err error) error {
	var ae *flow.APIError
	if !errors.As(err, &ae) {
		return err
	}
	switch ae.Type {
	case "ExecutionNotRedrivable":
		return job.Wrap(job.E014, err, ae.Message).WithJa("この実行は再開（redrive）できません。")
	case "ExecutionDoesNotExist", "InvalidArn":
		return job.Wrap(job.E014, err, ae.Message).WithJa("指定された実行が見つかりません。")
	}
	return err
}

// cloudClients are the AWS clients of the data folder's cloud.json: the running dispatcher's when
// the engine runs here, else new ones. A cloud that is not configured is refused with E014.
func (a *App) cloudClients(ctx context.Context) (*dispatch.Cloud, error) {
	if a.cloud != nil && a.cloud.Clients != nil {
		return a.cloud.Clients, nil
	}
	cfg, err := cloudconfig.Load(a.DataDir(), os.Getenv, nil)
	if err != nil {
		return nil, err
	}
	if !cfg.Configured() {
		return nil, job.Errorf(job.E014, "The cloud is not configured: set %s in cloud.json.", cfg.Missing()).
			WithJa("クラウドが設定されていません。cloud.json に " + cfg.Missing() + " を設定してください。")
	}
	return dispatch.Connect(ctx, cfg)
}

// RedriveARN redrives the execution arn: the device's own (through the job that runs it, as
// Redrive), else a cloud execution (Step Functions RedriveExecution; the cloud job that waited
// on it, if any, is redriven by its job number instead).
func (a *App) RedriveARN(ctx context.Context, arn string) (job.Job, error) {
	x, err := a.flow.DescribeExecution(ctx, arn)
	if err == nil {
		return a.Redrive(ctx, x.JobID)
	}
	var ae *flow.APIError
	if !errors.As(err, &ae) || (ae.Type != "ExecutionDoesNotExist" && ae.Type != "InvalidArn") {
		return job.Job{}, executionError(err)
	}
	c, cerr := a.cloudClients(ctx)
	if cerr != nil {
		return job.Job{}, executionError(err)
	}
	return job.Job{}, c.Exec.Redrive(ctx, arn)
}

// CloudHistory returns the events of the cloud execution arn, oldest first, under Step
// Functions' own names.
func (a *App) CloudHistory(ctx context.Context, arn string) ([]sfnexec.HistoryEvent, error) {
	c, err := a.cloudClients(ctx)
	if err != nil {
		return nil, err
	}
	evs, _, err := c.Exec.History(ctx, arn, sfnexec.HistoryCursor{})
	return evs, err
}

// StartCloudExecution starts an execution of workflow — a state machine cloud.json's
// state_machines names — on Step Functions under name (empty: the workflow and the time) with
// input, as `jobdesk flow start --target cloud` does; with wait it returns when the execution has
// ended (or ctx ends). A workflow the cloud has no state machine for is refused with E010 naming
// the cloud.json key.
func (a *App) StartCloudExecution(ctx context.Context, workflow, name string, input json.RawMessage, wait bool) (orchestrator.Execution, error) {
	c, err := a.cloudClients(ctx)
	if err != nil {
		return orchestrator.Execution{}, err
	}
	if name == "" {
		name = fmt.Sprintf("%s-%d", workflow, time.Now().UnixMilli())
	}
	x, err := c.Exec.Start(ctx, workflow, name, input, orchestrator.StartOptions{})
	if errors.Is(err, orchestrator.ErrExists) {
		return x, job.Wrap(job.E014, err, "an execution named "+name+" already exists (finished, or running with other input); choose another --name").
			WithJa("同じ名前の実行がすでに存在します。--name で別の名前を指定してください。")
	}
	if err != nil || !wait {
		return x, err
	}
	return c.Exec.Wait(ctx, x, nil)
}

// CanRedrive reports whether job j can be redriven now (the window offers Redrive only then): it
// ended FAILED, TIMED_OUT or CANCELLED, it ran a workflow execution, and its failure is not one
// that running the same steps again cannot fix.
func (a *App) CanRedrive(ctx context.Context, j job.Job) bool {
	switch j.Status {
	case job.Failed, job.TimedOut, job.Cancelled:
	default:
		return false
	}
	if redrivable(j) != nil {
		return false
	}
	_, err := a.ExecutionOf(ctx, j.ID)
	return err == nil
}
