package ui

import (
	"testing"
	"time"

	"jobdesk/app"
)

// TestParseDeadline: the ways staff type a date, and what is refused.
func TestParseDeadline(t *testing.T) {
	end := time.Date(2026, 12, 31, 23, 59, 59, 0, time.Local)
	cases := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"", time.Time{}, true},
		{"  ", time.Time{}, true},
		{"2026-12-31", end, true},
		{"2026/12/31", end, true},
		{"20261231", end, true},
		{"2026/2/30", time.Time{}, false},
		{"来月", time.Time{}, false},
	}
	for _, c := range cases {
		got, err := parseDeadline(c.in)
		if (err == nil) != c.ok || !got.Equal(c.want) {
			t.Errorf("%q → %v, %v", c.in, got, err)
		}
	}
}

// FuzzParseDeadline: no input panics.
func FuzzParseDeadline(f *testing.F) {
	f.Add("2026-12-31")
	f.Add("２０２６年")
	f.Fuzz(func(t *testing.T, s string) { parseDeadline(s) })
}

// TestSubmittedGoalIsSelected: a goal just submitted is selected in the list, its detail shown.
func TestSubmittedGoalIsSelected(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.Start()
	u.submitGoal(app.GoalRequest{Title: "来期の売上を伸ばす"})
	h.waitFor("the goal selected", func() bool {
		j, ok := u.selectedJob()
		return ok && j.Name != "" && u.selIdx >= 0 && u.detail.shown != ""
	})
}
