package aijob

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// Lambda function names of the shipped workflows (assets/workflows/*-generation.asl.json,
// eligibility-extract.asl.json). Each is a job.Handler of Service; the same function serves the
// workflow on the device and in AWS Lambda.
const (
	FnSubgoals     = "ai-subgoal-generation"
	FnActions      = "ai-action-generation"
	FnCaption      = "ai-caption-generation"
	FnEligibility  = "ai-eligibility-extract"
	FnTaskValidate = "ai-task-validate"
	FnTaskBatches  = "ai-task-batches"
	FnTaskGenerate = "ai-task-generate"
	FnTaskSave     = "ai-task-save"
	FnTaskAggr     = "ai-task-aggregate"
	FnGoalStatus   = "ai-goal-status"
)

// Workflows maps each job type to its shipped workflow's name.
var Workflows = map[string]string{
	TypeSubgoals: "subgoal-generation", TypeActions: "action-generation", TypeTasks: "task-generation",
	TypeCaption: "caption-generation", TypeEligibility: "eligibility-extract",
}

// functionOptions is how the device runs each of the family's functions: they wait on the
// network, not the CPU, so they take no CPU-sized worker slot (the task workflow's 3 batches × 8
// actions really run 24 calls at once), and a call repeats its progress (its heartbeat) well
// within the 60 s lease.
var functionOptions = functions.Options{Timeout: 20 * time.Minute, Visibility: 60 * time.Second, Waits: true, Concurrency: 24}

// Functions returns every Lambda function of the family, for the function registry.
func (s *Service) Functions() []functions.Function {
	hs := []struct {
		name string
		h    job.Handler
	}{
		{FnSubgoals, s.Subgoals}, {FnActions, s.Actions}, {FnCaption, s.Caption}, {FnEligibility, s.Eligibility},
		{FnTaskValidate, s.TaskValidate}, {FnTaskBatches, s.TaskBatches}, {FnTaskGenerate, s.TaskGenerate},
		{FnTaskSave, s.TaskSave}, {FnTaskAggr, s.TaskAggregate}, {FnGoalStatus, s.GoalStatus},
	}
	out := make([]functions.Function, len(hs))
	for i, f := range hs {
		out[i] = functions.Function{Name: f.name, Handler: f.h, Options: functionOptions}
	}
	return out
}

// actionRef is one item of a batch: the action and its goal.
type actionRef struct {
	GoalID   int64     `json:"goal_id"`
	ActionID int64     `json:"action_id"`
	Tasks    []GenTask `json:"tasks,omitempty"`
}

// TaskValidate is ValidateInput: the goal exists, gets actions first when it has none, and
// becomes processing. It returns its input with the goal id.
func (s *Service) TaskValidate(ctx context.Context, input json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	in, g, err := s.inputGoal(ctx, input)
	if err != nil {
		return nil, err
	}
	if len(g.Actions()) == 0 {
		if err := s.generateActions(ctx, &g, false, r); err != nil {
			return nil, s.deferOffline(err)
		}
	}
	if err := s.SetGoalStatus(ctx, g.ID, "processing"); err != nil {
		return nil, err
	}
	in.GoalID, in.Title, in.Description, in.Deadline = g.ID, "", "", ""
	if in.ActionIDs == nil {
		in.ActionIDs = []int64{}
	}
	return json.Marshal(in)
}

// TaskBatches is CreateBatches: the actions to process (those without tasks, or the ones named,
// or all with Regenerate) in batches of at most BatchSize.
func (s *Service) TaskBatches(ctx context.Context, input json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
	var in GoalInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	g, err := s.LoadGoal(ctx, in.GoalID)
	if err != nil {
		return nil, err
	}
	want := map[int64]bool{}
	for _, id := range in.ActionIDs {
		want[id] = true
	}
	var ids []int64
	for _, a := range g.Actions() {
		if (len(want) > 0 && want[a.ID]) || (len(want) == 0 && (len(a.Tasks) == 0 || in.Regenerate)) {
			ids = append(ids, a.ID)
		}
	}
	type batch struct {
		Batch   int         `json:"batch"`
		Actions []actionRef `json:"actions"`
	}
	out := struct {
		GoalID  int64   `json:"goal_id"`
		Total   int     `json:"total"`
		Batches []batch `json:"batches"`
	}{GoalID: g.ID, Total: len(ids), Batches: []batch{}}
	for i, b := range Batches(ids, s.BatchSize) {
		refs := make([]actionRef, len(b))
		for j, id := range b {
			refs[j] = actionRef{GoalID: g.ID, ActionID: id}
		}
		out.Batches = append(out.Batches, batch{i + 1, refs})
	}
	return json.Marshal(out)
}

// TaskGenerate is GenerateTasks for one action: one call (the workflow's Retry retries it). It
// returns {goal_id, action_id, tasks}.
func (s *Service) TaskGenerate(ctx context.Context, input json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
	var in actionRef
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	g, err := s.LoadGoal(ctx, in.GoalID)
	if err != nil {
		return nil, err
	}
	for _, sg := range g.Subgoals {
		for _, a := range sg.Actions {
			if a.ID == in.ActionID {
				tasks, err := s.GenerateTasks(ctx, g, sg, a)
				if err != nil {
					return nil, s.deferOffline(err)
				}
				in.Tasks = tasks
				return json.Marshal(in)
			}
		}
	}
	return nil, badInput("action %d is not part of goal %d", in.ActionID, in.GoalID)
}

// TaskSave is SaveTasks: one action's tasks in one transaction. It returns {action_id, task_ids}.
func (s *Service) TaskSave(ctx context.Context, input json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
	var in actionRef
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	if _, err := TaskSchema.ValidateJSON(mustMarshal(map[string]any{"tasks": in.Tasks})); err != nil {
		return nil, badInput("the tasks to save are not valid: %v", err)
	}
	ids, err := s.SaveTasks(ctx, in.ActionID, s.ownerJob(ctx), in.Tasks)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"goal_id": in.GoalID, "action_id": in.ActionID, "task_ids": ids})
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TaskAggregate is AggregateResults: it counts the Map's outcomes, marks failed actions, and
// decides allSuccess / partialSuccess (seed 001), with the notification text.
func (s *Service) TaskAggregate(ctx context.Context, input json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
	var in struct {
		GoalID  int64             `json:"goal_id"`
		Results [][]ActionOutcome `json:"results"`
	}
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	g, err := s.LoadGoal(ctx, in.GoalID)
	if err != nil {
		return nil, err
	}
	res := struct {
		TaskResult
		AllSuccess          bool   `json:"allSuccess"`
		PartialSuccess      bool   `json:"partialSuccess"`
		NotificationMessage string `json:"notificationMessage"`
	}{TaskResult: TaskResult{GoalID: g.ID, FailedActions: []int64{}}}
	for _, b := range in.Results {
		for _, o := range b {
			res.TotalActions++
			if o.Status == "success" {
				res.SuccessCount++
				res.Tasks += len(o.TaskIDs)
			} else {
				res.FailedCount++
				res.FailedActions = append(res.FailedActions, o.ActionID)
				s.markActionFailed(ctx, o.ActionID)
			}
		}
	}
	s.CheckAlert(ctx)
	switch {
	case res.FailedCount == 0:
		res.AllSuccess, res.GoalStatus = true, "active"
	case res.SuccessCount > 0:
		res.PartialSuccess, res.GoalStatus = true, "partial"
		res.NotificationMessage = fmt.Sprintf("「%s」: %d 件中 %d 件のアクションでタスク生成に失敗しました（アクション %v）。", g.Title, res.TotalActions, res.FailedCount, res.FailedActions)
	default:
		res.GoalStatus = "failed"
		res.NotificationMessage = fmt.Sprintf("「%s」: すべてのアクション（%d 件）でタスク生成に失敗しました。", g.Title, res.TotalActions)
	}
	return json.Marshal(res)
}

// GoalStatus is UpdateGoalStatus: {goal_id, status, message}; a message is kept as a local
// notification.
func (s *Service) GoalStatus(ctx context.Context, input json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
	var in struct {
		GoalID  int64  `json:"goal_id"`
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	switch in.Status {
	case "active", "partial", "failed", "processing":
	default:
		return nil, badInput("goal status %q is not active, partial, failed or processing", in.Status)
	}
	if err := s.SetGoalStatus(ctx, in.GoalID, in.Status); err != nil {
		return nil, err
	}
	if in.Message != "" {
		title := map[string]string{"partial": "タスク生成が一部完了しました", "failed": "タスク生成に失敗しました"}[in.Status]
		s.notify(ctx, in.GoalID, in.Status, title, in.Message)
	}
	return json.RawMessage(`{}`), nil
}

// Reachable reports whether the provider answers at all: nil, or an offline *ProviderError.
// The OpenAI-compatible server is asked for its model list; other providers are assumed
// reachable (their calls say otherwise when they are not).
func (s *Service) Reachable(ctx context.Context) error {
	ps := []Provider{s.Provider}
	if c, ok := s.Provider.(Chain); ok {
		ps = c
	}
	var last error
	for _, p := range ps {
		o, ok := p.(*OpenAI)
		if !ok {
			return nil
		}
		if last = o.ping(ctx); last == nil {
			return nil
		}
	}
	return last
}

func (o *OpenAI) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	endpoint := strings.TrimRight(o.Endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/models", nil)
	if err != nil {
		return &ProviderError{Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	client := o.HTTP
	if client == nil {
		client = defaultHTTP
	}
	resp, err := client.Do(req)
	if err != nil {
		if IsDialError(err) {
			return &ProviderError{Kind: KindOffline, Message: OfflineMessage, Err: err}
		}
		return nil // it answered something: let the real call tell the rest
	}
	resp.Body.Close()
	return nil
}

// DeferIfOffline returns the deferral for an offline provider, or nil.
func (s *Service) DeferIfOffline(ctx context.Context) error {
	if err := s.Reachable(ctx); IsOffline(err) {
		return s.deferOffline(err)
	}
	return nil
}
