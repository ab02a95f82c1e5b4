package csvsqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
)

// ApplyCloudResult records a CSV execution that ran in the cloud as if it had run on this device:
// the users the cloud left in its users.json (csvjob.UsersFile, read from users; nil when the file
// did not pass) are upserted into csv_users and the execution's csv_imports row is written, in one
// transaction, and sum.UsersChanged counts the users whose values changed. sum is the Summary as
// the device keeps it (result files in the data folder, UsersFile empty).
//
// It is idempotent by execution and job: when that execution is already recorded for jobID
// nothing is written and the Summary recorded the first time is returned, so a result applied
// twice changes nothing (not even the count of changed users).
func (s *Store) ApplyCloudResult(ctx context.Context, jobID int64, sum csvjob.Summary, users io.Reader) (csvjob.Summary, error) {
	if done, ok, err := s.appliedSummary(ctx, sum.ExecutionID, jobID); err != nil || ok {
		return done, err
	}
	var rows *cloudUsers
	if users != nil {
		var err error
		if rows, err = readCloudUsers(users); err != nil {
			return sum, job.Wrap(job.E010, err, "the users the cloud returned cannot be read").
				WithJa("クラウドから戻ったユーザーのファイルを読み取れません。").Transient()
		}
	}
	sum.JobID = jobID
	sum.UsersFile = ""
	now := time.Now().UnixMilli()
	var applied *csvjob.Summary
	err := s.DB.Tx(ctx, func(tx *sql.Tx) error {
		// Checked again inside the transaction: two appliers of the same result never both write.
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT summary FROM csv_imports WHERE execution=? AND job_id=?`, sum.ExecutionID, jobID).Scan(&raw)
		if err == nil {
			var prev csvjob.Summary
			if json.Unmarshal([]byte(raw), &prev) == nil {
				applied = &prev
				return nil
			}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		sum.UsersChanged = 0
		if rows != nil {
			n, err := upsertUsers(ctx, tx, rows, sum.ExecutionID, sum.SHA256, jobID, now)
			if err != nil {
				return err
			}
			if err := checkUsersTable(ctx, tx); err != nil {
				return err
			}
			sum.UsersChanged = n
		}
		b, _ := json.Marshal(sum)
		_, err = tx.ExecContext(ctx, `INSERT INTO csv_imports(execution, job_id, source, sha256, status, rows_total, rows_ok,
			rows_failed, users, users_changed, errors_csv, report_xlsx, summary, created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(execution) DO UPDATE SET job_id=excluded.job_id, source=excluded.source, sha256=excluded.sha256,
			status=excluded.status, rows_total=excluded.rows_total, rows_ok=excluded.rows_ok,
			rows_failed=excluded.rows_failed, users=excluded.users, users_changed=excluded.users_changed,
			errors_csv=excluded.errors_csv, report_xlsx=excluded.report_xlsx, summary=excluded.summary`,
			sum.ExecutionID, jobID, sum.Source, sum.SHA256, sum.Status, sum.TotalRows, sum.SuccessCount, sum.ErrorCount, sum.Users,
			sum.UsersChanged, sum.ErrorsCSV, sum.ReportXLSX, string(b), now)
		return err
	})
	if err != nil {
		return sum, dbError(err, "cloud result")
	}
	if applied != nil {
		return *applied, nil
	}
	return sum, nil
}

// ApplyCloudFailure records that a CSV execution failed in the cloud (its ERROR_HANDLING
// failure, as JSON): a csv_imports row like RecordFailure's, written once.
func (s *Store) ApplyCloudFailure(ctx context.Context, jobID int64, execution, source string, failure json.RawMessage) error {
	_, err := s.DB.W.ExecContext(ctx, `INSERT INTO csv_imports(execution, job_id, source, status, summary, created_at)
		VALUES(?,?,?,?,?,?) ON CONFLICT(execution) DO NOTHING`,
		execution, jobID, source, csvjob.StatusFailed, string(failure), time.Now().UnixMilli())
	if err != nil {
		return dbError(err, "failure record")
	}
	return nil
}

// appliedSummary is the Summary recorded for execution by job jobID, if any.
func (s *Store) appliedSummary(ctx context.Context, execution string, jobID int64) (csvjob.Summary, bool, error) {
	var raw string
	err := s.DB.R.QueryRowContext(ctx, `SELECT summary FROM csv_imports WHERE execution=? AND job_id=?`, execution, jobID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return csvjob.Summary{}, false, nil
	}
	if err != nil {
		return csvjob.Summary{}, false, dbError(err, "read the outcome")
	}
	var sum csvjob.Summary
	if json.Unmarshal([]byte(raw), &sum) != nil || sum.Status == "" {
		return csvjob.Summary{}, false, nil // a failure record, or damaged: apply again
	}
	return sum, true, nil
}

// cloudUsers are the users of a users.json, in the file's (key) order.
type cloudUsers struct {
	ids         []string
	login, post []int64
}

func (u *cloudUsers) Len() int { return len(u.ids) }

func (u *cloudUsers) User(i int) ([]byte, int64, int64) {
	return []byte(u.ids[i]), u.login[i], u.post[i]
}

// readCloudUsers reads a users.json ({"columns": […], "users": [[id, login, post], …], …}) as
// a stream, one user at a time.
func readCloudUsers(r io.Reader) (*cloudUsers, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("users file: not a JSON object")
	}
	u := &cloudUsers{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if t != "users" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, fmt.Errorf("users file: users is not a list")
		}
		for dec.More() {
			var row [3]json.Number
			var id string
			var raw [3]json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(raw[0], &id); err != nil {
				return nil, fmt.Errorf("users file: a user id is not text: %w", err)
			}
			for k := 1; k < 3; k++ {
				if err := json.Unmarshal(raw[k], &row[k]); err != nil {
					return nil, fmt.Errorf("users file: a count is not a number: %w", err)
				}
			}
			login, err1 := row[1].Int64()
			post, err2 := row[2].Int64()
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("users file: %w", err)
			}
			u.ids = append(u.ids, id)
			u.login = append(u.login, login)
			u.post = append(u.post, post)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	}
	return u, nil
}
