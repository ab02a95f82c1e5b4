package cloudops

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"jobdesk/engine/job"
)

// Execution is one execution of a state machine.
type Execution struct {
	ARN          string    `json:"arn"`
	Name         string    `json:"name"`
	Workflow     string    `json:"workflow"` // the state machine's workflow name in cloud.json
	StateMachine string    `json:"state_machine_arn"`
	Status       string    `json:"status"` // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE
	StartDate    time.Time `json:"start_date"`
	StopDate     time.Time `json:"stop_date,omitzero"`
	RedriveCount int       `json:"redrive_count,omitempty"`
}

// ExecutionFilter selects executions.
type ExecutionFilter struct {
	// StateMachine is a workflow name of cloud.json or a state machine ARN ("": every state
	// machine of cloud.json).
	StateMachine string
	// Status is a Step Functions status ("": any).
	Status string
	// Max is how many executions per state machine at most (default 100).
	Max int
}

// ExecutionStatuses are the statuses ListExecutions filters by.
var ExecutionStatuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"}

// Executions lists executions, newest first within each state machine.
func (c *Console) Executions(ctx context.Context, f ExecutionFilter) ([]Execution, error) {
	if f.Status != "" {
		f.Status = strings.ToUpper(f.Status)
		ok := false
		for _, s := range ExecutionStatuses {
			ok = ok || s == f.Status
		}
		if !ok {
			list := strings.Join(ExecutionStatuses, ", ")
			return nil, job.Errorf(job.E014, "unknown execution status %q; the statuses are %s", f.Status, list).
				WithJa(fmt.Sprintf("実行のステータス %q はありません。ステータス: %s", f.Status, list))
		}
	}
	if f.Max <= 0 {
		f.Max = 100
	}
	machines, err := c.stateMachines(f.StateMachine)
	if err != nil {
		return nil, err
	}
	var out []Execution
	for _, m := range machines {
		var next *string
		n := 0
		for n < f.Max {
			res, err := c.SFN.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(m.arn),
				StatusFilter: sfntypes.ExecutionStatus(f.Status), MaxResults: int32(min(f.Max-n, 1000)), NextToken: next})
			if err != nil {
				return nil, awsError(err, "the executions of "+m.arn+" cannot be listed", m.arn+" の実行一覧を取得できません")
			}
			for _, e := range res.Executions {
				out = append(out, Execution{ARN: aws.ToString(e.ExecutionArn), Name: aws.ToString(e.Name), Workflow: m.workflow,
					StateMachine: aws.ToString(e.StateMachineArn), Status: string(e.Status), StartDate: aws.ToTime(e.StartDate),
					StopDate: aws.ToTime(e.StopDate), RedriveCount: int(aws.ToInt32(e.RedriveCount))})
				n++
			}
			if next = res.NextToken; next == nil || len(res.Executions) == 0 {
				break
			}
		}
	}
	return out, nil
}

type machine struct{ workflow, arn string }

// stateMachines resolves a workflow name or ARN ("": all of cloud.json's).
func (c *Console) stateMachines(name string) ([]machine, error) {
	if strings.HasPrefix(name, "arn:") {
		for w, arn := range c.Config.StateMachines {
			if arn == name {
				return []machine{{w, arn}}, nil
			}
		}
		return []machine{{"", name}}, nil
	}
	if name != "" {
		if arn := c.Config.StateMachines[name]; arn != "" {
			return []machine{{name, arn}}, nil
		}
	}
	var names []string
	for w := range c.Config.StateMachines {
		names = append(names, w)
	}
	sort.Strings(names)
	if name != "" || len(names) == 0 {
		list := strings.Join(names, ", ")
		if list == "" {
			list = "none"
		}
		return nil, job.Errorf(job.E014, "cloud.json names no state machine %q (its state machines: %s)", name, list).
			WithJa(fmt.Sprintf("cloud.json にステートマシン %q がありません（ステートマシン: %s）。", name, list))
	}
	out := make([]machine, len(names))
	for i, w := range names {
		out[i] = machine{w, c.Config.StateMachines[w]}
	}
	return out, nil
}

// RedrivenExecution is what RedriveExecution answered.
type RedrivenExecution struct {
	ARN         string    `json:"arn"`
	RedriveDate time.Time `json:"redrive_date"`
}

// RedriveExecution redrives a failed, timed-out or aborted execution, named by its ARN or by its
// name (looked up among the failed, timed-out and aborted executions of stateMachine, or of every
// state machine of cloud.json when stateMachine is "").
func (c *Console) RedriveExecution(ctx context.Context, arnOrName, stateMachine string) (RedrivenExecution, error) {
	arn := arnOrName
	if !strings.HasPrefix(arn, "arn:") {
		var found []string
		for _, st := range []string{"FAILED", "TIMED_OUT", "ABORTED"} {
			es, err := c.Executions(ctx, ExecutionFilter{StateMachine: stateMachine, Status: st, Max: 1000})
			if err != nil {
				return RedrivenExecution{}, err
			}
			for _, e := range es {
				if e.Name == arnOrName {
					found = append(found, e.ARN)
				}
			}
		}
		switch len(found) {
		case 0:
			return RedrivenExecution{}, job.Errorf(job.E014, "no failed, timed-out or aborted execution is named %q", arnOrName).
				WithJa(fmt.Sprintf("%q という失敗・タイムアウト・中止の実行はありません。", arnOrName))
		case 1:
			arn = found[0]
		default:
			return RedrivenExecution{}, job.Errorf(job.E014, "%d executions are named %q: give its ARN or --state-machine", len(found), arnOrName).
				WithJa(fmt.Sprintf("%q という実行が %d 件あります。ARN または --state-machine を指定してください。", arnOrName, len(found)))
		}
	}
	out, err := c.SFN.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return RedrivenExecution{ARN: arn}, awsError(err, "the execution "+arn+" could not be redriven", "実行 "+arn+" を再実行できませんでした")
	}
	return RedrivenExecution{ARN: arn, RedriveDate: aws.ToTime(out.RedriveDate)}, nil
}
