package aijob

import (
	"context"
	"database/sql"
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
	now := s.now().UnixMilli()
	res, err := s.DB.W.ExecContext(ctx, `INSERT INTO goals(title, description, deadline, created_at, updated_at) VALUES (?,?,?,?,?)`,
		title, description, deadline, now, now)
	if err != nil {
		return 0, dbErr(err, "the goal")
	}
	return res.LastInsertId()
}

// ErrGoalNotFound is returned for a goal id that does not exist.
var ErrGoalNotFound = errors.New("goal not found")

// LoadGoal reads a goal and its whole chart.
func (s *Service) LoadGoal(ctx context.Context, id int64) (Goal, error) {
	var g Goal
	var jobID sql.NullInt64
	err := s.DB.R.QueryRowContext(ctx, `SELECT id, title, description, deadline, status, job_id FROM goals WHERE id=?`, id).
		Scan(&g.ID, &g.Title, &g.Description, &g.Deadline, &g.Status, &jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return g, job.Wrap(job.E014, ErrGoalNotFound, "there is no goal with this id").WithJa("指定された目標が見つかりません。").WithName("ValidationError")
	}
	if err != nil {
		return g, dbErr(err, "the goal")
	}
	g.JobID = jobID.Int64
	rows, err := s.DB.R.QueryContext(ctx, `SELECT id, position, title, description, background, COALESCE(job_id,0) FROM subgoals WHERE goal_id=? ORDER BY position`, id)
	if err != nil {
		return g, dbErr(err, "the sub-goals")
	}
	for rows.Next() {
		var sg Subgoal
		if err := rows.Scan(&sg.ID, &sg.Position, &sg.Title, &sg.Description, &sg.Background, &sg.JobID); err != nil {
			rows.Close()
			return g, dbErr(err, "the sub-goals")
		}
		g.Subgoals = append(g.Subgoals, sg)
	}
	rows.Close()
	byID := map[int64]*Subgoal{}
	for i := range g.Subgoals {
		byID[g.Subgoals[i].ID] = &g.Subgoals[i]
	}
	arows, err := s.DB.R.QueryContext(ctx, `SELECT a.id, a.subgoal_id, a.position, a.title, a.description, a.type, a.status, COALESCE(a.job_id,0)
		FROM goal_actions a JOIN subgoals s ON s.id=a.subgoal_id WHERE s.goal_id=? ORDER BY s.position, a.position`, id)
	if err != nil {
		return g, dbErr(err, "the actions")
	}
	actByID := map[int64][2]int{}
	for arows.Next() {
		var a Action
		if err := arows.Scan(&a.ID, &a.SubgoalID, &a.Position, &a.Title, &a.Description, &a.Type, &a.Status, &a.JobID); err != nil {
			arows.Close()
			return g, dbErr(err, "the actions")
		}
		sg := byID[a.SubgoalID]
		sg.Actions = append(sg.Actions, a)
	}
	arows.Close()
	for si := range g.Subgoals {
		for ai := range g.Subgoals[si].Actions {
			actByID[g.Subgoals[si].Actions[ai].ID] = [2]int{si, ai}
		}
	}
	trows, err := s.DB.R.QueryContext(ctx, `SELECT t.action_id, t.id, t.position, t.title, t.description, t.type, t.estimated_minutes, COALESCE(t.job_id,0)
		FROM goal_tasks t JOIN goal_actions a ON a.id=t.action_id JOIN subgoals s ON s.id=a.subgoal_id WHERE s.goal_id=? ORDER BY t.action_id, t.position`, id)
	if err != nil {
		return g, dbErr(err, "the tasks")
	}
	defer trows.Close()
	for trows.Next() {
		var aid int64
		var t Task
		if err := trows.Scan(&aid, &t.ID, &t.Position, &t.Title, &t.Description, &t.Type, &t.EstimatedMinutes, &t.JobID); err != nil {
			return g, dbErr(err, "the tasks")
		}
		if ix, ok := actByID[aid]; ok {
			a := &g.Subgoals[ix[0]].Actions[ix[1]]
			a.Tasks = append(a.Tasks, t)
		}
	}
	return g, dbErr(trows.Err(), "the tasks")
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
	_, err := s.DB.W.ExecContext(ctx, `UPDATE goals SET status=?, updated_at=? WHERE id=?`, status, s.now().UnixMilli(), id)
	return dbErr(err, "the goal status")
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

// goalHasTasks is an SQL condition on a goals row: some action of the goal has tasks.
const goalHasTasks = `EXISTS (SELECT 1 FROM goal_tasks t JOIN goal_actions a ON a.id=t.action_id
	JOIN subgoals sg ON sg.id=a.subgoal_id WHERE sg.goal_id=goals.id)`

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
	res, err := s.DB.W.ExecContext(ctx, `UPDATE goals SET status='failed', updated_at=? WHERE id=? AND status IN ('draft','processing')`,
		s.now().UnixMilli(), goalID)
	if err != nil {
		return false
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false
	}
	var title string
	_ = s.DB.R.QueryRowContext(ctx, `SELECT title FROM goals WHERE id=?`, goalID).Scan(&title)
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
		_, _ = s.DB.W.ExecContext(context.WithoutCancel(ctx), `UPDATE goals SET status=CASE WHEN `+goalHasTasks+`
			THEN 'active' ELSE 'draft' END, updated_at=? WHERE id=? AND status='processing'`, s.now().UnixMilli(), goalID)
		return
	}
	if err == nil {
		if typ != TypeTasks {
			_, _ = s.DB.W.ExecContext(context.WithoutCancel(ctx), `UPDATE goals SET status='draft', updated_at=? WHERE id=? AND status='failed'
				AND NOT `+goalHasTasks,
				s.now().UnixMilli(), goalID)
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
	_, err := s.DB.W.ExecContext(ctx, `UPDATE goals SET job_id=COALESCE(job_id, ?), updated_at=? WHERE id=?`, jobID, s.now().UnixMilli(), goalID)
	return dbErr(err, "the goal")
}

// saveSubgoals stores a goal's eight sub-goals in one transaction. Without replace, sub-goals
// another job saved meanwhile are kept (and sgs dropped), so two jobs that both found the goal
// empty never replace each other's chart under running work.
func (s *Service) saveSubgoals(ctx context.Context, goalID, jobID int64, sgs []genSubgoal, replace bool) error {
	now := s.now().UnixMilli()
	return dbErr(s.DB.Tx(ctx, func(tx *sql.Tx) error {
		if !replace {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM subgoals WHERE goal_id=?`, goalID).Scan(&n); err != nil || n > 0 {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM subgoals WHERE goal_id=?`, goalID); err != nil {
			return err
		}
		for i, sg := range sgs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO subgoals(goal_id, position, title, description, background, job_id, created_at) VALUES (?,?,?,?,?,?,?)`,
				goalID, i+1, sg.Title, sg.Description, sg.Background, nullID(jobID), now); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE goals SET updated_at=? WHERE id=?`, now, goalID)
		return err
	}), "the sub-goals")
}

// saveActions stores a sub-goal's eight actions in one transaction; without replace, actions
// saved meanwhile by another job are kept.
func (s *Service) saveActions(ctx context.Context, subgoalID, jobID int64, as []genAction, replace bool) error {
	now := s.now().UnixMilli()
	return dbErr(s.DB.Tx(ctx, func(tx *sql.Tx) error {
		if !replace {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM goal_actions WHERE subgoal_id=?`, subgoalID).Scan(&n); err != nil || n > 0 {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM goal_actions WHERE subgoal_id=?`, subgoalID); err != nil {
			return err
		}
		for i, a := range as {
			if _, err := tx.ExecContext(ctx, `INSERT INTO goal_actions(subgoal_id, position, title, description, type, job_id, created_at) VALUES (?,?,?,?,?,?,?)`,
				subgoalID, i+1, a.Title, a.Description, a.Type, nullID(jobID), now); err != nil {
				return err
			}
		}
		return nil
	}), "the actions")
}

// SaveTasks replaces the tasks of one action in one transaction: all of them are saved or none
// (seed 001, property 5), and saving again never duplicates them. It returns the new task ids.
func (s *Service) SaveTasks(ctx context.Context, actionID, jobID int64, ts []GenTask) ([]int64, error) {
	now := s.now().UnixMilli()
	var ids []int64
	err := s.DB.Tx(ctx, func(tx *sql.Tx) error {
		ids = ids[:0]
		if _, err := tx.ExecContext(ctx, `DELETE FROM goal_tasks WHERE action_id=?`, actionID); err != nil {
			return err
		}
		for i, t := range ts {
			if s.saveHook != nil {
				if err := s.saveHook(actionID, i); err != nil {
					return err
				}
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO goal_tasks(action_id, position, title, description, type, estimated_minutes, job_id, created_at)
				VALUES (?,?,?,?,?,?,?,?)`, actionID, i+1, t.Title, t.Description, t.Type, t.EstimatedMinutes, nullID(jobID), now)
			if err != nil {
				return err
			}
			id, _ := res.LastInsertId()
			ids = append(ids, id)
		}
		res, err := tx.ExecContext(ctx, `UPDATE goal_actions SET status='done' WHERE id=?`, actionID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return badInput("action %d does not exist", actionID)
		}
		return nil
	})
	if err != nil {
		return nil, dbErr(err, "the tasks")
	}
	return ids, nil
}

func (s *Service) markActionFailed(ctx context.Context, actionID int64) {
	_, _ = s.DB.W.ExecContext(context.WithoutCancel(ctx), `UPDATE goal_actions SET status='failed' WHERE id=? AND status<>'done'`, actionID)
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
	_, _ = s.DB.W.ExecContext(context.WithoutCancel(ctx), `INSERT INTO ai_notifications(job_id, goal_id, level, title, message, created_at) VALUES (?,?,?,?,?,?)`,
		nullID(s.ownerJob(ctx)), goalID, level, title, message, s.now().UnixMilli())
}

// Notifications lists the local notifications, newest first.
func (s *Service) Notifications(ctx context.Context) ([]Notification, error) {
	rows, err := s.DB.R.QueryContext(ctx, `SELECT id, COALESCE(job_id,0), COALESCE(goal_id,0), level, title, message FROM ai_notifications ORDER BY id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Notification
	for rows.Next() {
		var n Notification
		if err := rows.Scan(&n.ID, &n.JobID, &n.GoalID, &n.Level, &n.Title, &n.Message); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// ListGoals lists every goal without its chart, newest first.
func (s *Service) ListGoals(ctx context.Context) ([]Goal, error) {
	rows, err := s.DB.R.QueryContext(ctx, `SELECT id, title, description, deadline, status, COALESCE(job_id,0) FROM goals ORDER BY id DESC`)
	if err != nil {
		return nil, dbErr(err, "the goals")
	}
	defer rows.Close()
	var out []Goal
	for rows.Next() {
		var g Goal
		if err := rows.Scan(&g.ID, &g.Title, &g.Description, &g.Deadline, &g.Status, &g.JobID); err != nil {
			return nil, dbErr(err, "the goals")
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
