// Package aisqlite keeps the AI family's state in JobDesk's SQLite database on the device: the
// goals and their 9×9 charts, per-call model usage, the local notifications and the 7-day
// eligibility cache. It implements the interfaces package aijob declares (aijob.State), owns
// their schema (Migrations), and enqueues a goal's generation job in one transaction with the
// check for one already under way. It lives apart from aijob so that the handlers link into a
// Lambda binary without SQLite.
package aisqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"time"

	"jobdesk/engine/aijob"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations is the schema of goals, sub-goals, actions, tasks, model usage, the eligibility
// cache and notifications. Its set keeps the name "aijob" it had when the handlers owned it, so
// databases made before keep their applied versions.
var Migrations = store.MigrationsFrom("aijob", migrationFS, "migrations")

// Store is the AI family's state in one database, which must hold Migrations (and the queue's
// jobs table, which JobParent and TreeUsage read).
type Store struct {
	db *store.DB
	// beforeTaskInsert, when set (tests), runs before each task row is inserted and can fail the
	// save.
	beforeTaskInsert func(actionID int64, i int) error
}

// New returns the Store of db.
func New(db *store.DB) *Store { return &Store{db: db} }

// State returns st as every part of aijob.State.
func (st *Store) State() aijob.State {
	return aijob.State{Goals: st, Usage: st, Notifier: st, Cache: st, Jobs: st}
}

func nowMs() int64 { return time.Now().UnixMilli() }

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// goalHasTasks is an SQL condition on a goals row: some action of the goal has tasks.
const goalHasTasks = `EXISTS (SELECT 1 FROM goal_tasks t JOIN goal_actions a ON a.id=t.action_id
	JOIN subgoals sg ON sg.id=a.subgoal_id WHERE sg.goal_id=goals.id)`

// CreateGoal implements aijob.GoalStore.
func (st *Store) CreateGoal(ctx context.Context, title, description, deadline string) (int64, error) {
	now := nowMs()
	res, err := st.db.W.ExecContext(ctx, `INSERT INTO goals(title, description, deadline, created_at, updated_at) VALUES (?,?,?,?,?)`,
		title, description, deadline, now, now)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// LoadGoal implements aijob.GoalStore.
func (st *Store) LoadGoal(ctx context.Context, id int64) (aijob.Goal, error) {
	var g aijob.Goal
	var jobID sql.NullInt64
	err := st.db.R.QueryRowContext(ctx, `SELECT id, title, description, deadline, status, job_id FROM goals WHERE id=?`, id).
		Scan(&g.ID, &g.Title, &g.Description, &g.Deadline, &g.Status, &jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return g, aijob.ErrGoalNotFound
	}
	if err != nil {
		return g, err
	}
	g.JobID = jobID.Int64
	rows, err := st.db.R.QueryContext(ctx, `SELECT id, position, title, description, background, COALESCE(job_id,0) FROM subgoals WHERE goal_id=? ORDER BY position`, id)
	if err != nil {
		return g, err
	}
	for rows.Next() {
		var sg aijob.Subgoal
		if err := rows.Scan(&sg.ID, &sg.Position, &sg.Title, &sg.Description, &sg.Background, &sg.JobID); err != nil {
			rows.Close()
			return g, err
		}
		g.Subgoals = append(g.Subgoals, sg)
	}
	rows.Close()
	byID := map[int64]*aijob.Subgoal{}
	for i := range g.Subgoals {
		byID[g.Subgoals[i].ID] = &g.Subgoals[i]
	}
	arows, err := st.db.R.QueryContext(ctx, `SELECT a.id, a.subgoal_id, a.position, a.title, a.description, a.type, a.status, COALESCE(a.job_id,0)
		FROM goal_actions a JOIN subgoals s ON s.id=a.subgoal_id WHERE s.goal_id=? ORDER BY s.position, a.position`, id)
	if err != nil {
		return g, err
	}
	for arows.Next() {
		var a aijob.Action
		if err := arows.Scan(&a.ID, &a.SubgoalID, &a.Position, &a.Title, &a.Description, &a.Type, &a.Status, &a.JobID); err != nil {
			arows.Close()
			return g, err
		}
		sg := byID[a.SubgoalID]
		sg.Actions = append(sg.Actions, a)
	}
	arows.Close()
	actByID := map[int64][2]int{}
	for si := range g.Subgoals {
		for ai := range g.Subgoals[si].Actions {
			actByID[g.Subgoals[si].Actions[ai].ID] = [2]int{si, ai}
		}
	}
	trows, err := st.db.R.QueryContext(ctx, `SELECT t.action_id, t.id, t.position, t.title, t.description, t.type, t.estimated_minutes, COALESCE(t.job_id,0)
		FROM goal_tasks t JOIN goal_actions a ON a.id=t.action_id JOIN subgoals s ON s.id=a.subgoal_id WHERE s.goal_id=? ORDER BY t.action_id, t.position`, id)
	if err != nil {
		return g, err
	}
	defer trows.Close()
	for trows.Next() {
		var aid int64
		var t aijob.Task
		if err := trows.Scan(&aid, &t.ID, &t.Position, &t.Title, &t.Description, &t.Type, &t.EstimatedMinutes, &t.JobID); err != nil {
			return g, err
		}
		if ix, ok := actByID[aid]; ok {
			a := &g.Subgoals[ix[0]].Actions[ix[1]]
			a.Tasks = append(a.Tasks, t)
		}
	}
	return g, trows.Err()
}

// ListGoals implements aijob.GoalStore.
func (st *Store) ListGoals(ctx context.Context) ([]aijob.Goal, error) {
	rows, err := st.db.R.QueryContext(ctx, `SELECT id, title, description, deadline, status, COALESCE(job_id,0) FROM goals ORDER BY id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []aijob.Goal
	for rows.Next() {
		var g aijob.Goal
		if err := rows.Scan(&g.ID, &g.Title, &g.Description, &g.Deadline, &g.Status, &g.JobID); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// SetGoalStatus implements aijob.GoalStore.
func (st *Store) SetGoalStatus(ctx context.Context, id int64, status string) error {
	_, err := st.db.W.ExecContext(ctx, `UPDATE goals SET status=?, updated_at=? WHERE id=?`, status, nowMs(), id)
	return err
}

// LinkGoalJob implements aijob.GoalStore.
func (st *Store) LinkGoalJob(ctx context.Context, goalID, jobID int64) error {
	_, err := st.db.W.ExecContext(ctx, `UPDATE goals SET job_id=COALESCE(job_id, ?), updated_at=? WHERE id=?`, jobID, nowMs(), goalID)
	return err
}

// FailGoal implements aijob.GoalStore.
func (st *Store) FailGoal(ctx context.Context, id int64) (string, bool, error) {
	var title string
	err := st.db.W.QueryRowContext(ctx, `UPDATE goals SET status='failed', updated_at=? WHERE id=? AND status IN ('draft','processing')
		RETURNING title`, nowMs(), id).Scan(&title)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return title, err == nil, err
}

// ReleaseGoal implements aijob.GoalStore.
func (st *Store) ReleaseGoal(ctx context.Context, id int64) error {
	_, err := st.db.W.ExecContext(ctx, `UPDATE goals SET status=CASE WHEN `+goalHasTasks+`
		THEN 'active' ELSE 'draft' END, updated_at=? WHERE id=? AND status='processing'`, nowMs(), id)
	return err
}

// ClearGoalFailure implements aijob.GoalStore.
func (st *Store) ClearGoalFailure(ctx context.Context, id int64) error {
	_, err := st.db.W.ExecContext(ctx, `UPDATE goals SET status='draft', updated_at=? WHERE id=? AND status='failed'
		AND NOT `+goalHasTasks, nowMs(), id)
	return err
}

// clearChildren makes room for new rows of parent id in table (its column parent names the
// parent): with replace the old rows are deleted; without, rows already there are kept and ok
// is false, so nothing is written.
func clearChildren(ctx context.Context, tx *sql.Tx, table, parent string, id int64, replace bool) (ok bool, err error) {
	if !replace {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+parent+`=?`, id).Scan(&n); err != nil || n > 0 {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+parent+`=?`, id); err != nil {
		return false, err
	}
	return true, nil
}

// SaveSubgoals implements aijob.GoalStore in one transaction.
func (st *Store) SaveSubgoals(ctx context.Context, goalID, jobID int64, sgs []aijob.GenSubgoal, replace bool) error {
	now := nowMs()
	return st.db.Tx(ctx, func(tx *sql.Tx) error {
		if ok, err := clearChildren(ctx, tx, "subgoals", "goal_id", goalID, replace); !ok {
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
	})
}

// SaveActions implements aijob.GoalStore in one transaction.
func (st *Store) SaveActions(ctx context.Context, subgoalID, jobID int64, as []aijob.GenAction, replace bool) error {
	now := nowMs()
	return st.db.Tx(ctx, func(tx *sql.Tx) error {
		if ok, err := clearChildren(ctx, tx, "goal_actions", "subgoal_id", subgoalID, replace); !ok {
			return err
		}
		for i, a := range as {
			if _, err := tx.ExecContext(ctx, `INSERT INTO goal_actions(subgoal_id, position, title, description, type, job_id, created_at) VALUES (?,?,?,?,?,?,?)`,
				subgoalID, i+1, a.Title, a.Description, a.Type, nullID(jobID), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// SaveTasks implements aijob.GoalStore in one transaction.
func (st *Store) SaveTasks(ctx context.Context, actionID, jobID int64, ts []aijob.GenTask) ([]int64, error) {
	now := nowMs()
	var ids []int64
	err := st.db.Tx(ctx, func(tx *sql.Tx) error {
		ids = ids[:0]
		if _, err := tx.ExecContext(ctx, `DELETE FROM goal_tasks WHERE action_id=?`, actionID); err != nil {
			return err
		}
		for i, t := range ts {
			if st.beforeTaskInsert != nil {
				if err := st.beforeTaskInsert(actionID, i); err != nil {
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
			return aijob.ErrActionNotFound
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// MarkActionFailed implements aijob.GoalStore.
func (st *Store) MarkActionFailed(ctx context.Context, actionID int64) error {
	_, err := st.db.W.ExecContext(ctx, `UPDATE goal_actions SET status='failed' WHERE id=? AND status<>'done'`, actionID)
	return err
}

// RecordUsage implements aijob.UsageLog: one llm_usage row.
func (st *Store) RecordUsage(ctx context.Context, u aijob.UsageRecord) error {
	return insertUsage(ctx, st.db.W, nullID(u.JobID), u)
}

// insertUsage writes u as an llm_usage row of job jobID (an id or nil) through db (the
// database or a transaction).
func insertUsage(ctx context.Context, db interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, jobID any, u aijob.UsageRecord) error {
	var cost any
	if u.CostUSD != nil {
		cost = *u.CostUSD
	}
	ok := 0
	if u.OK {
		ok = 1
	}
	_, err := db.ExecContext(ctx, `INSERT INTO llm_usage(job_id, purpose, provider, model, prompt_tokens,
		completion_tokens, latency_ms, cost_usd, ok, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		jobID, u.Purpose, u.Provider, u.Model, u.PromptTokens, u.CompletionTokens, u.Latency.Milliseconds(), cost, ok, u.At.UnixMilli())
	return err
}

// JobUsage implements aijob.UsageLog.
func (st *Store) JobUsage(ctx context.Context, id int64) (aijob.Usage, error) {
	var u aijob.Usage
	var model *string
	err := st.db.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0),
		COALESCE(SUM(latency_ms),0), SUM(cost_usd), MAX(model) FROM llm_usage WHERE job_id=?`, id).
		Scan(&u.Calls, &u.PromptTokens, &u.CompletionTokens, &u.LatencyMs, &u.CostUSD, &model)
	if model != nil {
		u.Model = *model
	}
	return u, err
}

// TreeUsage sums the model usage of job root and every job below it (a workflow execution's
// function jobs).
func (st *Store) TreeUsage(ctx context.Context, root int64) (aijob.Usage, error) {
	var u aijob.Usage
	var model *string
	err := st.db.R.QueryRowContext(ctx, `WITH RECURSIVE t(id) AS (SELECT ? UNION SELECT j.id FROM jobs j JOIN t ON j.parent_id=t.id AND j.parent_id > 0)
		SELECT COUNT(*), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0), COALESCE(SUM(latency_ms),0), SUM(cost_usd), MAX(model)
		FROM llm_usage WHERE job_id IN (SELECT id FROM t)`, root).
		Scan(&u.Calls, &u.PromptTokens, &u.CompletionTokens, &u.LatencyMs, &u.CostUSD, &model)
	if model != nil {
		u.Model = *model
	}
	return u, err
}

// CallOutcomes implements aijob.UsageLog.
func (st *Store) CallOutcomes(ctx context.Context, from, to time.Time) (failed, total int, err error) {
	err = st.db.R.QueryRowContext(ctx, `SELECT COALESCE(SUM(ok=0),0), COUNT(*) FROM llm_usage WHERE created_at > ? AND created_at <= ?`,
		from.UnixMilli(), to.UnixMilli()).Scan(&failed, &total)
	return failed, total, err
}

// Notify implements aijob.Notifier.
func (st *Store) Notify(ctx context.Context, n aijob.Notification, at time.Time) error {
	_, err := st.db.W.ExecContext(ctx, `INSERT INTO ai_notifications(job_id, goal_id, level, title, message, created_at) VALUES (?,?,?,?,?,?)`,
		nullID(n.JobID), n.GoalID, n.Level, n.Title, n.Message, at.UnixMilli())
	return err
}

// Notifications implements aijob.Notifier.
func (st *Store) Notifications(ctx context.Context) ([]aijob.Notification, error) {
	rows, err := st.db.R.QueryContext(ctx, `SELECT id, COALESCE(job_id,0), COALESCE(goal_id,0), level, title, message FROM ai_notifications ORDER BY id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []aijob.Notification
	for rows.Next() {
		var n aijob.Notification
		if err := rows.Scan(&n.ID, &n.JobID, &n.GoalID, &n.Level, &n.Title, &n.Message); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// AlertsSince implements aijob.Notifier.
func (st *Store) AlertsSince(ctx context.Context, t time.Time) (int, error) {
	var n int
	err := st.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM ai_notifications WHERE level='alert' AND created_at > ?`, t.UnixMilli()).Scan(&n)
	return n, err
}

// CachedEligibility implements aijob.EligibilityCache.
func (st *Store) CachedEligibility(ctx context.Context, hash string) (aijob.CachedEligibility, bool, error) {
	var text string
	var c aijob.CachedEligibility
	var at int64
	err := st.db.R.QueryRowContext(ctx, `SELECT result, level, created_at FROM eligibility_cache WHERE content_hash=?`, hash).Scan(&text, &c.Level, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	if json.Unmarshal([]byte(text), &c.Eligibility) != nil {
		return aijob.CachedEligibility{}, false, nil
	}
	c.At = time.UnixMilli(at)
	return c, true, nil
}

// CacheEligibility implements aijob.EligibilityCache.
func (st *Store) CacheEligibility(ctx context.Context, hash string, c aijob.CachedEligibility) error {
	b, err := json.Marshal(c.Eligibility)
	if err != nil {
		return err
	}
	_, err = st.db.W.ExecContext(ctx, `INSERT INTO eligibility_cache(content_hash, result, level, created_at) VALUES (?,?,?,?)
		ON CONFLICT(content_hash) DO UPDATE SET result=excluded.result, level=excluded.level, created_at=excluded.created_at`,
		hash, string(b), c.Level, c.At.UnixMilli())
	return err
}

// JobParent implements aijob.JobLineage from the queue's jobs table.
func (st *Store) JobParent(ctx context.Context, id int64) (string, int64, error) {
	var typ string
	var parent int64
	err := st.db.R.QueryRowContext(ctx, `SELECT type, COALESCE(parent_id,0) FROM jobs WHERE id=?`, id).Scan(&typ, &parent)
	return typ, parent, err
}
