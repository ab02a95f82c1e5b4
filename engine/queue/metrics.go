package queue

import (
	"context"
	"sort"
	"time"

	"jobdesk/engine/job"
)

// This file answers the metrics view's questions (seed 000's AsyncProcessingStarted /
// Completed / Failed / Timeout, ProcessingDuration and QueueDepth): read-only aggregates over
// the jobs table, for the jobs a person started (no fan-out children) except where a figure is
// about workflow executions.

// HourCount is how many of one type's jobs started and how they ended, in one hour.
type HourCount struct {
	Hour      time.Time // the hour's start, local time
	Type      string
	Started   int
	Succeeded int // SUCCEEDED and PARTIAL
	Failed    int
	TimedOut  int
}

// WindowStats are the alert rules' figures over the last few minutes.
type WindowStats struct {
	Ended           int           // top-level jobs that ended (cancelled ones not counted)
	Failed          int           // of them FAILED
	TimedOut        int           // of them TIMED_OUT
	AvgDuration     time.Duration // their mean start-to-end time
	WorkflowsEnded  int           // workflow executions that ended
	WorkflowsFailed int           // of them FAILED, TIMED_OUT or aborted by failure
}

// Metrics is the metrics view's data.
type Metrics struct {
	Hours         []HourCount     // since the given time, oldest first
	P50, P90, P99 time.Duration   // start-to-end time of the jobs that ended since then
	ByType        map[string]int  // jobs started since then, by type
	QueueDepth    int             // jobs waiting now (PENDING or RETRYING, top-level)
	Running       int             // jobs running now (top-level)
	Window        WindowStats     // over the window given
	WindowLength  time.Duration   // that window
	Now           time.Time       // when it was read
	Durations     []time.Duration // every ended job's duration since then, shortest first
}

// executionType is the flow engine's job type (engine/flow.TypeExecution; the queue cannot
// import flow).
const executionType = "flow.execution"

// ReadMetrics reads the metrics since since, with the alert window of length window ending now.
func (q *Queue) ReadMetrics(ctx context.Context, since time.Time, window time.Duration) (Metrics, error) {
	now := q.now()
	m := Metrics{ByType: map[string]int{}, WindowLength: window, Now: now}
	rows, err := q.db.R.QueryContext(ctx, `SELECT type, status, created_at, started_at, completed_at FROM jobs
		WHERE parent_id IS NULL AND (created_at >= ?1 OR completed_at >= ?1)`, since.UnixMilli())
	if err != nil {
		return m, err
	}
	defer rows.Close()
	hours := map[[2]any]*HourCount{}
	bucket := func(ms int64, typ string) *HourCount {
		h := time.UnixMilli(ms).Local().Truncate(time.Hour)
		k := [2]any{h.UnixMilli(), typ}
		if hours[k] == nil {
			hours[k] = &HourCount{Hour: h, Type: typ}
		}
		return hours[k]
	}
	winStart := now.Add(-window).UnixMilli()
	var winTotal time.Duration
	for rows.Next() {
		var typ string
		var st job.Status
		var created int64
		var started, completed *int64
		if err := rows.Scan(&typ, &st, &created, &started, &completed); err != nil {
			return m, err
		}
		if created >= since.UnixMilli() {
			bucket(created, typ).Started++
			m.ByType[typ]++
		}
		if completed == nil || *completed < since.UnixMilli() || st == job.Cancelled || !st.Final() {
			continue
		}
		b := bucket(*completed, typ)
		switch st {
		case job.Succeeded, job.Partial:
			b.Succeeded++
		case job.Failed:
			b.Failed++
		case job.TimedOut:
			b.TimedOut++
		}
		var d time.Duration
		if started != nil && *completed >= *started {
			d = time.Duration(*completed-*started) * time.Millisecond
			m.Durations = append(m.Durations, d)
		}
		if *completed >= winStart {
			m.Window.Ended++
			winTotal += d
			switch st {
			case job.Failed:
				m.Window.Failed++
			case job.TimedOut:
				m.Window.TimedOut++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return m, err
	}
	if m.Window.Ended > 0 {
		m.Window.AvgDuration = winTotal / time.Duration(m.Window.Ended)
	}
	for _, h := range hours {
		m.Hours = append(m.Hours, *h)
	}
	sort.Slice(m.Hours, func(i, j int) bool {
		if !m.Hours[i].Hour.Equal(m.Hours[j].Hour) {
			return m.Hours[i].Hour.Before(m.Hours[j].Hour)
		}
		return m.Hours[i].Type < m.Hours[j].Type
	})
	sort.Slice(m.Durations, func(i, j int) bool { return m.Durations[i] < m.Durations[j] })
	m.P50, m.P90, m.P99 = percentile(m.Durations, 50), percentile(m.Durations, 90), percentile(m.Durations, 99)

	err = q.db.R.QueryRowContext(ctx, `SELECT
		coalesce(sum(status IN ('PENDING','RETRYING')), 0), coalesce(sum(status = 'RUNNING'), 0)
		FROM jobs WHERE parent_id IS NULL AND `+liveStatus).Scan(&m.QueueDepth, &m.Running)
	if err != nil {
		return m, err
	}
	err = q.db.R.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(status IN ('FAILED','TIMED_OUT')), 0)
		FROM jobs WHERE type = ? AND completed_at >= ? AND status IN ('SUCCEEDED','PARTIAL','FAILED','TIMED_OUT')`,
		executionType, winStart).Scan(&m.Window.WorkflowsEnded, &m.Window.WorkflowsFailed)
	return m, err
}

// percentile is the p-th percentile (nearest rank) of sorted ds, or 0.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := (len(ds)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return ds[i-1]
}
