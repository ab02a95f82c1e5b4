package aijob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jobdesk/engine/job"
)

// GoalInput is the input of SUBGOAL_GENERATION, ACTION_GENERATION and TASK_GENERATION: an
// existing goal, or a new goal's title, description and deadline (the goal is then created).
type GoalInput struct {
	GoalID      int64   `json:"goal_id,omitempty"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	Deadline    string  `json:"deadline,omitempty"`   // YYYY-MM-DD
	ActionIDs   []int64 `json:"action_ids,omitempty"` // TASK_GENERATION: only these actions
	Regenerate  bool    `json:"regenerate,omitempty"` // generate again what already exists
}

// GenSubgoal is one generated sub-goal (seed 000's output).
type GenSubgoal struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Background  string `json:"background"`
}

// GenAction is one generated action: Type is execution or habit.
type GenAction struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Type        string `json:"type"`
}

// GenTask is one generated task (seed 001's TaskGenerationOutput.tasks).
type GenTask struct {
	Title            string `json:"title"`
	Description      string `json:"description"`
	Type             string `json:"type"`
	EstimatedMinutes int    `json:"estimatedMinutes"`
}

const systemJa = "あなたは目標達成を支援するコーチです。日本語で、具体的かつ実行可能な内容を、指定された JSON スキーマに厳密に従って出力してください。"

func (s *Service) goalFor(ctx context.Context, in GoalInput) (Goal, error) {
	if in.GoalID == 0 {
		if in.Deadline != "" {
			if _, err := time.Parse("2006-01-02", in.Deadline); err != nil {
				return Goal{}, badInput("the deadline %q is not a date (YYYY-MM-DD)", in.Deadline)
			}
		}
		id, err := s.CreateGoal(ctx, in.Title, in.Description, in.Deadline)
		if err != nil {
			return Goal{}, err
		}
		if owner := s.ownerJob(ctx); owner != 0 {
			s.LinkGoalJob(ctx, id, owner)
		}
		in.GoalID = id
	}
	return s.LoadGoal(ctx, in.GoalID)
}

func goalContext(g Goal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "目標: %s\n", g.Title)
	if g.Description != "" {
		fmt.Fprintf(&b, "説明: %s\n", g.Description)
	}
	if g.Deadline != "" {
		fmt.Fprintf(&b, "達成期限: %s\n", g.Deadline)
	}
	return b.String()
}

// SubgoalResult is SUBGOAL_GENERATION's result.
type SubgoalResult struct {
	GoalID   int64     `json:"goal_id"`
	Subgoals []Subgoal `json:"subgoals"`
	Usage    *Usage    `json:"usage,omitempty"`
}

// timeoutError is seed 000's HandleTimeout: TIMED_OUT with its message, no retry.
func timeoutError(limit time.Duration) *job.Error {
	return job.Errorf(job.E011, "the generation took longer than its limit of %s", limit).
		WithJa("処理時間が制限を超えました").WithName("States.Timeout").Permanent()
}

// Subgoals is SUBGOAL_GENERATION (seed 000): the goal's title, description and deadline become
// exactly eight sub-goals. Progress 0 → 50 (AI done) → 100 (saved).
func (s *Service) Subgoals(ctx context.Context, input json.RawMessage, r job.Reporter) (_ json.RawMessage, err error) {
	var in GoalInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	g, err := s.goalFor(ctx, in)
	if err != nil {
		return nil, err
	}
	defer func() { s.EndGeneration(ctx, g.ID, TypeSubgoals, err) }()
	if len(g.Subgoals) > 0 && !in.Regenerate {
		// Already generated (by an earlier job or a task generation that needed them).
		r.Progress(100, "The goal already has its 8 sub-goals")
		return s.result(ctx, SubgoalResult{GoalID: g.ID, Subgoals: g.Subgoals})
	}
	if err := s.generateSubgoals(ctx, &g, in.Regenerate, r); err != nil {
		return nil, s.deferOffline(err)
	}
	return s.result(ctx, SubgoalResult{GoalID: g.ID, Subgoals: g.Subgoals})
}

func (s *Service) generateSubgoals(ctx context.Context, g *Goal, replace bool, r job.Reporter) error {
	r.Progress(0, "Generating 8 sub-goals")
	defer heartbeat(r, 0, "Generating 8 sub-goals")()
	limit := s.SubgoalTimeout
	gctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var out struct {
		Subgoals []GenSubgoal `json:"subgoals"`
	}
	_, err := s.generate(gctx, s.Provider, "subgoals", Request{System: systemJa,
		Prompt: goalContext(*g) + "\nこの目標を達成するための8つのサブ目標を作成してください。それぞれ title（30文字以内）、description、background を含めてください。"},
		SubgoalSchema, &out)
	if err != nil {
		if ctx.Err() == nil && gctx.Err() != nil {
			return timeoutError(limit)
		}
		return err
	}
	r.Progress(50, "Sub-goals generated; saving")
	if err := s.Goals.SaveSubgoals(ctx, g.ID, s.ownerJob(ctx), out.Subgoals, replace); err != nil {
		return dbErr(err, "the sub-goals")
	}
	ng, err := s.LoadGoal(ctx, g.ID)
	if err != nil {
		return err
	}
	*g = ng
	r.Progress(100, "8 sub-goals saved")
	return nil
}

// ActionResult is ACTION_GENERATION's result.
type ActionResult struct {
	GoalID   int64     `json:"goal_id"`
	Actions  int       `json:"actions"`
	Subgoals []Subgoal `json:"subgoals"`
	Usage    *Usage    `json:"usage,omitempty"`
}

// Actions is ACTION_GENERATION: each of the goal's eight sub-goals gets eight actions
// (execution or habit). Progress moves 12.5 per sub-goal. A sub-goal's actions are saved
// together; sub-goals that already have actions are kept unless Regenerate, so a retry continues
// where the last attempt stopped. A goal without sub-goals gets them first.
func (s *Service) Actions(ctx context.Context, input json.RawMessage, r job.Reporter) (_ json.RawMessage, err error) {
	var in GoalInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	g, err := s.goalFor(ctx, in)
	if err != nil {
		return nil, err
	}
	defer func() { s.EndGeneration(ctx, g.ID, TypeActions, err) }()
	if err := s.generateActions(ctx, &g, in.Regenerate, r); err != nil {
		return nil, s.deferOffline(err)
	}
	n := len(g.Actions())
	return s.result(ctx, ActionResult{GoalID: g.ID, Actions: n, Subgoals: g.Subgoals})
}

func (s *Service) generateActions(ctx context.Context, g *Goal, regenerate bool, r job.Reporter) error {
	if len(g.Subgoals) == 0 {
		if err := s.generateSubgoals(ctx, g, false, job.Discard); err != nil {
			return err
		}
	}
	owner := s.ownerJob(ctx)
	step := 100 / float64(len(g.Subgoals))
	for i, sg := range g.Subgoals {
		r.Progress(float64(i)*step, fmt.Sprintf("Generating actions for sub-goal %d of %d", i+1, len(g.Subgoals)))
		if len(sg.Actions) == 8 && !regenerate {
			continue
		}
		var out struct {
			Actions []GenAction `json:"actions"`
		}
		stop := heartbeat(r, float64(i)*step, fmt.Sprintf("Generating actions for sub-goal %d of %d", i+1, len(g.Subgoals)))
		prompt := goalContext(*g) + fmt.Sprintf("サブ目標: %s\n%s\n\nこのサブ目標を達成するための8つのアクションを作成してください。type は一度で終わる行動なら execution、繰り返す習慣なら habit です。", sg.Title, sg.Description)
		_, err := s.generate(ctx, s.Provider, "actions", Request{System: systemJa, Prompt: prompt}, ActionSchema, &out)
		stop()
		if err != nil {
			return err
		}
		if err := s.Goals.SaveActions(ctx, sg.ID, owner, out.Actions, regenerate); err != nil {
			return dbErr(err, "the actions")
		}
	}
	r.Progress(100, "Actions saved")
	ng, err := s.LoadGoal(ctx, g.ID)
	if err == nil {
		*g = ng
	}
	return err
}

// Batches splits ids into consecutive batches of at most size (seed 001's CreateBatches): every
// id lands in exactly one batch, in order.
func Batches(ids []int64, size int) [][]int64 {
	if size <= 0 {
		size = 8
	}
	var out [][]int64
	for len(ids) > 0 {
		n := min(size, len(ids))
		out = append(out, ids[:n:n])
		ids = ids[n:]
	}
	return out
}

// ActionOutcome is one action's end in TASK_GENERATION.
type ActionOutcome struct {
	ActionID int64      `json:"action_id"`
	Status   string     `json:"status"` // success | failed
	TaskIDs  []int64    `json:"task_ids,omitempty"`
	Error    *job.Error `json:"error,omitempty"`
	offline  bool
}

// TaskResult is TASK_GENERATION's result (seed 001's output, plus the goal's new status).
type TaskResult struct {
	GoalID        int64           `json:"goal_id"`
	GoalStatus    string          `json:"goal_status"` // active | partial | failed
	TotalActions  int             `json:"total_actions"`
	SuccessCount  int             `json:"success_count"`
	FailedCount   int             `json:"failed_count"`
	FailedActions []int64         `json:"failed_actions"`
	Tasks         int             `json:"tasks"`
	Actions       []ActionOutcome `json:"actions"`
	Usage         *Usage          `json:"usage,omitempty"`
}

// Tasks is TASK_GENERATION (seed 001): every action of the goal that has no tasks yet (or the
// actions named, or all with Regenerate) gets tasks. Actions go in batches of BatchSize, Batches
// batches at once and PerBatch actions at once inside a batch; each action's generation is
// retried by TaskRetry and bounded by CallTimeout, and its tasks are saved atomically. Progress
// is processed / total. All actions done: goal active; some: goal partial, job PARTIAL with the
// failed actions listed; none: goal failed, job FAILED. Partial and failed leave a notification.
// The app runs TASK_GENERATION as the task-generation workflow instead, whose functions
// (TaskValidate … GoalStatus) take these steps one by one; Tasks takes them in one handler.
func (s *Service) Tasks(ctx context.Context, input json.RawMessage, r job.Reporter) (_ json.RawMessage, err error) {
	var in GoalInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	limit := s.ExecutionTimeout
	if limit <= 0 {
		limit = 900 * time.Second
	}
	ectx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := s.runTasks(ectx, in, r)
	defer func() {
		id := res.GoalID
		if id == 0 {
			id = in.GoalID
		}
		s.EndGeneration(ctx, id, TypeTasks, err)
	}()
	if err != nil {
		if ctx.Err() == nil && ectx.Err() != nil {
			return nil, timeoutError(limit)
		}
		return nil, s.deferOffline(err)
	}
	out, err := s.result(ctx, res)
	if err != nil {
		return nil, err
	}
	switch res.GoalStatus {
	case "partial":
		return nil, job.PartialSuccess(out, fmt.Sprintf("%d of %d actions failed: %v", res.FailedCount, res.TotalActions, res.FailedActions))
	case "failed":
		je := job.Errorf(job.E007, "no action got its tasks (%d failed)", res.FailedCount).
			WithJa("すべてのアクションでタスク生成に失敗しました。").Permanent()
		for _, a := range res.Actions {
			if a.Error != nil {
				je = job.Wrap(a.Error.Code, a.Error, "no action got its tasks: "+a.Error.Message).WithJa("すべてのアクションでタスク生成に失敗しました。").Permanent()
				break
			}
		}
		return nil, je
	}
	return out, nil
}

func (s *Service) runTasks(ctx context.Context, in GoalInput, r job.Reporter) (TaskResult, error) {
	g, err := s.goalFor(ctx, in)
	if err != nil {
		return TaskResult{}, err
	}
	if len(g.Actions()) == 0 {
		if err := s.generateActions(ctx, &g, false, job.Discard); err != nil {
			return TaskResult{GoalID: g.ID}, err
		}
	}
	want := map[int64]bool{}
	for _, id := range in.ActionIDs {
		want[id] = true
	}
	var todo []Action
	for _, a := range g.Actions() {
		if len(want) > 0 && !want[a.ID] {
			continue
		}
		if len(a.Tasks) > 0 && !in.Regenerate && len(want) == 0 {
			continue
		}
		todo = append(todo, a)
	}
	if len(want) > 0 && len(todo) != len(want) {
		return TaskResult{GoalID: g.ID}, badInput("some of the actions named do not belong to goal %d", g.ID)
	}
	s.SetGoalStatus(ctx, g.ID, "processing")
	res := TaskResult{GoalID: g.ID, TotalActions: len(todo), FailedActions: []int64{}}
	outcomes := s.processActions(ctx, g, todo, r)
	offline := false
	for _, o := range outcomes {
		if o.offline {
			offline = true
		}
		if o.Status == "success" {
			res.SuccessCount++
			res.Tasks += len(o.TaskIDs)
		} else {
			res.FailedCount++
			res.FailedActions = append(res.FailedActions, o.ActionID)
		}
	}
	if offline {
		// Nothing is lost: saved actions are skipped when the job starts again.
		s.SetGoalStatus(ctx, g.ID, "processing")
		return res, &ProviderError{Kind: KindOffline, Message: OfflineMessage}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.Actions = outcomes
	switch {
	case res.FailedCount == 0:
		res.GoalStatus = "active"
	case res.SuccessCount > 0:
		res.GoalStatus = "partial"
		s.notify(ctx, g.ID, "partial", "タスク生成が一部完了しました",
			fmt.Sprintf("「%s」: %d 件中 %d 件のアクションでタスク生成に失敗しました。", g.Title, res.TotalActions, res.FailedCount))
	default:
		res.GoalStatus = "failed"
		s.notify(ctx, g.ID, "failed", "タスク生成に失敗しました",
			fmt.Sprintf("「%s」: すべてのアクション（%d 件）でタスク生成に失敗しました。", g.Title, res.TotalActions))
	}
	if err := s.SetGoalStatus(ctx, g.ID, res.GoalStatus); err != nil {
		return res, err
	}
	s.CheckAlert(ctx)
	r.Progress(100, fmt.Sprintf("%d of %d actions done", res.SuccessCount, res.TotalActions))
	return res, nil
}

// processActions is the Map of Maps: Batches batches at once, PerBatch actions at once inside a
// batch. Outcomes come back in the order of actions.
func (s *Service) processActions(ctx context.Context, g Goal, actions []Action, r job.Reporter) []ActionOutcome {
	ids := make([]int64, len(actions))
	byID := map[int64]Action{}
	subgoalOf := map[int64]Subgoal{}
	for _, sg := range g.Subgoals {
		for _, a := range sg.Actions {
			subgoalOf[a.ID] = sg
		}
	}
	for i, a := range actions {
		ids[i] = a.ID
		byID[a.ID] = a
	}
	outcomes := make([]ActionOutcome, len(actions))
	index := map[int64]int{}
	for i, id := range ids {
		index[id] = i
	}
	total := len(actions)
	var processed atomic.Int64
	batchSem := make(chan struct{}, max(1, s.Batches))
	var wg sync.WaitGroup
	for bi, batch := range Batches(ids, s.BatchSize) {
		wg.Add(1)
		batchSem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-batchSem }()
			sem := make(chan struct{}, max(1, s.PerBatch))
			var bwg sync.WaitGroup
			for _, id := range batch {
				bwg.Add(1)
				sem <- struct{}{}
				go func() {
					defer bwg.Done()
					defer func() { <-sem }()
					o := s.processAction(ctx, g, subgoalOf[id], byID[id])
					outcomes[index[id]] = o
					n := processed.Add(1)
					r.Progress(Progress(int(n), total), fmt.Sprintf("%d of %d actions processed (batch %d)", n, total, bi+1))
				}()
			}
			bwg.Wait()
		}()
	}
	wg.Wait()
	return outcomes
}

// Progress is seed 001's progress: processed / total × 100 (100 when there is nothing to do).
func Progress(processed, total int) float64 {
	if total <= 0 {
		return 100
	}
	return float64(processed) * 100 / float64(total)
}

// processAction is GenerateTasks (Retry, Catch → failed) then SaveTasks (Retry, Catch → failed).
func (s *Service) processAction(ctx context.Context, g Goal, sg Subgoal, a Action) ActionOutcome {
	o := ActionOutcome{ActionID: a.ID, Status: "failed"}
	tasks, err := retry(ctx, s.TaskRetry, func() ([]GenTask, error) { return s.GenerateTasks(ctx, g, sg, a) })
	if err == nil {
		owner := s.ownerJob(ctx)
		o.TaskIDs, err = retry(ctx, s.SaveRetry, func() ([]int64, error) { return s.SaveTasks(ctx, a.ID, owner, tasks) })
	}
	if err != nil {
		o.offline = IsOffline(err)
		o.Error = job.AsError(err)
		if pe := (*ProviderError)(nil); errors.As(err, &pe) {
			o.Error = pe.JobError()
		}
		s.markActionFailed(ctx, a.ID)
		return o
	}
	o.Status = "success"
	return o
}

// retry runs f, retrying retryable failures by p (a Step Functions Retrier on States.TaskFailed
// and the provider's retryable errors).
func retry[T any](ctx context.Context, p RetryPolicy, f func() (T, error)) (T, error) {
	var v T
	var err error
	for n := 0; ; n++ {
		v, err = f()
		if err == nil || n >= p.MaxAttempts || IsOffline(err) || !retryable(err) {
			return v, err
		}
		t := time.NewTimer(p.Delay(n + 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}

func retryable(err error) bool {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Retryable()
	}
	var je *job.Error
	if errors.As(err, &je) {
		return je.Retryable
	}
	return false
}

// GenerateTasks asks for one action's tasks (seed 001's TaskGenerationFunction), bounded by
// CallTimeout.
func (s *Service) GenerateTasks(ctx context.Context, g Goal, sg Subgoal, a Action) ([]GenTask, error) {
	limit := s.CallTimeout
	if limit <= 0 {
		limit = 120 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var out struct {
		Tasks []GenTask `json:"tasks"`
	}
	prompt := goalContext(g) + fmt.Sprintf("サブ目標: %s\nアクション: %s（%s）\n%s\n\nこのアクションを実行するための具体的なタスクを3〜8個作成してください。各タスクに title、description、type（execution または habit）、estimatedMinutes（分）を含めてください。",
		sg.Title, a.Title, a.Type, a.Description)
	_, err := s.generate(cctx, s.Provider, "tasks", Request{System: systemJa, Prompt: prompt}, TaskSchema, &out)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return nil, job.Errorf(job.E011, "generating the tasks of action %d took longer than %s", a.ID, limit).
			WithJa("タスク生成が制限時間を超えました。").WithName("States.Timeout")
	}
	return out.Tasks, err
}

// result marshals a result, adding the job's model usage.
func (s *Service) result(ctx context.Context, v any) (json.RawMessage, error) {
	if owner := s.ownerJob(ctx); owner != 0 {
		if u, err := s.JobUsage(ctx, owner); err == nil && u.Calls > 0 {
			switch r := v.(type) {
			case SubgoalResult:
				r.Usage = &u
				v = r
			case ActionResult:
				r.Usage = &u
				v = r
			case TaskResult:
				r.Usage = &u
				v = r
			}
		}
	}
	return json.Marshal(v)
}

// HeartbeatEvery is how often a handler waiting on the model repeats its progress, which is its
// heartbeat (the queue's lease, a workflow Task's HeartbeatSeconds).
var HeartbeatEvery = 20 * time.Second

// heartbeat repeats (pct, msg) every HeartbeatEvery until the returned stop is called.
func heartbeat(r job.Reporter, pct float64, msg string) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.Progress(pct, msg)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
