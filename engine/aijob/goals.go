package aijob

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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

// inputGoal decodes a GoalInput and finds or creates its goal (goalFor).
func (s *Service) inputGoal(ctx context.Context, input json.RawMessage) (GoalInput, Goal, error) {
	var in GoalInput
	if err := decodeInput(input, &in); err != nil {
		return in, Goal{}, err
	}
	g, err := s.goalFor(ctx, in)
	return in, g, err
}

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
	in, g, err := s.inputGoal(ctx, input)
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
	in, g, err := s.inputGoal(ctx, input)
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
