package queue

import (
	"context"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/job"
)

// Search is the window's list query with its search box and type and date filters: Filter's
// fields, plus a text that the job's name contains (or its number: "#12", "12" or "#1,234"),
// and the span its creation falls in.
type Search struct {
	Filter
	Text  string    // case-insensitive part of the name, or a job number
	Since time.Time // created at or after (zero: no limit)
	Until time.Time // created before (zero: no limit)
}

// SearchJobs returns the jobs s selects, newest first.
func (q *Queue) SearchJobs(ctx context.Context, s Search) ([]job.Job, error) {
	where := []string{"1=1"}
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	f := s.Filter
	if f.Status != "" {
		add("status=?", string(f.Status))
	}
	if f.Type != "" {
		add("type=?", f.Type)
	}
	if f.ParentID != 0 {
		add("parent_id=? AND parent_id > 0", f.ParentID)
	}
	if f.TopLevel {
		add("parent_id IS NULL")
	}
	if f.BeforeID != 0 {
		add("id<?", f.BeforeID)
	}
	if t := strings.TrimSpace(s.Text); t != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(t)) + "%"
		if n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimPrefix(t, "#"), ",", ""), 10, 64); err == nil && n > 0 {
			add(`(lower(name) LIKE ? ESCAPE '\' OR number=?)`, like, n)
		} else {
			add(`lower(name) LIKE ? ESCAPE '\'`, like)
		}
	}
	if !s.Since.IsZero() {
		add("created_at>=?", s.Since.UnixMilli())
	}
	if !s.Until.IsZero() {
		add("created_at<?", s.Until.UnixMilli())
	}
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	return q.queryJobs(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT ?`, append(args, f.Limit)...)
}
