package ui

import (
	"encoding/json"
	"strconv"
	"strings"

	"jobdesk/engine/job"
)

// resultFigure is one well-known field of a job result that says what the job produced, with
// the translation key of its words ("%s" receives the formatted value).
type resultFigure struct {
	key, words string
	hash       bool // a hex digest, shown shortened
}

// resultFigures are the fields of the families' results worth a place in a one-line outcome,
// in the order they are shown: the checksum's size and digest, a conversion's pages and
// characters, an AI task run's successes and failures. The digest comes last and only when at
// most one figure precedes it.
var resultFigures = []resultFigure{
	{key: "bytes", words: "result.bytes"},
	{key: "page_count", words: "result.pages"},
	{key: "extracted_text_length", words: "result.chars"},
	{key: "success_count", words: "result.succeeded"},
	{key: "failed_count", words: "result.failed"},
	{key: "sha256", words: "result.sha256", hash: true},
}

// outcomeText says in one line, in the window's language, what became of a finished job: the
// result's own summary or its main figures (resultHeadline), else for a PARTIAL job the summary
// the engine recorded as its message, else its status.
func outcomeText(tr *translator, j job.Job) string {
	if s := resultHeadline(tr, j.Result); s != "" {
		return s
	}
	if j.Status == job.Partial && j.Message != "" {
		return j.Message
	}
	return tr.T("job.status." + string(j.Status))
}

// resultHeadline is a result's one-line summary: its "summaryJa" / "summary" sentence (the CSV
// family writes both) in the window's language first, else the figures of resultFigures it
// has, else "". It never fails: a result that is not a JSON object has no headline.
func resultHeadline(tr *translator, raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	keys := []string{"summaryJa", "summary"}
	if tr.lang == LangEn {
		keys = []string{"summary", "summaryJa"}
	}
	for _, k := range keys {
		var s string
		if v, ok := obj[k]; ok && json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != "" {
			return oneLine(s)
		}
	}
	var parts []string
	for _, f := range resultFigures {
		v, ok := obj[f.key]
		if !ok {
			continue
		}
		if f.hash {
			// A digest is what a checksum job is for; beside a conversion's figures it is noise.
			var s string
			if len(parts) <= 1 && json.Unmarshal(v, &s) == nil && s != "" {
				parts = append(parts, tr.T(f.words, clip(oneLine(s), 12)))
			}
			continue
		}
		var n int64
		if json.Unmarshal(v, &n) == nil {
			words := f.words
			if n == 1 && tr.Has(words+".one") {
				words += ".one" // "1 page", not "1 pages"
			}
			parts = append(parts, tr.T(words, groupDigits(n)))
		}
	}
	return strings.Join(parts, " · ")
}

// oneLine joins a text's lines with spaces, for a row that has room for one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// groupDigits writes n with a comma between groups of three digits (1,234,567), as both
// languages write figures.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
