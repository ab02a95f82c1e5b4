package app

import (
	"context"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// SearchFilter is the window's list query: a ListFilter plus the search box's text (a part of
// the name, or a job number) and the creation span of the date filter.
type SearchFilter struct {
	ListFilter
	Text         string
	Since, Until time.Time // zero: no limit
}

// Search returns the jobs f selects, newest first (List with text and dates).
func (a *App) Search(ctx context.Context, f SearchFilter) ([]job.Job, error) {
	l := f.ListFilter
	return a.queue.SearchJobs(ctx, queue.Search{Filter: queue.Filter{Status: l.Status, Type: l.Type, ParentID: l.ParentID,
		TopLevel: l.TopLevel, Limit: l.Limit, BeforeID: l.BeforeID}, Text: f.Text, Since: f.Since, Until: f.Until})
}
