// Package sfnexec is the cloud's executor of workflow executions: orchestrator.Executions over
// the AWS Step Functions API (the real SDK client, so the same code talks to AWS, to a VPC
// endpoint, or to `jobdesk serve` on loopback). A job that runs in the cloud runs the same
// orchestrator.Run as on the device; only the executor differs.
//
// Workflows are named as in assets/workflows; cloud.json's state_machines gives each one's state
// machine ARN, and an execution's ARN follows from the state machine's and the execution's name,
// as Step Functions defines it.
//
// Wait polls adaptively: DescribeExecution soon after a change, then less and less often while
// nothing changes (Options.MinPoll … MaxPoll), and DescribeMapRun for item progress once the
// execution has a Map run. Each execution is polled by its own Wait; the status mirror
// (sync/mirror) is what keeps the cost of many idle executions low.
package sfnexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/awserr"
)

// API is the part of the Step Functions client the executor calls (*sfn.Client has it).
type API interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, o ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, o ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	StopExecution(ctx context.Context, in *sfn.StopExecutionInput, o ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
	RedriveExecution(ctx context.Context, in *sfn.RedriveExecutionInput, o ...func(*sfn.Options)) (*sfn.RedriveExecutionOutput, error)
	ListMapRuns(ctx context.Context, in *sfn.ListMapRunsInput, o ...func(*sfn.Options)) (*sfn.ListMapRunsOutput, error)
	DescribeMapRun(ctx context.Context, in *sfn.DescribeMapRunInput, o ...func(*sfn.Options)) (*sfn.DescribeMapRunOutput, error)
	GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, o ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
}

var _ API = (*sfn.Client)(nil)

// Options tune an Executor.
type Options struct {
	// StateMachines maps a workflow to its state machine ARN (cloud.json's state_machines).
	StateMachines map[string]string
	// Profile is the AWS profile in use, for messages (aws sso login --profile X).
	Profile string
	// MinPoll and MaxPoll bound Wait's interval between two DescribeExecution calls: MinPoll
	// after a change, growing by half each time nothing changed, up to MaxPoll.
	// 0: 200 ms and 5 s.
	MinPoll, MaxPoll time.Duration
}

// Executor runs workflow executions on Step Functions.
type Executor struct {
	api API
	o   Options
}

var _ orchestrator.Executions = (*Executor)(nil)

// New returns an Executor over api (sfn.NewFromConfig of cloudconfig's aws.Config).
func New(api API, o Options) *Executor {
	if o.MinPoll <= 0 {
		o.MinPoll = 200 * time.Millisecond
	}
	if o.MaxPoll <= 0 {
		o.MaxPoll = 5 * time.Second
	}
	o.MaxPoll = max(o.MaxPoll, o.MinPoll)
	return &Executor{api: api, o: o}
}

// StateMachineARN returns the state machine of workflow, or a permanent E010 naming the
// cloud.json key to set.
func (e *Executor) StateMachineARN(workflow string) (string, error) {
	arn := e.o.StateMachines[workflow]
	if arn == "" {
		return "", job.Errorf(job.E010, "No state machine is configured for the workflow %q: add it to state_machines in cloud.json.", workflow).
			WithJa(fmt.Sprintf("ワークフロー「%s」のステートマシンが設定されていません。cloud.json の state_machines に追加してください。", workflow)).Permanent()
	}
	return arn, nil
}

// ExecutionARN is the ARN of the execution name of a state machine, as Step Functions forms it.
func ExecutionARN(stateMachineARN, name string) string {
	return strings.Replace(stateMachineARN, ":stateMachine:", ":execution:", 1) + ":" + name
}

func (e *Executor) where(resource, perm string) awserr.Where {
	return awserr.Where{Service: "Step Functions", Resource: resource, Profile: e.o.Profile, Permissions: perm}
}

// Start is StartExecution under name. Step Functions itself answers the same name and input of
// a running execution with that execution, and ExecutionAlreadyExists otherwise (ErrExists).
func (e *Executor) Start(ctx context.Context, workflow, name string, input json.RawMessage, _ orchestrator.StartOptions) (orchestrator.Execution, error) {
	sm, err := e.StateMachineARN(workflow)
	if err != nil {
		return orchestrator.Execution{}, err
	}
	out, err := e.api.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: &sm, Name: &name, Input: aws.String(string(input))})
	if err != nil {
		var exists *types.ExecutionAlreadyExists
		if errors.As(err, &exists) {
			return orchestrator.Execution{}, fmt.Errorf("%w: %s", orchestrator.ErrExists, aws.ToString(exists.Message))
		}
		return orchestrator.Execution{}, awserr.Classify(err, e.where(sm, "states:StartExecution"))
	}
	return orchestrator.Execution{ARN: aws.ToString(out.ExecutionArn), Name: name, Status: orchestrator.Running, Input: input}, nil
}

// Describe is DescribeExecution of workflow's execution name.
func (e *Executor) Describe(ctx context.Context, workflow, name string) (orchestrator.Execution, error) {
	sm, err := e.StateMachineARN(workflow)
	if err != nil {
		return orchestrator.Execution{}, err
	}
	return e.DescribeARN(ctx, ExecutionARN(sm, name))
}

// DescribeARN is DescribeExecution by ARN.
func (e *Executor) DescribeARN(ctx context.Context, arn string) (orchestrator.Execution, error) {
	out, err := e.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: &arn})
	if err != nil {
		return orchestrator.Execution{}, awserr.Classify(err, e.where(arn, "states:DescribeExecution"))
	}
	return fromDescribe(out), nil
}

func fromDescribe(out *sfn.DescribeExecutionOutput) orchestrator.Execution {
	x := orchestrator.Execution{ARN: aws.ToString(out.ExecutionArn), Name: aws.ToString(out.Name), Status: Status(string(out.Status)),
		Error: aws.ToString(out.Error), Cause: aws.ToString(out.Cause)}
	if out.Input != nil {
		x.Input = json.RawMessage(*out.Input)
	}
	if out.Output != nil {
		x.Output = json.RawMessage(*out.Output)
	}
	return x
}

// Status is a Step Functions execution status (DescribeExecution's, or a status change event's)
// as the orchestrator reads it: PENDING_REDRIVE is running (a redrive is under way: not ended).
func Status(status string) string {
	if status == string(types.ExecutionStatusPendingRedrive) {
		return orchestrator.Running
	}
	return status
}

// StatusChange is the detail of Step Functions' "Step Functions Execution Status Change" event
// (EventBridge), as the status queue brings it.
type StatusChange struct {
	ExecutionARN string `json:"executionArn"`
	Name         string `json:"name"`
	Status       string `json:"status"`
}

// Execution is the execution the event speaks of, its status read as DescribeExecution's
// (Status). Only DescribeExecution tells its output, error and cause.
func (s StatusChange) Execution() orchestrator.Execution {
	return orchestrator.Execution{ARN: s.ExecutionARN, Name: s.Name, Status: Status(s.Status)}
}

// MapProgress is a Map run's item counts as a job's progress: the percentage of items done and
// "done / total items".
func MapProgress(done, total int64) (percent float64, message string) {
	return float64(done) * 100 / float64(total), fmt.Sprintf("%d / %d items", done, total)
}

// Wait polls the execution until it ends or ctx is done, reporting map-run items done/total as
// progress while there is a Map run.
func (e *Executor) Wait(ctx context.Context, x orchestrator.Execution, progress job.Reporter) (orchestrator.Execution, error) {
	if progress == nil {
		progress = job.Discard
	}
	interval := e.o.MinPoll
	var mapRun string
	var lastDone, lastTotal int64 = -1, -1
	for polls := 0; ; polls++ {
		cur, err := e.DescribeARN(ctx, x.ARN)
		if err != nil {
			if ctx.Err() != nil {
				return x, ctx.Err()
			}
			if je := job.AsError(err); je == nil || !je.Retryable {
				return x, err
			}
			// A transient failure (network, throttling): wait as for no change.
		} else {
			x = cur
			if x.Status != orchestrator.Running {
				return x, nil
			}
			changed := false
			if mapRun == "" && polls%4 == 0 {
				mapRun = e.latestMapRun(ctx, x.ARN)
			}
			if mapRun != "" {
				if done, total, ok := e.mapRunItems(ctx, mapRun); ok && (done != lastDone || total != lastTotal) {
					lastDone, lastTotal, changed = done, total, true
					if total > 0 {
						progress.Progress(MapProgress(done, total))
					}
				}
			}
			if changed {
				interval = e.o.MinPoll
			}
		}
		select {
		case <-ctx.Done():
			return x, ctx.Err()
		case <-time.After(interval):
		}
		interval = min(interval+interval/2, e.o.MaxPoll)
	}
}

// Stop is StopExecution with errName and cause.
func (e *Executor) Stop(ctx context.Context, x orchestrator.Execution, errName, cause string) error {
	_, err := e.api.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: &x.ARN, Error: &errName, Cause: &cause})
	return awserr.Classify(err, e.where(x.ARN, "states:StopExecution"))
}

// Redrive is RedriveExecution: a failed, timed-out or aborted execution goes on from where it
// failed (the states that succeeded are not run again). An execution Step Functions will not
// redrive (it succeeded, runs, or is past its redrive window) or does not know is refused with
// E014 saying so.
func (e *Executor) Redrive(ctx context.Context, arn string) error {
	_, err := e.api.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: &arn})
	var notRedrivable *types.ExecutionNotRedrivable
	var missing *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &notRedrivable):
		return job.Wrap(job.E014, err, "Step Functions cannot redrive this execution: "+aws.ToString(notRedrivable.Message)).
			WithJa("この実行は再開（redrive）できません。").Permanent()
	case errors.As(err, &missing):
		return job.Wrap(job.E014, err, "Step Functions does not know the execution "+arn).
			WithJa("指定された実行が Step Functions にありません。").Permanent()
	}
	return awserr.Classify(err, e.where(arn, "states:RedriveExecution"))
}

// HistoryEvent is one event of an execution's history, under Step Functions' own names
// (ExecutionStarted, TaskStateEntered, …).
type HistoryEvent struct {
	ID        int64
	Type      string
	Timestamp time.Time
	State     string // the state entered or exited, when the event names one
}

// HistoryCursor is where a reader of an execution's history is: the last event read and the
// page token that page was read with. The zero cursor is the start.
type HistoryCursor struct {
	LastID int64  `json:"last_id"`
	Page   string `json:"page,omitempty"`
}

// History returns the execution's events after cur, oldest first, and the cursor to pass next
// time. Step Functions gives a next-page token only while more pages exist, so the cursor keeps
// the token of the page the last event was on: a mirror reads that page again, never the whole
// history.
func (e *Executor) History(ctx context.Context, arn string, cur HistoryCursor) ([]HistoryEvent, HistoryCursor, error) {
	var evs []HistoryEvent
	token := cur.Page
	for pages := 0; pages < 1000; pages++ {
		in := &sfn.GetExecutionHistoryInput{ExecutionArn: &arn, MaxResults: 1000, IncludeExecutionData: aws.Bool(false)}
		if token != "" {
			in.NextToken = aws.String(token)
		}
		out, err := e.api.GetExecutionHistory(ctx, in)
		if err != nil {
			return evs, cur, awserr.Classify(err, e.where(arn, "states:GetExecutionHistory"))
		}
		for _, ev := range out.Events {
			if ev.Id <= cur.LastID {
				continue
			}
			h := HistoryEvent{ID: ev.Id, Type: string(ev.Type), Timestamp: aws.ToTime(ev.Timestamp)}
			switch {
			case ev.StateEnteredEventDetails != nil:
				h.State = aws.ToString(ev.StateEnteredEventDetails.Name)
			case ev.StateExitedEventDetails != nil:
				h.State = aws.ToString(ev.StateExitedEventDetails.Name)
			}
			evs = append(evs, h)
			cur.LastID = ev.Id
		}
		cur.Page = token
		if out.NextToken == nil || *out.NextToken == "" {
			break
		}
		token = *out.NextToken
	}
	return evs, cur, nil
}

// MapRunItems returns the item counts of the execution's latest Map run: items done (succeeded,
// failed, timed out or aborted) and in all; ok is false when it has none (yet).
func (e *Executor) MapRunItems(ctx context.Context, arn string) (done, total int64, ok bool) {
	mapRun := e.latestMapRun(ctx, arn)
	if mapRun == "" {
		return 0, 0, false
	}
	return e.mapRunItems(ctx, mapRun)
}

// latestMapRun is the ARN of the execution's latest Map run, or "" when it has none (yet).
func (e *Executor) latestMapRun(ctx context.Context, arn string) string {
	runs, err := e.api.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: &arn})
	if err != nil || len(runs.MapRuns) == 0 {
		return ""
	}
	return aws.ToString(runs.MapRuns[len(runs.MapRuns)-1].MapRunArn)
}

// mapRunItems returns the item counts of the Map run mapRun: items done (succeeded, failed,
// timed out or aborted) and in all; ok is false when they cannot be read.
func (e *Executor) mapRunItems(ctx context.Context, mapRun string) (done, total int64, ok bool) {
	mr, err := e.api.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: &mapRun})
	if err != nil || mr.ItemCounts == nil {
		return 0, 0, false
	}
	ic := mr.ItemCounts
	return ic.Succeeded + ic.Failed + ic.TimedOut + ic.Aborted, ic.Total, true
}
