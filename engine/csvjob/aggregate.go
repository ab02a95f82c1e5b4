package csvjob

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Statuses of a CSV job's Summary (the seed's ProcessingComplete / FailureComplete words).
const (
	StatusSuccess = "SUCCESS" // every row accepted
	StatusPartial = "PARTIAL" // some rows rejected, within tolerance
	StatusFailed  = "FAILED"  // validation failed or too many rows rejected: table unchanged
)

// Summary is RESULT_AGGREGATION's result and a CSV job's: the job's totals, per-column
// statistics, the table and the result files.
type Summary struct {
	Status                string        `json:"status"`
	ExecutionID           string        `json:"executionId"`
	JobID                 int64         `json:"jobId,omitempty"`
	Source                string        `json:"source"`
	SHA256                string        `json:"sha256"`
	Encoding              string        `json:"encoding"`
	Delimiter             string        `json:"delimiter"`
	TotalRows             int64         `json:"totalRecords"`
	SuccessCount          int64         `json:"successCount"`
	ErrorCount            int64         `json:"errorCount"`
	ErrorRecords          int64         `json:"errorRecords"`
	ErrorsTruncated       bool          `json:"errorsTruncated,omitempty"`
	Users                 int           `json:"users"`
	Key                   string        `json:"key,omitempty"`      // the key column, whose distinct values Users counts
	Entity                string        `json:"entity,omitempty"`   // what one key stands for, in Japanese (社員)
	EntityEn              string        `json:"entityEn,omitempty"` // and in English, singular (employee)
	UsersChanged          int64         `json:"usersChanged"`
	Table                 string        `json:"table"`
	TolerancePercent      float64       `json:"toleratedFailurePercentage"`
	ToleranceCount        int           `json:"toleratedFailureCount"`
	ProcessingTimeSeconds float64       `json:"processingTimeSeconds"`
	Columns               []ColumnStats `json:"columns"`
	ErrorsCSV             string        `json:"errorsCsv"`
	ReportXLSX            string        `json:"reportXlsx"`
	UsersFile             string        `json:"usersFile,omitempty"` // the users, when a store without a table kept them (BlobStore)
	OutputBucket          string        `json:"outputBucket"`
	OutputKey             string        `json:"outputKey"`
	Message               string        `json:"summary"`
	MessageJa             string        `json:"summaryJa"`
}

// merged is the whole file's outcome after merging the staged chunks.
type merged struct {
	users  *users
	stats  []ColumnStats
	errors []RowError
	rows   int64
	failed int64
	errN   int64
}

func mergeStaged(jc *jobContext, pl *plan, staged map[int]*partial) *merged {
	m, _ := mergeEach(jc, pl, func(i int) (*partial, error) { return staged[i], nil })
	return m
}

// mergeEach merges the chunks' partial results in chunk order, asking load for one at a time,
// so only one staged chunk is in memory besides the merged users (a nil partial: the chunk
// failed and all its rows count as rejected).
func mergeEach(jc *jobContext, pl *plan, load func(index int) (*partial, error)) (*merged, error) {
	m := &merged{users: newUsers(pl.rules), stats: make([]ColumnStats, len(pl.s.Columns))}
	for i, c := range pl.s.Columns {
		m.stats[i] = ColumnStats{Name: c.Name, Type: c.Type}
	}
	for _, c := range jc.Chunks {
		part, err := load(c.Index)
		if err != nil {
			return nil, err
		}
		if part != nil && !part.consistent(len(pl.rules)) {
			part = nil // a staged file that does not fit this job's plan counts as a failed chunk
		}
		if part == nil {
			m.rows += c.Rows
			m.failed += c.Rows
			m.errN++
			m.errors = append(m.errors, RowError{Line: c.FirstLine, Kind: KindSystem,
				Reason:   fmt.Sprintf("chunk %d (%d rows from line %d) could not be processed", c.Index, c.Rows, c.FirstLine),
				ReasonJa: fmt.Sprintf("チャンク %d（%d 行目からの %d 行）を処理できませんでした", c.Index, c.FirstLine, c.Rows)})
			continue
		}
		m.rows += part.Rows
		m.failed += part.Failed
		m.errN += part.ErrorCount
		m.errors = append(m.errors, part.Errors...)
		m.users.merge(part)
		for i := range m.stats {
			if i < len(part.Stats) {
				m.stats[i].merge(part.Stats[i])
			}
		}
	}
	m.users.compact()
	m.stats[pl.keyCol].Distinct = int64(m.users.n())
	sort.SliceStable(m.errors, func(i, j int) bool { return m.errors[i].Line < m.errors[j].Line })
	return m, nil
}

func (p *Processor) aggregate(ctx context.Context, execution string, r job.Reporter) (*Summary, error) {
	jc, dir, err := p.loadContext(ctx, execution)
	if err != nil {
		return nil, err
	}
	pl, err := newPlan(jc)
	if err != nil {
		return nil, err
	}
	run := jc.run(dir)
	// The aggregation applies the users and records the Summary in one commit, then clears the
	// staged chunks: delivered again after that commit, it returns what it recorded instead of
	// counting the cleared chunks as lost.
	if s, err := p.recordedSummary(ctx, run); err != nil || s != nil {
		if err != nil {
			return nil, err
		}
		p.Store.ClearStaged(ctx, run)
		_ = p.blobs().Remove(ctx, blob.Join(dir, utf8Copy))
		r.Progress(100, s.Message)
		return s, s.toleranceError()
	}
	r.Progress(90, "combining the results")
	m, err := mergeEach(jc, pl, func(i int) (*partial, error) { return p.staged(ctx, run, i) })
	if err != nil {
		return nil, err
	}
	pct, cnt := jc.Options.tolerance()
	v := &jc.Validation
	s := &Summary{ExecutionID: execution, JobID: jc.JobID, Source: v.Source, SHA256: v.SHA256,
		Encoding: v.Encoding, Delimiter: v.Delimiter, TotalRows: m.rows, SuccessCount: m.rows - m.failed,
		ErrorCount: m.failed, ErrorRecords: m.errN, ErrorsTruncated: int64(len(m.errors)) < m.errN,
		Users: m.users.n(), Key: pl.s.Key, Entity: pl.s.Entity, EntityEn: pl.s.EntityEn, TolerancePercent: pct, ToleranceCount: cnt, Columns: m.stats}
	exceeded := float64(m.failed)*100 > pct*float64(m.rows) || m.failed > int64(cnt)
	if pl.s.WritesTable() {
		s.Table = Table
	}
	s.ErrorsCSV = blob.Join(dir, "errors.csv")
	s.ReportXLSX = blob.Join(dir, "report.xlsx")
	out := ObjectOf(s.ReportXLSX)
	s.OutputBucket, s.OutputKey = out.Bucket, out.Key
	share := 0.0
	if m.rows > 0 {
		share = float64(m.failed) * 100 / float64(m.rows)
	}
	switch {
	case exceeded:
		s.Status = StatusFailed
		s.Table = ""
		s.Message = fmt.Sprintf("%d of %s (%.2f %%) rejected, over the limit of %g %% or %s; the table was not changed.",
			m.failed, count(m.rows, "row"), share, pct, count(int64(cnt), "row"))
		s.MessageJa = fmt.Sprintf("%d 行中 %d 行（%.2f %%）が不正で、許容範囲（%g %% または %d 行）を超えたため、テーブルは変更していません。",
			m.rows, m.failed, share, pct, cnt)
	case m.failed > 0:
		s.Status = StatusPartial
		s.Message = fmt.Sprintf("%d of %s accepted for %s; %s rejected (see the errors file).",
			s.SuccessCount, count(m.rows, "row"), pl.s.CountEn(int64(s.Users)), count(m.failed, "row"))
		s.MessageJa = fmt.Sprintf("%d 行中 %d 行（%s）を反映しました。%d 行は不正のため除外しました（エラーファイル参照）。",
			m.rows, s.SuccessCount, pl.s.CountJa(int64(s.Users)), m.failed)
	default:
		s.Status = StatusSuccess
		s.Message = fmt.Sprintf("%s accepted for %s, none rejected.", count(m.rows, "row"), pl.s.CountEn(int64(s.Users)))
		s.MessageJa = fmt.Sprintf("%d 行すべて（%s）を反映しました。", m.rows, pl.s.CountJa(int64(s.Users)))
	}
	s.ProcessingTimeSeconds = p.now().Sub(jc.StartedAt).Seconds()
	if err := writeErrorsCSV(ctx, p.blobs(), s.ErrorsCSV, m.errors); err != nil {
		return nil, err
	}
	if err := writeReport(ctx, p.blobs(), s.ReportXLSX, s, m.errors); err != nil {
		return nil, err
	}
	r.Progress(95, "writing the table")
	var users *Users
	if !exceeded && s.Table != "" {
		users = newUsersResult(m.users, pl)
	}
	if err := p.Store.ApplyResult(ctx, run, s, users); err != nil {
		return nil, stateError(err, "users")
	}
	p.Store.ClearStaged(ctx, run)
	_ = p.blobs().Remove(ctx, blob.Join(dir, utf8Copy))
	r.Progress(100, s.Message)
	return s, s.toleranceError()
}

// recordedSummary returns the Summary RESULT_AGGREGATION recorded for run's execution, nil when
// it recorded none (ERROR_HANDLING's Failure is no Summary).
func (p *Processor) recordedSummary(ctx context.Context, run Run) (*Summary, error) {
	raw, err := p.Store.Outcome(ctx, run)
	if err != nil {
		return nil, stateError(err, "read the outcome")
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var rec struct {
		Summary
		ErrorType string `json:"errorType"`
	}
	if json.Unmarshal(raw, &rec) != nil || rec.ErrorType != "" || rec.ExecutionID != run.Execution {
		return nil, nil
	}
	switch rec.Status {
	case StatusSuccess, StatusPartial, StatusFailed:
		return &rec.Summary, nil
	}
	return nil, nil
}

// toleranceError is the error of a Summary that FAILED for too many rejected rows, else nil.
func (s *Summary) toleranceError() error {
	if s.Status != StatusFailed {
		return nil
	}
	return job.Errorf(job.E006, "%s", s.Message).WithJa(s.MessageJa).WithName(ErrToleranceExceeded).Permanent()
}

// count spells n with its noun, singular for one: "1 row", "2 rows".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
