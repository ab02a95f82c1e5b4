package ui

import (
	"sort"
	"time"
)

// The time-left estimate of a job under way. Long work (OCR of a scanned PDF page by page, a
// long conversion, a big CSV import) reports its progress as it goes; from the pace of the
// latest advances the window says about how long is left, beside the job's message in the list
// and under its bar in the detail. An estimate is shown only when it can be vouched for:
//   - once the job has advanced several times over several seconds (a short job never shows
//     one), measured from its first rise: the time it stood still before (reading the file
//     before the first page is read) is not taken for its pace;
//   - not while the job stands still for longer than its pace explains (a stalled job gets no
//     countdown that keeps going down, or stays on "almost done");
//   - not once the time it said has run out without the job ending;
//   - not after its progress went backwards (a job started again after a restart): the pace is
//     measured again from there.
const (
	// etaMinAdvances is how many rises of progress after the first the estimate needs before it
	// is shown (rises less than etaStep apart count as one).
	etaMinAdvances = 3
	etaStep        = time.Second
	// etaMinSpan is how long those rises must have taken at least.
	etaMinSpan = 5 * time.Second
	// etaWindow is how many of the latest rises the pace is measured over.
	etaWindow = 30
	// etaStallMin is the shortest standstill after which the estimate goes; a job whose rises
	// come further apart keeps it for three of its usual gaps.
	etaStallMin = 15 * time.Second
	// etaMax is the longest estimate shown: beyond it the pace says nothing.
	etaMax = 48 * time.Hour
	// etaBack is how far progress must fall to count as going backwards; less is taken for
	// no move.
	etaBack = 0.5
	// etaTracked is how many jobs stay followed when more than twice as many are.
	etaTracked = 4096
)

// progressMark is a job's progress at one moment.
type progressMark struct {
	at       time.Time
	progress float64
}

// progressTrack is what the estimator keeps of one job: where it stood when first seen (or
// when it went back), then its rises (at least etaStep apart but for the latest), oldest first,
// at most etaWindow+1 of them.
type progressTrack struct {
	base  progressMark
	marks []progressMark
	seen  time.Time // when it was last observed (to drop the least recent when too many)
	shown string    // the text the window shows for it, as of the last tick
}

// timeLeft estimates the time left of jobs under way from their progress reports. Its clock is
// given (time.Now in the window, a fake one in tests). UI goroutine only.
type timeLeft struct {
	now  func() time.Time
	jobs map[int64]*progressTrack
}

func newTimeLeft(now func() time.Time) *timeLeft {
	return &timeLeft{now: now, jobs: map[int64]*progressTrack{}}
}

// observe notes that job id, under way, stands at progress (0–100) now.
func (e *timeLeft) observe(id int64, progress float64) { e.observeAt(id, progress, e.now()) }

// observeAt notes that job id stands at progress at now (the estimator's clock, read once for a
// whole update).
func (e *timeLeft) observeAt(id int64, progress float64, now time.Time) {
	t, ok := e.jobs[id]
	if !ok {
		if len(e.jobs) >= 2*etaTracked {
			e.dropOldest()
		}
		t = &progressTrack{}
		e.jobs[id] = t
	}
	t.seen = now
	n := len(t.marks)
	last := t.base
	if n > 0 {
		last = t.marks[n-1]
	}
	switch {
	case !ok || progress < last.progress-etaBack:
		// First seen, or gone backwards (started again): its pace is measured anew.
		t.base, t.marks = progressMark{now, progress}, t.marks[:0]
	case progress > last.progress:
		// Rises closer together than etaStep share a mark (the latest of them), so that the
		// marks of a job reporting ten times a second still reach back over seconds.
		if n >= 2 && t.marks[n-1].at.Sub(t.marks[n-2].at) < etaStep {
			t.marks[n-1] = progressMark{now, progress}
			return
		}
		t.marks = append(t.marks, progressMark{now, progress})
		if len(t.marks) > etaWindow+1 {
			t.marks = append(t.marks[:0], t.marks[len(t.marks)-etaWindow-1:]...)
		}
	}
}

// follows reports whether job id is followed.
func (e *timeLeft) follows(id int64) bool {
	_, ok := e.jobs[id]
	return ok
}

// forget stops following job id (it ended, waits again, or is gone).
func (e *timeLeft) forget(id int64) { delete(e.jobs, id) }

// dropOldest forgets all but the etaTracked jobs observed most recently (at once, so that
// thousands of jobs under way cost a sort now and then, not a search per report).
func (e *timeLeft) dropOldest() {
	ids := make([]int64, 0, len(e.jobs))
	for id := range e.jobs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return e.jobs[ids[a]].seen.After(e.jobs[ids[b]].seen) })
	for _, id := range ids[min(etaTracked, len(ids)):] {
		delete(e.jobs, id)
	}
}

// estimate is about how long job id still takes, and whether that can be said now.
func (e *timeLeft) estimate(id int64) (time.Duration, bool) {
	t, ok := e.jobs[id]
	if !ok || len(t.marks) < etaMinAdvances+1 { // the first rise and etaMinAdvances more
		return 0, false
	}
	first, last := t.marks[0], t.marks[len(t.marks)-1]
	span := last.at.Sub(first.at)
	gain := last.progress - first.progress
	if span < etaMinSpan || gain <= 0 || last.progress >= 100 {
		return 0, false
	}
	since := e.now().Sub(last.at)
	gap := span / time.Duration(len(t.marks)-1) // the usual time between two rises
	if since > max(etaStallMin, 3*gap) {
		return 0, false // it stands still for longer than its pace explains
	}
	left := time.Duration(float64(span)*(100-last.progress)/gain) - since
	if left <= 0 || left > etaMax {
		return 0, false // its time ran out without it ending, or the pace says nothing
	}
	return left, true
}

// text is the estimate of job id as the window says it ("残り約 3 分", "about 3 min left"), or
// "" when none can be given.
func (e *timeLeft) text(tr *translator, id int64) string {
	d, ok := e.estimate(id)
	if !ok {
		return ""
	}
	return timeLeftText(tr, d)
}

// tick works out every followed job's text again and reports whether one changed since the
// last tick (the window then redraws the list and the detail).
func (e *timeLeft) tick(tr *translator) bool {
	changed := false
	for id, t := range e.jobs {
		if s := e.text(tr, id); s != t.shown {
			t.shown, changed = s, true
		}
	}
	return changed
}

// timeLeftText says d as a person reads a time left: "almost done" under ten seconds, tens of
// seconds under a minute, whole minutes under an hour, hours and tens of minutes beyond.
func timeLeftText(tr *translator, d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return tr.T("eta.soon")
	case d < time.Minute:
		s := int((d + 9*time.Second) / (10 * time.Second) * 10)
		if s >= 60 {
			return tr.T("eta.left", tr.T("eta.minutes", 1))
		}
		return tr.T("eta.left", tr.T("eta.seconds", s))
	case d < time.Hour-30*time.Second:
		return tr.T("eta.left", tr.T("eta.minutes", int(d.Round(time.Minute)/time.Minute)))
	}
	d = d.Round(10 * time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	if m == 0 {
		return tr.T("eta.left", tr.T("eta.hours", h))
	}
	return tr.T("eta.left", tr.T("eta.hours_minutes", h, m))
}
