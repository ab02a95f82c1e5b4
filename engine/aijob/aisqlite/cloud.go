package aisqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"jobdesk/engine/aijob"
)

// CloudResult is what an AI job that ran in the cloud brings home (sync/cloudjobs reads it from
// the cloud's aiblob objects).
type CloudResult struct {
	// Goal, when set, is the goal as the cloud's generation left it: its status and its whole
	// tree (sub-goals, actions, tasks) under the cloud's ids, each row's JobID the job that
	// made it on this device.
	Goal *aijob.Goal
	// Usage are the model calls made for the job; they are recorded under the job's id.
	Usage []aijob.UsageRecord
	// Eligibility, when set, is the eligibility the cloud extracted, cached here under its
	// content hash as a device run caches it.
	Eligibility *CloudEligibility
}

// CloudEligibility is an eligibility cache entry made in the cloud.
type CloudEligibility struct {
	Hash  string
	Entry aijob.CachedEligibility
}

// ApplyCloudResult applies the results of cloud job jobID in one transaction, once: a job
// already applied changes nothing (applied reports false). The goal's tree replaces the one on
// this device, keeping the cloud's ids, so the next generation (here or in the cloud) names the
// same sub-goals and actions.
func (st *Store) ApplyCloudResult(ctx context.Context, jobID int64, r CloudResult) (applied bool, err error) {
	now := nowMs()
	err = st.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO ai_cloud_results(job_id, applied_at) VALUES (?,?) ON CONFLICT(job_id) DO NOTHING`, jobID, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		applied = true
		if r.Goal != nil {
			if err := applyGoal(ctx, tx, *r.Goal, now); err != nil {
				return err
			}
		}
		for _, u := range r.Usage {
			if err := insertUsage(ctx, tx, jobID, u); err != nil {
				return err
			}
		}
		if e := r.Eligibility; e != nil {
			b, err := json.Marshal(e.Entry.Eligibility)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO eligibility_cache(content_hash, result, level, created_at) VALUES (?,?,?,?)
				ON CONFLICT(content_hash) DO UPDATE SET result=excluded.result, level=excluded.level, created_at=excluded.created_at`,
				e.Hash, string(b), e.Entry.Level, e.Entry.At.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
	return applied, err
}

// applyGoal replaces goal g's tree with g's.
func applyGoal(ctx context.Context, tx *sql.Tx, g aijob.Goal, now int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE goals SET status=?, job_id=COALESCE(job_id, ?), updated_at=? WHERE id=?`, g.Status, nullID(g.JobID), now, g.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO goals(id, title, description, deadline, status, job_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)`,
			g.ID, g.Title, g.Description, g.Deadline, g.Status, nullID(g.JobID), now, now); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM goal_tasks WHERE action_id IN (SELECT a.id FROM goal_actions a JOIN subgoals s ON s.id=a.subgoal_id WHERE s.goal_id=?)`,
		`DELETE FROM goal_actions WHERE subgoal_id IN (SELECT id FROM subgoals WHERE goal_id=?)`,
		`DELETE FROM subgoals WHERE goal_id=?`,
	} {
		if _, err := tx.ExecContext(ctx, q, g.ID); err != nil {
			return err
		}
	}
	for _, sg := range g.Subgoals {
		if _, err := tx.ExecContext(ctx, `INSERT INTO subgoals(id, goal_id, position, title, description, background, job_id, created_at) VALUES (?,?,?,?,?,?,?,?)`,
			sg.ID, g.ID, sg.Position, sg.Title, sg.Description, sg.Background, nullID(sg.JobID), now); err != nil {
			return err
		}
		for _, a := range sg.Actions {
			status := a.Status
			if status == "" {
				status = "pending"
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO goal_actions(id, subgoal_id, position, title, description, type, status, job_id, created_at) VALUES (?,?,?,?,?,?,?,?,?)`,
				a.ID, sg.ID, a.Position, a.Title, a.Description, a.Type, status, nullID(a.JobID), now); err != nil {
				return err
			}
			for _, t := range a.Tasks {
				if _, err := tx.ExecContext(ctx, `INSERT INTO goal_tasks(id, action_id, position, title, description, type, estimated_minutes, job_id, created_at)
					VALUES (?,?,?,?,?,?,?,?,?)`, t.ID, a.ID, t.Position, t.Title, t.Description, t.Type, t.EstimatedMinutes, nullID(t.JobID), now); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
