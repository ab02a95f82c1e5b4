package ui

import (
	"testing"

	"jobdesk/engine/job"
)

func ids(m *jobModel) []int64 {
	out := make([]int64, len(m.rows))
	for i, j := range m.rows {
		out[i] = j.ID
	}
	return out
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestModelApplyJob covers where a freshly read job lands: updated in place, inserted in id
// order, removed when it leaves the filter, ignored when it is a child or beyond the loaded page.
func TestModelApplyJob(t *testing.T) {
	loaded := []job.Job{{ID: 9, Status: job.Pending}, {ID: 7, Status: job.Running}, {ID: 4, Status: job.Pending}}
	cases := []struct {
		name      string
		filter    job.Status
		more      bool
		in        job.Job
		wantIDs   []int64
		changed   bool
		reshaped  bool
		wantState job.Status // status of in.ID afterwards, "" when absent
	}{
		{"update in place", "", false, job.Job{ID: 7, Status: job.Succeeded}, []int64{9, 7, 4}, true, false, job.Succeeded},
		{"new newest job", "", false, job.Job{ID: 12, Status: job.Pending}, []int64{12, 9, 7, 4}, true, true, job.Pending},
		{"new job in the middle", "", false, job.Job{ID: 8, Status: job.Pending}, []int64{9, 8, 7, 4}, true, true, job.Pending},
		{"older than the page, more to read", "", true, job.Job{ID: 2, Status: job.Pending}, []int64{9, 7, 4}, false, false, ""},
		{"older, everything loaded", "", false, job.Job{ID: 2, Status: job.Pending}, []int64{9, 7, 4, 2}, true, true, job.Pending},
		{"child job", "", false, job.Job{ID: 10, ParentID: 9, Status: job.Pending}, []int64{9, 7, 4}, false, false, ""},
		{"leaves the filter", job.Pending, false, job.Job{ID: 9, Status: job.Running}, []int64{7, 4}, true, true, ""},
		{"outside the filter", job.Failed, false, job.Job{ID: 11, Status: job.Pending}, []int64{9, 7, 4}, false, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newJobModel()
			m.filter = c.filter
			m.replace(append([]job.Job(nil), loaded...), c.more)
			changed, reshaped := m.applyJob(c.in)
			if changed != c.changed || reshaped != c.reshaped || !equalIDs(ids(m), c.wantIDs) {
				t.Fatalf("changed=%v reshaped=%v ids=%v; want %v %v %v", changed, reshaped, ids(m), c.changed, c.reshaped, c.wantIDs)
			}
			i, ok := m.index[c.in.ID]
			if (c.wantState == "") == ok || ok && m.rows[i].Status != c.wantState {
				t.Fatalf("job %d present=%v", c.in.ID, ok)
			}
			for id, i := range m.index {
				if m.rows[i].ID != id {
					t.Fatalf("index of %d points at %d", id, m.rows[i].ID)
				}
			}
		})
	}
}

// TestModelApplyProgress: progress moves a loaded row forward but never a finished one.
func TestModelApplyProgress(t *testing.T) {
	cases := []struct {
		name   string
		status job.Status
		ev     job.Event
		want   bool
		wantSt job.Status
		wantP  float64
	}{
		{"running", job.Running, job.Event{JobID: 1, Kind: job.EventProgress, Status: job.Running, Progress: 50}, true, job.Running, 50},
		{"first report starts it", job.Pending, job.Event{JobID: 1, Kind: job.EventProgress, Status: job.Running, Progress: 5}, true, job.Running, 5},
		{"late report after success", job.Succeeded, job.Event{JobID: 1, Kind: job.EventProgress, Status: job.Running, Progress: 80}, false, job.Succeeded, 100},
		{"unknown job", job.Running, job.Event{JobID: 2, Kind: job.EventProgress, Progress: 80}, false, job.Running, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newJobModel()
			start := 100.0
			if (c.status == job.Running || c.status == job.Pending) && c.want {
				start = 0
			}
			m.replace([]job.Job{{ID: 1, Status: c.status, Progress: start}}, false)
			if got := m.applyProgress(c.ev); got != c.want || m.rows[0].Status != c.wantSt || m.rows[0].Progress != c.wantP {
				t.Fatalf("applied=%v status=%s progress=%v", got, m.rows[0].Status, m.rows[0].Progress)
			}
		})
	}
}
