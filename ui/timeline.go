package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// This file draws a job's history as a timeline: each Step Functions event name in words of
// the window's language with an icon, how long the job stayed in that step, and runs of the
// same event (a waiting AI job is handed back to the queue every few seconds) folded into one
// line with a count. A workflow job's map runs add their counters.

// leaseReleased is the event of a job a worker handed back to the queue unfinished (it waits:
// for an offline AI provider, for its turn).
const leaseReleased = "TaskLeaseReleased"

// timelineEntry is one line of the timeline: an event, or a run of the same event.
type timelineEntry struct {
	Kind    string
	Status  job.Status
	Message string
	// MessageJa is the message in Japanese, when the event's detail carries it (a coded error's
	// message_ja, a result's messageJa).
	MessageJa string
	First     time.Time
	Last      time.Time
	Count     int           // events folded into this line (1: one)
	Took      time.Duration // until the next line's event (0: the last line of a finished job)
}

// foldHistory turns events (oldest first) into timeline lines: consecutive events of the same
// kind and message fold into one. A start that only handed the job back to the queue (an AI job
// waiting for its provider starts and goes back every few seconds) is part of the wait, so the
// whole wait reads as one line. now ends the last line of a job still under way.
func foldHistory(hist []job.Event, now time.Time, finished bool) []timelineEntry {
	var out []timelineEntry
	for i, e := range hist {
		if e.Kind == job.EventStarted && i+1 < len(hist) && hist[i+1].Kind == leaseReleased {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Kind == e.Kind && out[n-1].Message == e.Message {
			out[n-1].Count++
			out[n-1].Last = e.At
			continue
		}
		out = append(out, timelineEntry{Kind: e.Kind, Status: e.Status, Message: e.Message, MessageJa: detailJa(e.Detail),
			First: e.At, Last: e.At, Count: 1})
	}
	for i := range out {
		switch {
		case i+1 < len(out):
			out[i].Took = out[i+1].First.Sub(out[i].First)
		case !finished:
			out[i].Took = now.Sub(out[i].First)
		}
	}
	return out
}

// detailJa is the Japanese message an event's detail carries (a coded error's message_ja, a
// result's messageJa or summaryJa), or "".
func detailJa(detail string) string {
	if !strings.HasPrefix(detail, "{") {
		return ""
	}
	var d struct {
		ErrorJa   string `json:"message_ja"`
		ResultJa  string `json:"messageJa"`
		SummaryJa string `json:"summaryJa"`
	}
	if json.Unmarshal([]byte(detail), &d) != nil {
		return ""
	}
	for _, ja := range []string{d.ErrorJa, d.ResultJa, d.SummaryJa} {
		if ja != "" {
			return ja
		}
	}
	return ""
}

// eventIcon is the icon of an event kind.
func eventIcon(kind string) fyne.Resource {
	switch kind {
	case job.EventSubmitted:
		return theme.ContentAddIcon()
	case job.EventStarted:
		return theme.MediaPlayIcon()
	case job.EventSucceeded:
		return theme.ConfirmIcon()
	case job.EventFailed:
		return theme.ErrorIcon()
	case job.EventRetrying, job.EventRedriven:
		return theme.ViewRefreshIcon()
	case job.EventTimedOut:
		return theme.HistoryIcon()
	case job.EventCancelled:
		return theme.CancelIcon()
	case leaseReleased, job.EventLeaseLost:
		return theme.MediaPauseIcon()
	}
	return theme.InfoIcon()
}

// eventWords is an event kind in words; an unknown kind is "recorded", never its internal name.
func eventWords(tr *translator, kind string) string {
	if tr.Has("event." + kind) {
		return tr.T("event." + kind)
	}
	return tr.T("event.other")
}

// shortDuration writes d for a timeline: "120 ms", "3.2 s", "4 min 05 s", "2 h 03 min".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// timeline draws a job's history (at most maxHistory lines, the latest), folded.
func (d *detailPane) timeline(j job.Job, hist []job.Event) fyne.CanvasObject {
	tr := d.tr
	entries := foldHistory(hist, time.Now(), j.Status.Final())
	if len(entries) > maxHistory {
		entries = entries[len(entries)-maxHistory:]
	}
	box := container.NewVBox()
	for _, e := range entries {
		words := eventWords(tr, e.Kind)
		if e.Count > 1 {
			words += "  " + tr.T("timeline.times", groupInt(int64(e.Count)))
		}
		head := fmt.Sprintf("%s  %s", e.First.Local().Format("01/02 15:04:05"), words)
		if e.Took > 0 {
			head += "  ·  " + shortDuration(e.Took)
		}
		text := head
		if e.Message != "" && !strings.EqualFold(e.Message, string(e.Status)) && !strings.EqualFold(e.Message, "cancelled") {
			if tr.lang == LangJa && e.MessageJa != "" {
				text += "\n" + groupNumbers(e.MessageJa)
			} else {
				text += "\n" + humanMessage(tr, e.Message)
			}
		}
		l := widget.NewLabel(text)
		l.SizeName = theme.SizeNameCaptionText
		l.Wrapping = wrapFor(text)
		l.Selectable = true
		box.Add(container.NewBorder(nil, nil, container.NewVBox(widget.NewIcon(eventIcon(e.Kind))), nil, l))
	}
	if len(entries) == 0 {
		box.Add(widget.NewLabel("—"))
	}
	runs := container.NewVBox()
	box.Add(runs)
	if j.Type == app.TypeExecution || j.ParentID == 0 {
		d.fillMapRuns(j.ID, runs)
	}
	return box
}

// fillMapRuns adds the counters of job id's map runs to box once they are read.
func (d *detailPane) fillMapRuns(id int64, box *fyne.Container) {
	seq := d.gen
	go func() {
		ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
		defer cancel()
		runs, err := d.svc.MapRuns(ctx, id)
		if err != nil || len(runs) == 0 {
			return
		}
		d.do(func() {
			if seq != d.gen {
				return
			}
			for _, r := range runs {
				it := r.Items
				text := d.tr.T("timeline.maprun", groupInt(it.Succeeded), groupInt(it.Failed+it.TimedOut+it.Aborted),
					groupInt(it.Pending+it.Running), groupInt(it.Total))
				l := widget.NewLabel(text)
				l.SizeName = theme.SizeNameCaptionText
				l.Wrapping = wrapFor(text)
				box.Add(container.NewBorder(nil, nil, widget.NewIcon(theme.ListIcon()), nil, l))
			}
			box.Refresh()
		})
	}()
}

// humanMessage is humanMessage in the window's language.
func (u *UI) humanMessage(msg string) string { return humanMessage(u.tr, msg) }

// stepPattern finds a workflow state's name in an engine message: a word of two or more
// capitalised parts ("ProcessUserDataParallel", "CheckValidationResult").
var stepPattern = regexp.MustCompile(`\b[A-Z][a-z]+(?:[A-Z][A-Za-z]*)+\b`)

// itemsPattern is the flow engine's map progress: ": 3 of 10 items".
var itemsPattern = regexp.MustCompile(`: (\d+) of (\d+) items$`)

// countPattern is a conversion's progress through its parts: "page 3 of 12", "OCR: page 3 of
// 12", "sheet 2 of 5", "slide 4 of 9", "entry 7 of 20".
var countPattern = regexp.MustCompile(`^(OCR: page|page|sheet|slide|entry) (\d+) of (\d+)$`)

// statePattern is a workflow state's own progress as the engine passes it on to the job a person
// sees: "Convert: OCR: page 3 of 12".
var statePattern = regexp.MustCompile(`^([A-Z][A-Za-z]+): (.+)$`)

// bytesPattern is a handler's progress through a file: "4096 / 65536 bytes".
var bytesPattern = regexp.MustCompile(`^(\d+) / (\d+) bytes$`)

// humanMessage is an engine message in the window's words: workflow state names become the
// step they stand for, a map's "3 of 10 items" reads in the window's language, and counts get
// digit groups. Messages written for people pass through unchanged.
func humanMessage(tr *translator, msg string) string {
	if tr.Has("msg." + msg) {
		return tr.T("msg." + msg)
	}
	if m := statePattern.FindStringSubmatch(msg); m != nil && tr.Has("step."+m[1]) &&
		(countPattern.MatchString(m[2]) || bytesPattern.MatchString(m[2])) {
		return humanMessage(tr, m[1]) + "：" + humanMessage(tr, m[2])
	}
	if m := bytesPattern.FindStringSubmatch(msg); m != nil {
		return groupNumbers(tr.T("step.bytes", m[1], m[2]))
	}
	if m := countPattern.FindStringSubmatch(msg); m != nil {
		key := "step." + m[1]
		if m[1] == "OCR: page" {
			key = "step.ocr_page"
		}
		return groupNumbers(tr.T(key, m[2], m[3]))
	}
	if m := itemsPattern.FindStringSubmatch(msg); m != nil {
		msg = strings.TrimSuffix(msg, m[0]) + "：" + tr.T("step.items", m[1], m[2])
	}
	if tr.Has("step." + msg) { // a one-word state name: "Route", "Ingest", "Convert"
		return tr.T("step." + msg)
	}
	msg = stepPattern.ReplaceAllStringFunc(msg, func(name string) string {
		if tr.Has("step." + name) {
			return tr.T("step." + name)
		}
		if tr.Has("errname." + name) {
			return tr.T("errname." + name)
		}
		return tr.T("step.other")
	})
	if rest, ok := strings.CutPrefix(msg, "States."); ok {
		msg = tr.T("step.other") + " " + rest
	}
	return groupNumbers(msg)
}
