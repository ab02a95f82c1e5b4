package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"jobdesk/app/family"
	"jobdesk/assets"
	"jobdesk/engine/job"
)

// A job's result is JSON its handler wrote. How it reads for people is laid out here from what
// each family says of its own fields (family.ResultView: which matter and in what order, which
// only machines read, which figures say in one line what a job produced): the app merges the
// families' descriptions into one vocabulary, writes values for people and marks the files a
// person may open. A window renders the description in its own language (labels and words are
// translation keys) and names no family's fields.
//
// The fields form one vocabulary rather than one list per job type because a workflow job's
// result is the output of the family workflow it ran: a `jobdesk flow start csv-processing` job
// carries the CSV family's fields and reads like a CSV job.

// ResultView is a finished job's result described for people: its one-line summary and its
// fields as labelled rows, in the order to show them.
type ResultView struct {
	Summary ResultSummary
	// Rows are the result's fields worth showing: well-known ones first in the families'
	// order, the others by name. Empty values are left out.
	Rows []ResultRow
	// More is how many fields were left out beyond MaxResultRows (0: none).
	More int
}

// ResultRow is one field of a result.
type ResultRow struct {
	// LabelKey is the translation key of a well-known field's label ("field.<name>"); empty
	// for any other field, whose Label is its own name in words, and for a label the result
	// itself words (Label and LabelJa).
	LabelKey string
	// Label is a field's name in words ("usersChanged" → "Users changed") when it has no
	// LabelKey; empty for a result that is not a JSON object (one row, just a value). For a
	// label the result words, it is the English one and LabelJa the Japanese one: a CSV
	// layout's count of its own entity ("Employees" / "社員数" rather than Users / ユーザー数).
	Label   string
	LabelJa string
	// Value is the value written for people, the same in every language: figures with digit
	// groups, seconds as a duration, a short list inline, a file by its base name. When
	// ValueKey is set, Value is the %s of that sentence (a count) or empty.
	Value string
	// ValueKey is the translation key of a value written in words: "result.yes", "result.no",
	// or "result.items" (a longer list or an object, counted; Value is the count).
	ValueKey string
	// File is the file the value names, when it exists: a window offers to open it.
	File string
}

// ResultSummary is what a finished job produced, in one line: the result's own sentence when
// it has one, else its main figures.
type ResultSummary struct {
	// Sentence and SentenceJa are the result's own summary in English and Japanese (the CSV
	// family writes both), each on one line; either may be empty.
	Sentence, SentenceJa string
	// Figures are the result's main figures in the order to show them, joined with " · ".
	Figures []ResultFigure
}

// ResultFigure is one figure of a summary.
type ResultFigure struct {
	// WordsKey is the translation key of the figure's words, with %s for Value ("result.pages");
	// when One is set and a WordsKey+".one" sentence exists, that one ("1 page", not "1 pages").
	WordsKey string
	Value    string
	One      bool
}

// MaxResultRows bounds a ResultView: a large result cannot swamp the window.
const MaxResultRows = 24

// resultFields is the vocabulary of result fields merged from every family's ResultView: which
// are shown, in what order, which sum a result up, which only machines read.
type resultFields struct {
	hidden  map[string]bool
	order   []string       // shown fields, in the order shown
	rank    map[string]int // a shown field's place in order
	figures []family.SummaryFigure
	labels  []func(map[string]json.RawMessage, string) (string, string, bool)
	hides   []func(map[string]json.RawMessage, string) bool
}

// runtimeHiddenFields are the fields every result may carry that only machines read (ARNs, ids,
// storage locations, written by the workflow and cloud runtimes) or that a window shows
// elsewhere (the summary, the input file, the status).
var runtimeHiddenFields = []string{
	"executionArn", "executionId", "jobId", "job_id", "outputBucket", "outputKey", "summary", "summaryJa",
	"message", "messageJa", "source", "path", "name", "status",
}

// vocabulary is the families' result views merged, once: hidden fields are the union; each
// part's fields are merged keeping every family's order (a field two families list sits after
// what precedes it in both), families taking turns in newFamilies' order; summary figures in
// families' order with digests last.
var vocabulary = sync.OnceValue(func() resultFields {
	var views []family.ResultView
	for _, f := range newFamilies() {
		if d, ok := f.(family.ResultDescriber); ok {
			views = append(views, d.ResultView())
		}
	}
	return mergeResultViews(views)
})

func mergeResultViews(views []family.ResultView) resultFields {
	v := resultFields{hidden: map[string]bool{}, rank: map[string]int{}}
	for _, k := range runtimeHiddenFields {
		v.hidden[k] = true
	}
	for _, fv := range views {
		for _, k := range fv.Hidden {
			v.hidden[k] = true
		}
		if fv.Label != nil {
			v.labels = append(v.labels, fv.Label)
		}
		if fv.Hide != nil {
			v.hides = append(v.hides, fv.Hide)
		}
	}
	for part := range views[0].Parts() {
		lists := make([][]string, 0, len(views))
		for _, fv := range views {
			lists = append(lists, fv.Parts()[part])
		}
		for _, k := range mergeOrdered(lists) {
			if _, dup := v.rank[k]; !dup {
				v.rank[k] = len(v.order)
				v.order = append(v.order, k)
			}
		}
	}
	var digests []family.SummaryFigure
	seen := map[string]bool{}
	for _, fv := range views {
		for _, f := range fv.Summary {
			switch {
			case seen[f.Field]:
			case f.Digest:
				digests = append(digests, f)
			default:
				v.figures = append(v.figures, f)
			}
			seen[f.Field] = true
		}
	}
	v.figures = append(v.figures, digests...)
	return v
}

// mergeOrdered merges ordered lists into one that keeps each list's order: it takes, from the
// first list whose next field comes next in every list naming it, that field, until all are
// taken. Lists that disagree on an order (never the families' own) are merged list by list.
func mergeOrdered(lists [][]string) []string {
	pos := make([]int, len(lists))
	taken := map[string]bool{}
	var out []string
	next := func(i int) string {
		for pos[i] < len(lists[i]) && taken[lists[i][pos[i]]] {
			pos[i]++
		}
		if pos[i] == len(lists[i]) {
			return ""
		}
		return lists[i][pos[i]]
	}
	ready := func(k string) bool { // every list naming k has taken all it puts before k
		for j := range lists {
			i := slices.Index(lists[j], k)
			if i < 0 {
				continue
			}
			for _, e := range lists[j][:i] {
				if !taken[e] {
					return false
				}
			}
		}
		return true
	}
	for {
		progressed, left := false, false
		for i := range lists {
			k := next(i)
			if k == "" {
				continue
			}
			left = true
			if ready(k) {
				taken[k] = true
				out = append(out, k)
				progressed = true
				break
			}
		}
		if !left {
			return out
		}
		if !progressed { // the lists disagree: take the first list's next field as it stands
			for i := range lists {
				if k := next(i); k != "" {
					taken[k] = true
					out = append(out, k)
					break
				}
			}
		}
	}
}

// Headline is the summary in one line in language lang ("ja" or "en"): the result's own
// sentence in that language first, then in the other, else its figures in words (words gives
// the sentence of a translation key in lang, with %s for the value), else "".
func (s ResultSummary) Headline(lang string, words func(key string) (string, bool)) string {
	first, second := s.SentenceJa, s.Sentence
	if lang == "en" {
		first, second = s.Sentence, s.SentenceJa
	}
	if first != "" {
		return first
	}
	if second != "" {
		return second
	}
	parts := make([]string, 0, len(s.Figures))
	for _, f := range s.Figures {
		w, ok := "", false
		if f.One {
			w, ok = words(f.WordsKey + ".one") // "1 page", not "1 pages"
		}
		if !ok {
			if w, ok = words(f.WordsKey); !ok {
				w = f.WordsKey + " %s"
			}
		}
		parts = append(parts, fmt.Sprintf(w, f.Value))
	}
	return strings.Join(parts, " · ")
}

// englishWords are the window's English sentences, for the command line's summaries.
var englishWords = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	if b, err := assets.Translations("en"); err == nil {
		json.Unmarshal(b, &m)
	}
	return m
})

// OutcomeLine says in one English line what became of job j for the command line, as the
// window's list does: for a job that ended with an error, its code and sentence; for a finished
// one, its result's headline rather than the last progress report (a workflow's "starting the
// document-conversion workflow" is stale once it ended), else its last message; for a job under
// way, its latest message.
func OutcomeLine(j job.Job) string {
	switch {
	case j.Error != nil:
		return string(j.Error.Code) + ": " + j.Error.Message
	case !j.Status.Final():
		return j.Message
	}
	if h := SummarizeResult(j).Headline("en", func(k string) (string, bool) {
		w, ok := englishWords()[k]
		return w, ok
	}); h != "" {
		return h
	}
	return j.Message // what the handler said as it ended ("8 sub-goals generated for goal 1")
}

// ShownMessage is job j's message as the command line prints it in `show` and in JSON (`run
// --wait --json`, `show --json`, `ls --json`): for a finished job, what came of it — its
// error's sentence (the code is in its error), else its result's headline, as OutcomeLine and
// the window's row say it — instead of the last progress report ("ConvertEntries: 11 of 20
// items"), which is stale once the job ended; for a job under way, its latest message.
func ShownMessage(j job.Job) string {
	if j.Status.Final() && j.Error != nil {
		return j.Error.Message
	}
	return OutcomeLine(j)
}

// SummarizeResult says in one line what finished job j produced: its result's own sentences,
// else the figures of summaryFigures it has; the zero ResultSummary when neither (or when the
// result is not a JSON object). It is cheap enough to call for every row of a list.
func SummarizeResult(j job.Job) ResultSummary {
	var obj map[string]json.RawMessage
	if len(j.Result) == 0 || json.Unmarshal(j.Result, &obj) != nil {
		return ResultSummary{}
	}
	return summarize(obj)
}

func summarize(obj map[string]json.RawMessage) ResultSummary {
	var s ResultSummary
	sentence := func(k string) string {
		var v string
		if raw, ok := obj[k]; ok && json.Unmarshal(raw, &v) == nil {
			return oneLine(v)
		}
		return ""
	}
	s.Sentence, s.SentenceJa = sentence("summary"), sentence("summaryJa")
	fields := vocabulary()
	seen := 0 // the figures the result holds so far, this one included, shown or hidden
	for _, f := range fields.figures {
		v, ok := obj[f.Field]
		if !ok {
			continue
		}
		seen++
		if fields.hide(obj, f.Field) {
			continue
		}
		if f.By != "" {
			var by string
			if json.Unmarshal(obj[f.By], &by) == nil && f.ByWords[by] != "" {
				f.Words = f.ByWords[by]
			}
		}
		if f.Digest {
			// A digest is what a checksum job is for; beside a conversion's figures it is noise.
			// (A hidden figure counts: a text conversion does not show its digest for want of pages.)
			var d string
			if seen <= 2 && json.Unmarshal(v, &d) == nil && d != "" {
				s.Figures = append(s.Figures, ResultFigure{WordsKey: f.Words, Value: clip(oneLine(d), 12)})
			}
			continue
		}
		var n int64
		if json.Unmarshal(v, &n) == nil {
			s.Figures = append(s.Figures, ResultFigure{WordsKey: f.Words, Value: GroupDigits(n), One: n == 1})
		}
	}
	return s
}

// DescribeResult lays finished job j's result out for people: its summary, then known fields
// under their label keys (others under their own names in words), figures with digit groups,
// durations as durations, short lists of figures inline and longer lists and objects counted
// rather than dumped, files the job wrote marked for opening. A result that is not a JSON
// object becomes one clipped row. It never fails: any bytes a handler stored describe.
func DescribeResult(j job.Job) ResultView {
	trimmed := strings.TrimSpace(string(j.Result))
	if trimmed == "" || trimmed == "null" {
		return ResultView{}
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(j.Result, &obj) != nil {
		return ResultView{Rows: []ResultRow{{Value: clip(compactJSON(j.Result), 600)}}}
	}
	v := ResultView{Summary: summarize(obj)}
	fields := vocabulary()
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if !fields.hidden[k] && !fields.hide(obj, k) {
			keys = append(keys, k)
		}
	}
	// Known fields first, in the families' order; then the rest by name.
	sort.SliceStable(keys, func(a, b int) bool {
		ia, oka := fields.rank[keys[a]]
		ib, okb := fields.rank[keys[b]]
		switch {
		case oka && okb:
			return ia < ib
		case oka != okb:
			return oka
		}
		return keys[a] < keys[b]
	})
	for _, k := range keys {
		if len(v.Rows) == MaxResultRows {
			v.More = len(keys) - MaxResultRows
			break
		}
		row := resultValue(k, obj[k])
		if row.Value == "" && row.ValueKey == "" {
			continue
		}
		if en, ja, ok := fields.label(obj, k); ok {
			row.Label, row.LabelJa = en, ja
		} else if _, known := fields.rank[k]; known {
			row.LabelKey = "field." + k
		} else {
			row.Label = fieldWords(k)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// hide reports whether result obj says its field k says nothing of it (a family's
// ResultView.Hide).
func (v resultFields) hide(obj map[string]json.RawMessage, k string) bool {
	for _, h := range v.hides {
		if h(obj, k) {
			return true
		}
	}
	return false
}

// label is the label result obj words itself for field k (a family's ResultView.Label).
func (v resultFields) label(obj map[string]json.RawMessage, k string) (en, ja string, ok bool) {
	for _, l := range v.labels {
		if en, ja, ok = l(obj, k); ok {
			return en, ja, true
		}
	}
	return "", "", false
}

// resultValue writes one field's value (a row without its label); a value that names an
// existing file is marked as one.
func resultValue(key string, raw json.RawMessage) ResultRow {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ResultRow{Value: clip(compactJSON(raw), 160)}
	}
	switch x := v.(type) {
	case nil:
		return ResultRow{}
	case string:
		if x == "" {
			return ResultRow{}
		}
		if filepath.IsAbs(x) {
			if st, err := os.Stat(x); err == nil && !st.IsDir() {
				return ResultRow{Value: filepath.Base(x), File: x}
			}
		}
		switch x {
		case "\t":
			return ResultRow{Value: "TAB"}
		case ",", ";", "|", " ":
			return ResultRow{Value: `"` + x + `"`}
		}
		return ResultRow{Value: clip(oneLine(x), 160)}
	case bool:
		if x {
			return ResultRow{ValueKey: "result.yes"}
		}
		return ResultRow{ValueKey: "result.no"}
	case float64:
		return ResultRow{Value: number(key, x)}
	case []any:
		if len(x) == 0 {
			return ResultRow{}
		}
		if s, ok := inlineList(x); ok {
			return ResultRow{Value: s}
		}
		return ResultRow{ValueKey: "result.items", Value: GroupDigits(int64(len(x)))}
	case map[string]any:
		return ResultRow{ValueKey: "result.items", Value: GroupDigits(int64(len(x)))}
	}
	return ResultRow{Value: clip(compactJSON(raw), 160)}
}

// inlineList writes a short list of figures or words on one line; ok is false for a long list
// or one holding anything else.
func inlineList(x []any) (string, bool) {
	if len(x) > 12 {
		return "", false
	}
	parts := make([]string, 0, len(x))
	for _, e := range x {
		switch y := e.(type) {
		case float64:
			parts = append(parts, number("", y))
		case string:
			parts = append(parts, clip(oneLine(y), 40))
		default:
			return "", false
		}
	}
	return strings.Join(parts, ", "), true
}

// number writes a figure: seconds as a duration, whole numbers with digit groups, others with
// at most four significant digits.
func number(key string, x float64) string {
	lower := strings.ToLower(key)
	if strings.HasSuffix(lower, "seconds") && x >= 0 && x < 1e9 {
		return time.Duration(x * float64(time.Second)).Round(time.Millisecond).String()
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return GroupDigits(int64(x))
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// fieldWords turns a field name (camelCase or snake_case) into words: "usersChanged" →
// "Users changed".
func fieldWords(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r == '_' || r == '-':
			b.WriteByte(' ')
		case i > 0 && unicode.IsUpper(r):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		case i == 0:
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// GroupDigits writes n with a comma between groups of three digits (1,234,567), as both
// languages write figures. The window writes its own figures with it too.
func GroupDigits(n int64) string {
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

// oneLine joins a text's lines with spaces, for a place that has room for one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// compactJSON is raw without insignificant spaces, or raw itself when it is not JSON.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
