package ui

import (
	"context"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// listQuery is the list's search beside the status filter: a text (part of the name, or a job
// number), a job type and how recent (a day count; 0: any time). The zero query shows every job.
type listQuery struct {
	text string
	typ  string
	days int
}

// active reports whether the query narrows the list.
func (q listQuery) active() bool { return q.text != "" || q.typ != "" || q.days != 0 }

// since is the earliest creation time the query keeps (zero: any).
func (q listQuery) since() time.Time {
	if q.days == 0 {
		return time.Time{}
	}
	y, m, d := time.Now().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.Local).AddDate(0, 0, 1-q.days)
}

// matches reports whether j passes the query (as the database's search decides it).
func (q listQuery) matches(j job.Job) bool {
	if q.typ != "" && j.Type != q.typ {
		return false
	}
	if s := q.since(); !s.IsZero() && j.CreatedAt.Before(s) {
		return false
	}
	if t := strings.TrimSpace(q.text); t != "" {
		if n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimPrefix(t, "#"), ",", ""), 10, 64); err == nil && n > 0 && n == j.Number {
			return true
		}
		return strings.Contains(strings.ToLower(j.Name), strings.ToLower(t))
	}
	return true
}

// fetch reads one page of the list: List without a query, Search with one.
func (u *UI) fetch(ctx context.Context, s job.Status, q listQuery, n int, before int64) ([]job.Job, error) {
	f := listFilter(s, n, before)
	f.Type = q.typ
	if !q.active() {
		return u.app.List(ctx, f)
	}
	return u.app.Search(ctx, app.SearchFilter{ListFilter: f, Text: q.text, Since: q.since()})
}

// setQuery shows only jobs q keeps and rereads the list.
func (u *UI) setQuery(q listQuery) {
	if u.model.query == q {
		return
	}
	u.model.query = q
	u.model.replace(nil, false)
	u.noteLoaded()
	u.refreshList()
	go u.reload()
}

// dayChoices are the date filter's spans in days (0: any time).
var dayChoices = []int{0, 1, 7, 30}

// buildSearchBar is the search box with the type and date filters, above the status filter.
func (u *UI) buildSearchBar() fyne.CanvasObject {
	tr := u.tr
	u.search = widget.NewEntry()
	u.search.SetPlaceHolder(tr.T("search.placeholder"))
	u.search.SetText(u.model.query.text)
	u.search.OnChanged = func(s string) {
		q := u.model.query
		q.text = strings.TrimSpace(s)
		u.setQuery(q)
	}
	types := []string{tr.T("search.all_types")}
	for _, t := range app.Types() {
		types = append(types, u.typeText(t))
	}
	u.typeSel = newSelect(u.tr, types, nil)
	u.typeSel.SetSelected(types[0])
	for i, t := range app.Types() {
		if t == u.model.query.typ {
			u.typeSel.SetSelected(types[i+1])
		}
	}
	u.typeSel.OnChanged = func(string) {
		q := u.model.query
		q.typ = ""
		if i := u.typeSel.SelectedIndex(); i > 0 {
			q.typ = app.Types()[i-1]
		}
		u.setQuery(q)
	}
	days := make([]string, len(dayChoices))
	chosen := 0
	for i, d := range dayChoices {
		days[i] = tr.T("search.days." + strconv.Itoa(d))
		if d == u.model.query.days {
			chosen = i
		}
	}
	u.dateSel = newSelect(u.tr, days, nil)
	u.dateSel.SetSelectedIndex(chosen)
	u.dateSel.OnChanged = func(string) {
		q := u.model.query
		if i := u.dateSel.SelectedIndex(); i >= 0 {
			q.days = dayChoices[i]
		}
		u.setQuery(q)
	}
	return container.NewBorder(nil, nil, widget.NewIcon(theme.SearchIcon()), container.NewHBox(u.typeSel, u.dateSel), u.search)
}

// maxCounted bounds how many of a search's matches are read to count them by status.
const maxCounted = 20000

// listCounts are the counts beside the status filter: of every job, or, while a search narrows
// the list, of the jobs it keeps (the chips said 3 while the list showed 1).
func (u *UI) listCounts(ctx context.Context) (map[job.Status]int, error) {
	all, err := u.app.Counts(ctx)
	u.mu.Lock()
	q := u.loadQuery
	if err == nil {
		u.allCounts = all
	}
	u.mu.Unlock()
	if !q.active() || err != nil {
		return all, err
	}
	jobs, err := u.fetch(ctx, "", q, maxCounted, 0)
	if err != nil {
		return nil, err
	}
	counts := map[job.Status]int{}
	for _, j := range jobs {
		counts[j.Status]++
	}
	return counts, nil
}

// listSource is what the event bridge reads: the service, with the counts of the list's search.
type listSource struct {
	Service
	u *UI
}

// Counts are the counts beside the list (listCounts).
func (s listSource) Counts(ctx context.Context) (map[job.Status]int, error) {
	return s.u.listCounts(ctx)
}

// engineCounts are the counts of every job (the status bar's running and waiting, the tray's, the
// question on closing), whatever the list's search keeps. UI goroutine.
func (u *UI) engineCounts() map[job.Status]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.allCounts == nil {
		return u.model.counts
	}
	return u.allCounts
}
