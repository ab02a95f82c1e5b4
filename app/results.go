package app

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/mdtext"
)

// This file is the service API a window uses to read a finished job's result in full, beyond
// the labelled fields of DescribeResult: a CSV job's rejected rows page by page, a converted
// document's Markdown with its sections and partial pages, an AI goal's chart with its usage,
// the map runs of a workflow job, and every result file written where the person chooses.

// CSVErrorRow is one rejected row of a CSV job, as its errors file lists it.
type CSVErrorRow struct {
	Line     int64  // the row's line in the file (1: the header)
	Column   string // the column at fault ("" for the whole row)
	Value    string // the value found
	Kind     string // the rule it broke, in a word
	Reason   string // why, in English
	ReasonJa string // why, in Japanese
}

// CSVErrorPage is a page of a CSV job's rejected rows.
type CSVErrorPage struct {
	Rows  []CSVErrorRow
	Total int // rows in the errors file (the rows shown; errorCount may be larger when truncated)
}

// csvErrorStride is how many rows apart the errors file's index notes where a row starts: a page
// reads from the nearest mark, so 100,000 rejected rows cost one scan and then one short read a page.
const csvErrorStride = 64

// csvErrorIndex is where every csvErrorStride-th row of one errors file starts.
type csvErrorIndex struct {
	size    int64
	modTime time.Time
	marks   []int64 // marks[k] = offset of row k*csvErrorStride (rows after the header)
	total   int
}

var (
	csvIndexMu sync.Mutex
	csvIndexes = map[string]*csvErrorIndex{}
)

// CSVErrors returns up to limit of CSV job id's rejected rows from the offset-th on, read from
// the errors file the job wrote (its result's errorsCsv), and how many there are in all. A job
// without an errors file (not a CSV job, or not finished) is refused with E014.
func (a *App) CSVErrors(ctx context.Context, id int64, offset, limit int) (CSVErrorPage, error) {
	j, err := a.Get(ctx, id)
	if err != nil {
		return CSVErrorPage{}, err
	}
	path := resultFile(j, "errorsCsv")
	if path == "" {
		return CSVErrorPage{}, job.Errorf(job.E014, "job %s has no rejected rows to show", j.Ref()).
			WithJa(fmt.Sprintf("ジョブ %s には表示できる不正行がありません。", j.Ref()))
	}
	f, err := os.Open(path)
	if err != nil {
		return CSVErrorPage{}, job.Wrap(job.E014, err, "the errors file of this job is missing").
			WithJa("このジョブのエラーファイルが見つかりません。")
	}
	defer f.Close()
	idx, err := errorIndex(f, path)
	if err != nil {
		return CSVErrorPage{}, job.Wrap(job.E016, err, "the errors file could not be read").WithJa("エラーファイルを読み取れませんでした。")
	}
	page := CSVErrorPage{Total: idx.total}
	if offset < 0 || offset >= idx.total || limit <= 0 {
		return page, nil
	}
	mark := offset / csvErrorStride
	if _, err := f.Seek(idx.marks[mark], io.SeekStart); err != nil {
		return page, job.Wrap(job.E016, err, "the errors file could not be read").WithJa("エラーファイルを読み取れませんでした。")
	}
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	for skip := offset - mark*csvErrorStride; skip > 0; skip-- {
		if _, err := r.Read(); err != nil {
			return page, nil
		}
	}
	for len(page.Rows) < limit {
		rec, err := r.Read()
		if err != nil {
			break
		}
		page.Rows = append(page.Rows, errorRow(rec))
	}
	return page, nil
}

// errorRow reads one record of the errors file: line, column, value, kind, reason (ja), reason.
func errorRow(rec []string) CSVErrorRow {
	field := func(i int) string {
		if i < len(rec) {
			return rec[i]
		}
		return ""
	}
	line, _ := strconv.ParseInt(field(0), 10, 64)
	return CSVErrorRow{Line: line, Column: field(1), Value: field(2), Kind: field(3), ReasonJa: field(4), Reason: field(5)}
}

// errorIndex returns the index of the errors file f (at path), scanning it once per version.
func errorIndex(f *os.File, path string) (*csvErrorIndex, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	csvIndexMu.Lock()
	idx := csvIndexes[path]
	csvIndexMu.Unlock()
	if idx != nil && idx.size == st.Size() && idx.modTime.Equal(st.ModTime()) {
		return idx, nil
	}
	idx = &csvErrorIndex{size: st.Size(), modTime: st.ModTime()}
	br := bufio.NewReaderSize(f, 256<<10)
	var off int64
	inQuotes, header, atStart := false, true, true
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if atStart && b != '\r' && b != '\n' {
			atStart = false
			if !header {
				if idx.total%csvErrorStride == 0 {
					idx.marks = append(idx.marks, off)
				}
				idx.total++
			}
		}
		off++
		switch {
		case b == '"':
			inQuotes = !inQuotes
		case b == '\n' && !inQuotes:
			header, atStart = false, true
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	csvIndexMu.Lock()
	csvIndexes[path] = idx
	csvIndexMu.Unlock()
	return idx, nil
}

// resultFile is the local file a finished job's result names under field, or "" when it names
// none or the file is elsewhere (in the cloud).
func resultFile(j job.Job, field string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(j.Result, &obj) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(obj[field], &s) != nil || s == "" {
		return ""
	}
	return localPath(s)
}

// localPath is the path of a local URI (a path or file://…), or "" for another scheme.
func localPath(uri string) string {
	if strings.HasPrefix(uri, "file://") {
		if u, err := url.Parse(uri); err == nil {
			return u.Path
		}
		return ""
	}
	if strings.Contains(uri, "://") {
		return ""
	}
	return uri
}

// DocumentView is a converted document as a window shows it: its Markdown, the sections a person
// moves between (a PDF's pages, a workbook's sheets, a ZIP's entries), and what a partial result
// left out and why.
type DocumentView struct {
	Markdown string
	Sections []DocSection
	// Entries are a ZIP's files with how each converted; a single file has none.
	Entries []DocEntry
	// NoTextPages, DamagedPages and OCRPages are the pages without text, the damaged pages and the
	// pages read by OCR (1-based).
	NoTextPages, DamagedPages, OCRPages []int
	// Reason and ReasonJa say why the result is partial ("" when it is not).
	Reason, ReasonJa string
	// File is the Markdown file the job wrote.
	File string
	// Kind is the converted file's format as the converter names it ("pptx", "xls", "eml",
	// "msg", "epub", "html", …); Pages are its pages, slides, sheets or chapters as the
	// converter counts them. A window shows each format the way its users expect.
	Kind  string
	Pages int
	// Mail is a mail's header fields (EML, MSG); nil for other formats.
	Mail *DocMail
	// Source is the converted file on this machine (a picture a window shows beside its text);
	// "" when it is not a file here or no longer exists.
	Source string
}

// DocMail is a converted mail's header fields, decoded.
type DocMail struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Cc      string `json:"cc"`
	Date    string `json:"date"`
	Subject string `json:"subject"`
}

// DocSection is one heading of a document's Markdown.
type DocSection struct {
	Title string
	Level int // 1 for "#", 2 for "##"
	Page  int // a PDF page's number when the section is that page (Title "Page N"), else 0
	Start int // byte offset of the heading line in Markdown
	End   int // byte offset where the next section of the same or a higher level starts
}

// DocEntry is one file of a converted ZIP.
type DocEntry struct {
	Name, Kind, Status string // Status: ready | partial | failed
	Code               string // the error code when it failed
	Reason, ReasonJa   string
	Chars              int // characters of Markdown it gave
	Section            int // index into Sections of its "# name" heading, -1 when it has none
}

// maxDocumentBytes bounds what Document reads: a window cannot render more usefully, and the
// whole file can be saved elsewhere.
const maxDocumentBytes = 8 << 20

// Document returns finished conversion job id's Markdown with its sections, entries and partial
// pages. A job without a converted document is refused with E014.
func (a *App) Document(ctx context.Context, id int64) (DocumentView, error) {
	j, err := a.Get(ctx, id)
	if err != nil {
		return DocumentView{}, err
	}
	var res struct {
		OutputPath   string   `json:"output_path"`
		Reason       string   `json:"reason"`
		ReasonJa     string   `json:"reason_ja"`
		NoTextPages  []int    `json:"no_text_pages"`
		DamagedPages []int    `json:"damaged_pages"`
		OCRPages     []int    `json:"ocr_pages"`
		Path         string   `json:"path"`
		Kind         string   `json:"kind"`
		PageCount    int      `json:"page_count"`
		Mail         *DocMail `json:"mail"`
		Children     []struct {
			Name     string `json:"name"`
			Kind     string `json:"kind"`
			Status   string `json:"status"`
			Code     string `json:"code"`
			Reason   string `json:"reason"`
			ReasonJa string `json:"reason_ja"`
			Chars    int    `json:"text_length"`
		} `json:"children"`
	}
	if json.Unmarshal(j.Result, &res) != nil || localPath(res.OutputPath) == "" {
		return DocumentView{}, job.Errorf(job.E014, "job %s has no converted document", j.Ref()).
			WithJa(fmt.Sprintf("ジョブ %s には変換された文書がありません。", j.Ref()))
	}
	v := DocumentView{File: localPath(res.OutputPath), Reason: res.Reason, ReasonJa: res.ReasonJa,
		NoTextPages: res.NoTextPages, DamagedPages: res.DamagedPages, OCRPages: res.OCRPages,
		Kind: res.Kind, Pages: res.PageCount, Mail: res.Mail}
	if src := localPath(res.Path); src != "" && filepath.IsAbs(src) {
		if st, err := os.Stat(src); err == nil && st.Mode().IsRegular() {
			v.Source = src
		}
	}
	f, err := os.Open(v.File)
	if err != nil {
		return v, job.Wrap(job.E014, err, "the converted file is missing; convert the file again").
			WithJa("変換結果のファイルが見つかりません。もう一度変換してください。")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDocumentBytes))
	if err != nil {
		return v, job.Wrap(job.E016, err, "the converted file could not be read").WithJa("変換結果のファイルを読み取れませんでした。")
	}
	v.Markdown = string(b)
	v.Sections = MarkdownSections(v.Markdown)
	for _, c := range res.Children {
		e := DocEntry{Name: c.Name, Kind: c.Kind, Status: c.Status, Code: c.Code, Reason: c.Reason, ReasonJa: c.ReasonJa, Chars: c.Chars, Section: -1}
		for i, s := range v.Sections {
			if s.Level == 1 && s.Title == c.Name {
				e.Section = i
				break
			}
		}
		v.Entries = append(v.Entries, e)
	}
	return v, nil
}

// MarkdownSections lists md's headings of level 1 and 2 outside code fences, each with the span
// of its section. A PDF's page marker starts a section of level 2 titled "Page N", as PDFs
// converted before the markers were headed. A deck's slide marker starts a section of level 2
// titled "Slide N: title" with the "## title" heading right after it ("Slide N" for a slide
// without one, " (hidden)" after a hidden slide's), as decks converted before the markers were
// headed. A deck whose headings were pushed down (a mail's attached deck, its titles "#####
// title") gives no slide sections, as before the markers, until the next heading of level 1 or 2.
func MarkdownSections(md string) []DocSection {
	var out []DocSection
	fenced := false
	slide, hidden := -1, "" // the section of a slide marker whose title may follow
	demoted := false        // inside a deck whose headings were pushed down
	for off := 0; off < len(md); {
		end := strings.IndexByte(md[off:], '\n')
		if end < 0 {
			end = len(md)
		} else {
			end += off + 1
		}
		line := strings.TrimRight(md[off:end], "\r\n")
		if !fenced && slide >= 0 && strings.HasPrefix(line, "## ") {
			out[slide].Title += ": " + mdtext.Unescape(strings.TrimSpace(line[3:])) + hidden
			slide = -1
			off = end
			continue
		}
		if strings.TrimSpace(line) != "" && slide >= 0 {
			if h := strings.TrimLeft(line, "#"); !fenced && len(line)-len(h) > 2 && strings.HasPrefix(h, " ") {
				out, demoted = out[:slide], true // its title pushed down: no slide of this document's own
			} else {
				out[slide].Title += hidden // a slide without a title
			}
			slide = -1
		}
		switch {
		case strings.HasPrefix(line, "```"):
			fenced = !fenced
		case !fenced && strings.HasPrefix(line, "# "):
			out = append(out, DocSection{Title: mdtext.Unescape(strings.TrimSpace(line[2:])), Level: 1, Start: off})
			demoted = false
		case !fenced && strings.HasPrefix(line, "## "):
			out = append(out, DocSection{Title: mdtext.Unescape(strings.TrimSpace(line[3:])), Level: 2, Start: off})
			demoted = false
		case !fenced && strings.HasPrefix(line, "<!-- Page "):
			if m := mdtext.PageMarker.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				out = append(out, DocSection{Title: "Page " + m[1], Level: 2, Page: n, Start: off})
			}
		case !fenced && !demoted && strings.HasPrefix(line, "<!-- Slide "):
			if m := mdtext.SlideMarker.FindStringSubmatch(line); m != nil {
				out = append(out, DocSection{Title: "Slide " + m[1], Level: 2, Start: off})
				slide, hidden = len(out)-1, m[2]
			}
		}
		off = end
	}
	if slide >= 0 {
		out[slide].Title += hidden
	}
	for i := range out {
		out[i].End = len(md)
		for k := i + 1; k < len(out); k++ {
			if out[k].Level <= out[i].Level {
				out[i].End = out[k].Start
				break
			}
		}
	}
	return out
}

// GoalView is an AI job's goal with its chart, and the model usage of the job and its steps.
type GoalView struct {
	Goal  aijob.Goal
	Usage aijob.Usage
}

// GoalOfJob returns the goal AI generation job id worked on (its result's goal_id, else its
// input's), with the model usage of the job and every job under it. A job that names no goal is
// refused with E014.
func (a *App) GoalOfJob(ctx context.Context, id int64) (GoalView, error) {
	ai, ok := FamilyOf[*aifamily.Family](a)
	if !ok {
		return GoalView{}, job.Errorf(job.E014, "AI generation is not part of this build").WithJa("このビルドには AI 生成機能が含まれていません。")
	}
	j, err := a.Get(ctx, id)
	if err != nil {
		return GoalView{}, err
	}
	gid := goalIDOf(j.Result)
	if gid == 0 {
		gid = goalIDOf(j.Input)
	}
	if gid == 0 {
		return GoalView{}, job.Errorf(job.E014, "job %s has no goal", j.Ref()).WithJa(fmt.Sprintf("ジョブ %s には目標がありません。", j.Ref()))
	}
	g, err := ai.Service().LoadGoal(ctx, gid)
	if err != nil {
		return GoalView{}, err
	}
	v := GoalView{Goal: g}
	v.Usage, _ = ai.TreeUsage(ctx, id)
	return v, nil
}

// goalIDOf reads goal_id from a result or input, also inside a workflow input's payload.
func goalIDOf(raw json.RawMessage) int64 {
	var v struct {
		GoalID  int64           `json:"goal_id"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	if v.GoalID == 0 && len(v.Payload) > 0 {
		return goalIDOf(v.Payload)
	}
	return v.GoalID
}

// EligibilityOf returns the eligibility requirements an ELIGIBILITY_EXTRACT job found; ok is
// false for any other result.
func EligibilityOf(j job.Job) (aijob.EligibilityResult, bool) {
	var r aijob.EligibilityResult
	if j.Type != aijob.TypeEligibility || json.Unmarshal(j.Result, &r) != nil {
		return r, false
	}
	return r, true
}

// MapRuns returns the map runs of job id's workflow execution — its own, or for a job that ran
// its family's workflow as a child, the child's — with their item counters; none for a job that
// ran no Map.
func (a *App) MapRuns(ctx context.Context, id int64) ([]flow.MapRun, error) {
	eng := a.flow
	ids := []int64{id}
	if kids, err := a.List(ctx, ListFilter{ParentID: id, Type: flow.TypeExecution, Limit: 20}); err == nil {
		for _, k := range kids {
			ids = append(ids, k.ID)
		}
	}
	var runs []flow.MapRun
	for _, jid := range ids {
		x, err := eng.ExecutionByJob(ctx, jid)
		if err != nil {
			var ae *flow.APIError
			if errors.As(err, &ae) {
				continue // this job ran no workflow
			}
			return nil, err
		}
		rs, err := eng.ListMapRuns(ctx, x.ARN)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	return runs, nil
}
