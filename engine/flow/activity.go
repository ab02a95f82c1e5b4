package flow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"jobdesk/engine/flow/asl"
)

// activityChanged wakes everyone waiting on activity tasks (pollers and Task states).
func (e *Engine) activityChanged() {
	e.mu.Lock()
	close(e.actCh)
	e.actCh = make(chan struct{})
	e.mu.Unlock()
}

func (e *Engine) activitySignal() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.actCh
}

// CreateActivity creates an activity; it is idempotent by name.
func (e *Engine) CreateActivity(ctx context.Context, name string) (Activity, error) {
	if !validName(name) {
		return Activity{}, apiErr("InvalidName", "Invalid Name: '%s'", name)
	}
	arn := e.arn("activity", name)
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO flow_activities(arn, name, created_at) VALUES(?,?,?)`, arn, name, time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return Activity{}, err
	}
	return e.describeActivity(ctx, arn)
}

func (e *Engine) describeActivity(ctx context.Context, arn string) (Activity, error) {
	var a Activity
	var at int64
	err := e.db.R.QueryRowContext(ctx, `SELECT arn, name, created_at FROM flow_activities WHERE arn=?`, arn).Scan(&a.ARN, &a.Name, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return a, apiErr("ActivityDoesNotExist", "Activity Does Not Exist: '%s'", arn)
	}
	a.CreatedAt = time.UnixMilli(at)
	return a, err
}

// DeleteActivity deletes an activity.
func (e *Engine) DeleteActivity(ctx context.Context, arn string) error {
	if _, err := e.nameFromARN(arn, "activity"); err != nil {
		return err
	}
	return e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM flow_activities WHERE arn=?`, arn)
		return err
	})
}

// GetActivityTask long-polls up to 60 s (or until ctx ends) for a scheduled task of the
// activity; an empty token means no task.
func (e *Engine) GetActivityTask(ctx context.Context, activityARN, workerName string) (string, json.RawMessage, error) {
	if _, err := e.describeActivity(ctx, activityARN); err != nil {
		return "", nil, err
	}
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		sig := e.activitySignal()
		var token, input string
		err := e.db.Tx(ctx, func(tx *sql.Tx) error {
			err := tx.QueryRowContext(ctx, `SELECT t.token, t.input FROM flow_activity_tasks t JOIN flow_executions x ON x.id=t.exec_id
				WHERE t.activity_arn=? AND t.status='SCHEDULED' AND x.status='RUNNING' ORDER BY t.created_at LIMIT 1`, activityARN).Scan(&token, &input)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			now := time.Now().UnixMilli()
			_, err = tx.ExecContext(ctx, `UPDATE flow_activity_tasks SET status='STARTED', worker=?, heartbeat_at=? WHERE token=?`, workerName, now, token)
			return err
		})
		if err != nil {
			return "", nil, err
		}
		if token != "" {
			e.activityChanged()
			return token, json.RawMessage(input), nil
		}
		select {
		case <-ctx.Done():
			return "", nil, nil
		case <-deadline.C:
			return "", nil, nil
		case <-sig:
		case <-time.After(time.Second): // tasks scheduled by another process
		}
	}
}

func (e *Engine) finishActivityTask(ctx context.Context, token, status string, output json.RawMessage, errName, cause string) error {
	if token == "" || len(token) > 1024 {
		return apiErr("InvalidToken", "Invalid Token: '%s'", token)
	}
	var found bool
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		var st string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM flow_activity_tasks WHERE token=?`, token).Scan(&st); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		found = true
		if st == "TIMED_OUT" {
			return apiErr("TaskTimedOut", "Task Timed Out: '%s'", token)
		}
		if st != "SCHEDULED" && st != "STARTED" {
			return apiErr("TaskDoesNotExist", "Task Does Not Exist: '%s'", token)
		}
		if status == "" { // heartbeat
			_, err := tx.ExecContext(ctx, `UPDATE flow_activity_tasks SET heartbeat_at=? WHERE token=?`, time.Now().UnixMilli(), token)
			return err
		}
		var out any
		if output != nil {
			out = string(output)
		}
		_, err := tx.ExecContext(ctx, `UPDATE flow_activity_tasks SET status=?, output=?, error=?, cause=? WHERE token=?`, status, out, errName, cause, token)
		return err
	})
	if err != nil {
		return err
	}
	if !found {
		return apiErr("InvalidToken", "Invalid Token: '%s'", token)
	}
	e.activityChanged()
	return nil
}

// SendTaskSuccess completes an activity task with output.
func (e *Engine) SendTaskSuccess(ctx context.Context, token string, output json.RawMessage) error {
	out, err := canonical(output)
	if err != nil {
		return apiErr("InvalidOutput", "Invalid Output: '%v'", err)
	}
	return e.finishActivityTask(ctx, token, "SUCCEEDED", json.RawMessage(out), "", "")
}

// SendTaskFailure fails an activity task with an error name and cause.
func (e *Engine) SendTaskFailure(ctx context.Context, token, errName, cause string) error {
	return e.finishActivityTask(ctx, token, "FAILED", nil, errName, cause)
}

// SendTaskHeartbeat records that the worker of an activity task is alive.
func (e *Engine) SendTaskHeartbeat(ctx context.Context, token string) error {
	return e.finishActivityTask(ctx, token, "", nil, "", "")
}

// activity schedules an activity task and waits for a worker to finish it.
func (r *run) activity(ctx context.Context, fr *frame, s *asl.State, arn string, eff any, key string, timeout, heartbeat float64) (any, *asl.Error) {
	if _, err := r.e.describeActivity(ctx, arn); err != nil {
		return nil, fail("States.Runtime", "%v", err)
	}
	token := taskToken(r.dedupKey(key))
	in := str(eff)
	now := time.Now().UnixMilli()
	err := r.e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR IGNORE INTO flow_activity_tasks(token, activity_arn, exec_id, task_key, input, status, created_at)
			VALUES(?,?,?,?,?,'SCHEDULED',?)`, token, arn, r.execID, r.dedupKey(key), in, now)
		return err
	})
	if err != nil {
		return nil, fail("States.Runtime", "the activity task could not be scheduled: %v", err)
	}
	r.e.activityChanged()
	fr.add("ActivityScheduled", map[string]any{"activityScheduledEventDetails": map[string]any{"resource": arn, "input": in,
		"timeoutInSeconds": timeout, "heartbeatInSeconds": heartbeat}})
	started := false
	for {
		sig := r.e.activitySignal()
		var status, worker, errName, cause string
		var output sql.NullString
		var created int64
		var hb sql.NullInt64
		if err := r.e.db.R.QueryRowContext(ctx, `SELECT status, worker, output, error, cause, created_at, heartbeat_at
			FROM flow_activity_tasks WHERE token=?`, token).Scan(&status, &worker, &output, &errName, &cause, &created, &hb); err != nil {
			if ctx.Err() != nil {
				return nil, fail("States.Aborted", "%v", ctx.Err())
			}
			return nil, fail("States.Runtime", "the activity task could not be read: %v", err)
		}
		if status != "SCHEDULED" && !started {
			started = true
			fr.add("ActivityStarted", map[string]any{"activityStartedEventDetails": map[string]any{"workerName": worker}})
		}
		switch status {
		case "SUCCEEDED":
			v, err := asl.Decode([]byte(output.String))
			if err != nil {
				v = map[string]any{}
			}
			fr.add("ActivitySucceeded", map[string]any{"activitySucceededEventDetails": map[string]any{"output": output.String}})
			return v, nil
		case "FAILED":
			if errName == "" {
				errName = "States.TaskFailed"
			}
			fr.add("ActivityFailed", map[string]any{"activityFailedEventDetails": map[string]any{"error": errName, "cause": cause}})
			return nil, &asl.Error{Name: errName, Cause: cause}
		}
		nowT := time.Now()
		wait := time.Second
		expire := func(name, why string) (any, *asl.Error) {
			r.e.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
				_, err := tx.Exec(`UPDATE flow_activity_tasks SET status='TIMED_OUT' WHERE token=?`, token)
				return err
			})
			fr.add("ActivityTimedOut", map[string]any{"activityTimedOutEventDetails": map[string]any{"error": name, "cause": why}})
			return nil, fail(name, "%s", why)
		}
		if timeout > 0 {
			end := time.UnixMilli(created).Add(time.Duration(timeout * float64(time.Second)))
			if !nowT.Before(end) {
				return expire("States.Timeout", "the activity task was not finished within TimeoutSeconds")
			}
			wait = min(wait, end.Sub(nowT))
		}
		if heartbeat > 0 && status == "STARTED" && hb.Valid {
			end := time.UnixMilli(hb.Int64).Add(time.Duration(heartbeat * float64(time.Second)))
			if !nowT.Before(end) {
				return expire("States.HeartbeatTimeout", "the activity worker sent no heartbeat within HeartbeatSeconds")
			}
			wait = min(wait, end.Sub(nowT))
		}
		select {
		case <-ctx.Done():
			return nil, fail("States.Aborted", "%v", context.Cause(ctx))
		case <-sig:
		case <-time.After(wait):
		}
	}
}
