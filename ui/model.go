package ui

import (
	"sort"

	"jobdesk/engine/job"
)

// pageSize is how many jobs the list reads at a time; scrolling near the end reads the next page.
const pageSize = 500

// jobModel is what the job list shows: the loaded top-level jobs of the current filter, newest
// first, with an index by id. Only the UI goroutine touches it; the event loop prepares updates
// elsewhere and hands them over through fyne.Do.
type jobModel struct {
	filter job.Status // "" for every status
	query  listQuery  // the search box and the type and date filters
	rows   []job.Job
	index  map[int64]int
	more   bool // older jobs exist beyond the loaded ones
	counts map[job.Status]int
	// peak is the highest progress shown for each job under way: a job that starts again after
	// JobDesk restarted (or its lease was released) reports from the beginning, and the window
	// holds what it showed instead of jumping back (34 % → 5 %) until the job passes it.
	peak map[int64]float64
}

func newJobModel() *jobModel {
	return &jobModel{index: map[int64]int{}, counts: map[job.Status]int{}, peak: map[int64]float64{}}
}

// matches reports whether j belongs in the list under the current filter.
func (m *jobModel) matches(j job.Job) bool {
	return j.ParentID == 0 && (m.filter == "" || j.Status == m.filter) && m.query.matches(j)
}

// reindex rebuilds the id index after rows changed shape.
func (m *jobModel) reindex() {
	clear(m.index)
	for i, j := range m.rows {
		m.index[j.ID] = i
	}
}

// replace sets the loaded rows (a fresh read of the first len(rows) jobs); more says whether
// older jobs remain unread.
func (m *jobModel) replace(rows []job.Job, more bool) {
	for i := range rows {
		m.hold(&rows[i])
	}
	m.rows = rows
	m.more = more
	m.reindex()
}

// appendPage adds an older page read after the last loaded job.
func (m *jobModel) appendPage(rows []job.Job, more bool) {
	for _, j := range rows {
		if _, dup := m.index[j.ID]; dup || !m.matches(j) {
			continue
		}
		m.hold(&j)
		m.index[j.ID] = len(m.rows)
		m.rows = append(m.rows, j)
	}
	m.more = more
}

// hold raises j's progress to the highest shown while it is under way, and forgets it once j
// finished (a retry then starts from nothing).
func (m *jobModel) hold(j *job.Job) {
	if j.Status.Final() {
		delete(m.peak, j.ID)
		return
	}
	if p := m.peak[j.ID]; p > j.Progress {
		j.Progress = p
	} else {
		m.peak[j.ID] = j.Progress
	}
}

// lastID is the id of the oldest loaded job (0 when none).
func (m *jobModel) lastID() int64 {
	if len(m.rows) == 0 {
		return 0
	}
	return m.rows[len(m.rows)-1].ID
}

// applyProgress copies a progress report onto its row. It reports whether a loaded row changed.
func (m *jobModel) applyProgress(e job.Event) bool {
	i, ok := m.index[e.JobID]
	if !ok {
		return false
	}
	r := &m.rows[i]
	if r.Status.Final() {
		return false // a late report must not resurrect a finished job
	}
	r.Progress, r.Message = e.Progress, e.Message
	m.hold(r)
	if e.Status == job.Running && r.Status == job.Pending {
		r.Status = job.Running
	}
	return true
}

// applyJob puts a freshly read job in its place: updated when loaded, removed when it no longer
// matches the filter, inserted in id order when it is new and falls within the loaded range. It
// reports whether the rows changed and whether their order or count did.
func (m *jobModel) applyJob(j job.Job) (changed, reshaped bool) {
	m.hold(&j)
	i, loaded := m.index[j.ID]
	switch {
	case loaded && m.matches(j):
		m.rows[i] = j
		return true, false
	case loaded:
		m.rows = append(m.rows[:i], m.rows[i+1:]...)
		m.reindex()
		return true, true
	case !m.matches(j):
		return false, false
	case m.more && j.ID < m.lastID():
		return false, false // it will arrive with its page
	}
	at := sort.Search(len(m.rows), func(k int) bool { return m.rows[k].ID < j.ID })
	m.rows = append(m.rows, job.Job{})
	copy(m.rows[at+1:], m.rows[at:])
	m.rows[at] = j
	m.reindex()
	return true, true
}

// removeJob drops a job that no longer exists (purged).
func (m *jobModel) removeJob(id int64) bool {
	i, ok := m.index[id]
	if !ok {
		return false
	}
	m.rows = append(m.rows[:i], m.rows[i+1:]...)
	m.reindex()
	return true
}

// total is the number of top-level jobs in every status.
func (m *jobModel) total() int {
	n := 0
	for _, c := range m.counts {
		n += c
	}
	return n
}
