package aijob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"jobdesk/engine/job"
)

// Goal is a goal with its chart: eight sub-goals, each with eight actions, each with tasks.
type Goal struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Deadline    string    `json:"deadline,omitempty"` // YYYY-MM-DD
	Status      string    `json:"status"`             // draft | processing | active | partial | failed
	JobID       int64     `json:"job_id,omitempty"`
	Subgoals    []Subgoal `json:"subgoals,omitempty"`
}

// Subgoal is one of a goal's eight sub-goals (Position 1–8).
type Subgoal struct {
	ID          int64    `json:"id"`
	Position    int      `json:"position"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Background  string   `json:"background,omitempty"`
	JobID       int64    `json:"job_id,omitempty"`
	Actions     []Action `json:"actions,omitempty"`
}

// Action is one of a sub-goal's eight actions (execution or habit).
type Action struct {
	ID          int64  `json:"id"`
	SubgoalID   int64  `json:"subgoal_id"`
	Position    int    `json:"position"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	JobID       int64  `json:"job_id,omitempty"`
	Tasks       []Task `json:"tasks,omitempty"`
}

// Task is one concrete task of an action.
type Task struct {
	ID               int64  `json:"id"`
	Position         int    `json:"position"`
	Title            string `json:"title"`
	Description      string `json:"description"`
	Type             string `json:"type"`
	EstimatedMinutes int    `json:"estimatedMinutes"`
	JobID            int64  `json:"job_id,omitempty"`
}

// CreateGoal stores a new goal (status draft) and returns its id.
func (s *Service) CreateGoal(ctx context.Context, title, description, deadline string) (int64, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return 0, badInput("a goal needs a title")
	}
	id, err := s.Goals.CreateGoal(ctx, title, description, deadline)
	return id, dbErr(err, "the goal")
}

// LoadGoal reads a goal and its whole chart.
func (s *Service) LoadGoal(ctx context.Context, id int64) (Goal, error) {
	g, err := s.Goals.LoadGoal(ctx, id)
	if errors.Is(err, ErrGoalNotFound) {
		return g, job.Wrap(job.E014, ErrGoalNotFound, "there is no goal with this id").WithJa("指定された目標が見つかりません。").WithName("ValidationError")
	}
	return g, dbErr(err, "the goal")
}

// Actions returns every action of a goal in chart order.
func (g Goal) Actions() []Action {
	var out []Action
	for _, sg := range g.Subgoals {
		out = append(out, sg.Actions...)
	}
	return out
}

// SetGoalStatus sets a goal's status (seed 001's UpdateGoalStatus).
func (s *Service) SetGoalStatus(ctx context.Context, id int64, status string) error {
	return dbErr(s.Goals.SetGoalStatus(ctx, id, status), "the goal status")
}

// generationNames names each goal generation type in its failure notification's title.
var generationNames = map[string]string{
	TypeSubgoals: "サブ目標の生成に失敗しました",
	TypeActions:  "アクションの生成に失敗しました",
	TypeTasks:    "タスク生成に失敗しました",
}

// EndsForGood reports whether err, returned by an attempt of the job in ctx, ends that job: not
// a deferral, a partial success or a cancellation (ctx done), and either not retryable or the
// job's last attempt.
func EndsForGood(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var d *job.DeferredError
	var p *job.PartialResult
	if errors.As(err, &d) || errors.As(err, &p) {
		return false
	}
	je := job.AsError(err)
	if je == nil {
		return false
	}
	info, _ := job.InfoFrom(ctx)
	return !je.Retryable || info.Attempt >= info.MaxAttempts
}

// GenerationFailed ends goal generation typ (SUBGOAL_GENERATION, ACTION_GENERATION or
// TASK_GENERATION) that failed for good with cause, a timeout included: a goal that is still
// draft or processing becomes failed, and a local notification says why (seed 000's
// FAILED/TIMEOUT state, seed 001's UpdateGoalStatusFailed and SendFailureNotification). A goal
// that already is active, partial or failed keeps its status and gets no second notification.
// It reports whether the goal became failed.
func (s *Service) GenerationFailed(ctx context.Context, goalID int64, typ string, cause error) bool {
	if goalID == 0 {
		return false
	}
	ctx = context.WithoutCancel(ctx)
	title, failed, err := s.Goals.FailGoal(ctx, goalID)
	if err != nil || !failed {
		return false
	}
	why := "生成に失敗しました。"
	if je := job.AsError(cause); je != nil {
		switch {
		case je.ErrorName() == "States.Timeout" || je.Code == job.E011:
			why = "処理時間が制限を超えました。"
		case je.MessageJa != "":
			why = fmt.Sprintf("生成に失敗しました（%s: %s）", je.Code, je.MessageJa)
		default:
			why = fmt.Sprintf("生成に失敗しました（%s: %s）", je.Code, je.Message)
		}
	}
	name := generationNames[typ]
	if name == "" {
		name = "生成に失敗しました"
	}
	s.notify(ctx, goalID, "failed", name, fmt.Sprintf("「%s」: %s", title, why))
	return true
}

// EndGeneration records how an attempt of goal generation typ for goalID ended, err being what
// the job returns: a failure for good (EndsForGood) fails the goal (GenerationFailed); a success
// turns a failed goal that has no tasks yet back to draft, so a retry that worked clears the
// failure. The job type's handlers call it, and so does the app when the job runs as a workflow;
// a workflow's function job (a child, not an AI job type) leaves it to its workflow.
func (s *Service) EndGeneration(ctx context.Context, goalID int64, typ string, err error) {
	if goalID == 0 {
		return
	}
	if info, ok := job.InfoFrom(ctx); ok && !isAIType(info.Type) && info.ParentID != 0 {
		return
	}
	if errors.Is(context.Cause(ctx), job.ErrUserCancel) {
		// Cancelled by the user: the goal is no longer being worked on, nor did it fail. What was
		// generated stays; the goal is active when it has tasks, else a draft to generate again.
		_ = s.Goals.ReleaseGoal(context.WithoutCancel(ctx), goalID)
		return
	}
	if err == nil {
		if typ != TypeTasks {
			_ = s.Goals.ClearGoalFailure(context.WithoutCancel(ctx), goalID)
		}
		return
	}
	if je := job.AsError(err); je != nil && je.ErrorName() == "ValidationError" {
		return // the input was refused before anything was generated
	}
	if EndsForGood(ctx, err) {
		s.GenerationFailed(ctx, goalID, typ, err)
	}
}

// LinkGoalJob records the job that works on a goal.
func (s *Service) LinkGoalJob(ctx context.Context, goalID, jobID int64) error {
	return dbErr(s.Goals.LinkGoalJob(ctx, goalID, jobID), "the goal")
}

// SaveTasks replaces the tasks of one action in one transaction: all of them are saved or none
// (seed 001, property 5), and saving again never duplicates them. It returns the new task ids.
func (s *Service) SaveTasks(ctx context.Context, actionID, jobID int64, ts []GenTask) ([]int64, error) {
	ids, err := s.Goals.SaveTasks(ctx, actionID, jobID, ts)
	if errors.Is(err, ErrActionNotFound) {
		return nil, badInput("action %d does not exist", actionID)
	}
	if err != nil {
		return nil, dbErr(err, "the tasks")
	}
	return ids, nil
}

func (s *Service) markActionFailed(ctx context.Context, actionID int64) {
	_ = s.Goals.MarkActionFailed(context.WithoutCancel(ctx), actionID)
}

// Notification is a local notification (seed 001 sends SNS on partial success or failure).
type Notification struct {
	ID      int64  `json:"id"`
	JobID   int64  `json:"job_id"`
	GoalID  int64  `json:"goal_id"`
	Level   string `json:"level"`
	Title   string `json:"title"`
	Message string `json:"message"`
}

func (s *Service) notify(ctx context.Context, goalID int64, level, title, message string) {
	_ = s.Notifier.Notify(context.WithoutCancel(ctx), Notification{JobID: s.ownerJob(ctx), GoalID: goalID,
		Level: level, Title: title, Message: message}, s.now())
}

// Notifications lists the local notifications, newest first.
func (s *Service) Notifications(ctx context.Context) ([]Notification, error) {
	return s.Notifier.Notifications(ctx)
}

// ListGoals lists every goal without its chart, newest first.
func (s *Service) ListGoals(ctx context.Context) ([]Goal, error) {
	gs, err := s.Goals.ListGoals(ctx)
	return gs, dbErr(err, "the goals")
}
