package sfnapi

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"jobdesk/engine/flow"
)

type describeMapRunRequest struct {
	MapRunArn string `json:"mapRunArn" arn:"mapRun"`
}

func (s *Server) describeMapRun(ctx context.Context, in *describeMapRunRequest) (any, error) {
	mr, err := s.b.DescribeMapRun(ctx, in.MapRunArn)
	if err != nil {
		return nil, err
	}
	type counts struct {
		Pending        int64 `json:"pending"`
		Running        int64 `json:"running"`
		Succeeded      int64 `json:"succeeded"`
		Failed         int64 `json:"failed"`
		TimedOut       int64 `json:"timedOut"`
		Aborted        int64 `json:"aborted"`
		Total          int64 `json:"total"`
		ResultsWritten int64 `json:"resultsWritten"`
	}
	it := mr.Items
	c := counts{it.Pending, it.Running, it.Succeeded, it.Failed, it.TimedOut, it.Aborted, it.Total, it.ResultsWritten}
	return struct {
		MapRunArn                  string  `json:"mapRunArn"`
		ExecutionArn               string  `json:"executionArn"`
		Status                     string  `json:"status"`
		StartDate                  epoch   `json:"startDate"`
		StopDate                   *epoch  `json:"stopDate,omitempty"`
		MaxConcurrency             int     `json:"maxConcurrency"`
		ToleratedFailurePercentage float64 `json:"toleratedFailurePercentage"`
		ToleratedFailureCount      int64   `json:"toleratedFailureCount"`
		ItemCounts                 counts  `json:"itemCounts"`
		// Every item runs as a child execution, so the execution counts are the item counts.
		ExecutionCounts counts `json:"executionCounts"`
		RedriveCount    int    `json:"redriveCount"`
	}{mr.ARN, mr.ExecutionARN, mr.Status, at(mr.StartDate), atp(mr.StopDate), mr.MaxConcurrency,
		mr.ToleratedFailurePercentage, mr.ToleratedFailureCount, c, c, 0}, nil
}

// mapRunStateMachine derives the ARN of a map run's child state machine as AWS shapes it:
// arn:…:mapRun:SM/LABEL:UUID belongs to arn:…:stateMachine:SM/LABEL.
func mapRunStateMachine(mapRunARN string) string {
	const marker = ":mapRun:"
	i := strings.Index(mapRunARN, marker)
	if i < 0 {
		return ""
	}
	rest := mapRunARN[i+len(marker):]
	if j := strings.LastIndexByte(rest, ':'); j > 0 {
		rest = rest[:j]
	}
	return mapRunARN[:i] + ":stateMachine:" + rest
}

type mapRunListItem struct {
	ExecutionArn    string `json:"executionArn"`
	MapRunArn       string `json:"mapRunArn"`
	StateMachineArn string `json:"stateMachineArn"`
	StartDate       epoch  `json:"startDate"`
	StopDate        *epoch `json:"stopDate,omitempty"`
}

type listMapRunsRequest struct {
	ExecutionArn string `json:"executionArn" arn:"execution"`
	MaxResults   int    `json:"maxResults"`
	NextToken    string `json:"nextToken"`
}

func (s *Server) listMapRuns(ctx context.Context, in *listMapRunsRequest) (any, error) {
	max, err := maxResults(in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := s.b.ListMapRuns(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	key := func(m flow.MapRun) string { return m.StartDate.UTC().Format("20060102150405.000000000") + " " + m.ARN }
	items, next, err := page(all, key, "mapRuns", in.ExecutionArn, in.NextToken, max)
	if err != nil {
		return nil, err
	}
	out := struct {
		MapRuns   []mapRunListItem `json:"mapRuns"`
		NextToken *string          `json:"nextToken,omitempty"`
	}{MapRuns: []mapRunListItem{}, NextToken: strp(next)}
	for _, m := range items {
		out.MapRuns = append(out.MapRuns, mapRunListItem{m.ExecutionARN, m.ARN, mapRunStateMachine(m.ARN), at(m.StartDate), atp(m.StopDate)})
	}
	return out, nil
}

type createActivityRequest struct {
	Name string `json:"name"`
}

func (s *Server) createActivity(ctx context.Context, in *createActivityRequest) (any, error) {
	if err := checkName("name", in.Name); err != nil {
		return nil, err
	}
	a, err := s.b.CreateActivity(ctx, in.Name)
	if err != nil {
		return nil, err
	}
	return struct {
		ActivityArn  string `json:"activityArn"`
		CreationDate epoch  `json:"creationDate"`
	}{a.ARN, at(a.CreatedAt)}, nil
}

type deleteActivityRequest struct {
	ActivityArn string `json:"activityArn" arn:"activity"`
}

func (s *Server) deleteActivity(ctx context.Context, in *deleteActivityRequest) (any, error) {
	if err := s.b.DeleteActivity(ctx, in.ActivityArn); err != nil && !isType(err, "ActivityDoesNotExist") {
		return nil, err
	}
	return struct{}{}, nil
}

// getActivityTask long-polls for a task of the activity, at most Options.PollTimeout. No task
// in that time is an empty answer (no taskToken), as on AWS.
type getActivityTaskRequest struct {
	ActivityArn string `json:"activityArn" arn:"activity"`
	WorkerName  string `json:"workerName"`
}

func (s *Server) getActivityTask(ctx context.Context, in *getActivityTaskRequest) (any, error) {
	if utf8.RuneCountInString(in.WorkerName) > 80 {
		return nil, validation("1 validation error detected: Value at 'workerName' failed to satisfy constraint: Member must have length less than or equal to 80")
	}
	pctx, cancel := context.WithTimeout(ctx, s.o.PollTimeout)
	defer cancel()
	token, input, err := s.b.GetActivityTask(pctx, in.ActivityArn, in.WorkerName)
	if err != nil {
		if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || pctx.Err() != nil) {
			return struct{}{}, nil // the poll ran out: no task
		}
		return nil, err
	}
	if token == "" {
		return struct{}{}, nil
	}
	return struct {
		TaskToken string  `json:"taskToken"`
		Input     *string `json:"input,omitempty"`
	}{token, str(input)}, nil
}

type sendTaskSuccessRequest struct {
	TaskToken string  `json:"taskToken"`
	Output    *string `json:"output"`
}

func (s *Server) sendTaskSuccess(ctx context.Context, in *sendTaskSuccessRequest) (any, error) {
	if err := required("taskToken", in.TaskToken); err != nil {
		return nil, err
	}
	if in.Output == nil {
		return nil, required("output", "")
	}
	out, err := checkPayload("InvalidOutput", "task output", *in.Output)
	if err != nil {
		return nil, err
	}
	if err := s.b.SendTaskSuccess(ctx, in.TaskToken, out); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type sendTaskFailureRequest struct {
	TaskToken string `json:"taskToken"`
	Error     string `json:"error"`
	Cause     string `json:"cause"`
}

func (s *Server) sendTaskFailure(ctx context.Context, in *sendTaskFailureRequest) (any, error) {
	if err := required("taskToken", in.TaskToken); err != nil {
		return nil, err
	}
	if err := errorAndCause(in.Error, in.Cause); err != nil {
		return nil, err
	}
	if err := s.b.SendTaskFailure(ctx, in.TaskToken, in.Error, in.Cause); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type sendTaskHeartbeatRequest struct {
	TaskToken string `json:"taskToken"`
}

func (s *Server) sendTaskHeartbeat(ctx context.Context, in *sendTaskHeartbeatRequest) (any, error) {
	if err := required("taskToken", in.TaskToken); err != nil {
		return nil, err
	}
	if err := s.b.SendTaskHeartbeat(ctx, in.TaskToken); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
