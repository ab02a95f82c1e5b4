package ui

import (
	"jobdesk/app"
	"jobdesk/engine/job"
)

// outcomeText says in one line, in the window's language, what became of a finished job: the
// result's own summary or its main figures (resultHeadline), else for a PARTIAL job the summary
// the engine recorded as its message, else its status.
func outcomeText(tr *translator, j job.Job) string {
	if s := resultHeadline(tr, app.SummarizeResult(j)); s != "" {
		return s
	}
	if j.Status == job.Partial && j.Message != "" {
		return j.Message
	}
	return tr.T("job.status." + string(j.Status))
}

// resultHeadline is a result's summary (app.SummarizeResult) in the window's language: its own
// sentence in that language first, then in the other, else its figures, else "".
func resultHeadline(tr *translator, s app.ResultSummary) string {
	return s.Headline(tr.lang, tr.lookup)
}
