package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// writeCSV writes a valid user-log CSV (the CSV family's default schema) of n rows; seed makes
// files with different bytes.
func writeCSV(t testing.TB, dir, name string, n int, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "U%05d,%d,%d\n", 1+r.IntN(500), r.IntN(30), r.IntN(10))
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileURIs(paths ...string) []fyne.URI {
	out := make([]fyne.URI, len(paths))
	for i, p := range paths {
		out[i] = storage.NewFileURI(p)
	}
	return out
}

// dialogText is the text of the dialog on top of the window, "" when none is open.
func dialogText(h *harness) string {
	top := h.ui.Window.Canvas().Overlays().Top()
	if top == nil || !top.Visible() {
		return ""
	}
	return strings.Join(labelTexts(top), "\n")
}

// tapDialogButton taps the button labelled text in the dialog on top of the window.
func tapDialogButton(t *testing.T, h *harness, text string) {
	t.Helper()
	top := h.ui.Window.Canvas().Overlays().Top()
	if top == nil {
		t.Fatalf("no dialog to tap %q in", text)
	}
	for _, o := range test.LaidOutObjects(top) {
		if b, ok := o.(*widget.Button); ok && b.Text == text && b.Visible() {
			test.Tap(b)
			return
		}
	}
	t.Fatalf("the dialog has no %q button; it shows %q", text, dialogText(h))
}

// topLevel lists the data folder's top-level jobs, newest first.
func topLevel(t testing.TB, a *app.App) []job.Job {
	t.Helper()
	jobs, err := a.List(context.Background(), app.ListFilter{TopLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestDropSameFileAsksBeforeRerun drops a CSV, lets it succeed, and drops it again: no second
// job appears; one question names the file, the existing job and its status. "Show existing"
// selects that job and shows its detail; on the next drop "Run again" makes a new job for the
// same file, which runs.
func TestDropSameFileAsksBeforeRerun(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	path := writeCSV(t, t.TempDir(), "report.csv", 50, 1)

	u.handleDrop(fyne.Position{}, fileURIs(path))
	h.waitFor("the first job", func() bool { return len(u.model.rows) == 1 })
	id := u.model.rows[0].ID
	h.waitFor("it to succeed", h.statusIs(id, job.Succeeded))
	if s := dialogText(h); s != "" {
		t.Fatalf("a first drop asked %q", s)
	}

	question := "report.csv は既に処理済みです（ジョブ #1・完了）。もう一度実行しますか？"
	u.handleDrop(fyne.Position{}, fileURIs(path))
	h.waitFor("the question", func() bool { return strings.Contains(dialogText(h), question) })
	if n := len(topLevel(t, h.app)); n != 1 {
		t.Fatalf("%d jobs after the second drop; want the one", n)
	}

	u.list.UnselectAll()
	u.selected, u.selIdx = 0, -1
	u.detail.showEmpty()
	tapDialogButton(t, h, "既存のジョブを表示")
	h.waitFor("the existing job selected with its detail", func() bool {
		return dialogText(h) == "" && u.selected == id && u.selIdx == u.model.index[id] &&
			u.detail.shown == job.Succeeded && strings.Contains(strings.Join(labelTexts(u.detail.root), "\n"), "report.csv")
	})

	u.handleDrop(fyne.Position{}, fileURIs(path))
	h.waitFor("the question again", func() bool { return strings.Contains(dialogText(h), question) })
	tapDialogButton(t, h, "もう一度実行")
	h.waitFor("a second job", func() bool { return len(u.model.rows) == 2 })
	again := u.model.rows[0]
	if again.ID == id || again.Name != "report.csv" || inputPath(again) != path {
		t.Fatalf("run again made job %d %q for %q; want a new job for %s", again.ID, again.Name, inputPath(again), path)
	}
	h.waitFor("the new job to succeed", h.statusIs(again.ID, job.Succeeded))
	if s := dialogText(h); s != "" {
		t.Fatalf("running again asked again: %q", s)
	}
	// The first job's workflow made task jobs, whose ids come between: the list still numbers
	// the two jobs a person started #1 and #2, and so does the detail.
	first, _ := h.rowState(id)
	second, _ := h.rowState(again.ID)
	if again.ID <= id+1 || !strings.HasPrefix(first.message, "#1 · ") || !strings.HasPrefix(second.message, "#2 · ") {
		t.Fatalf("rows of job ids %d and %d read %q and %q; want #1 and #2", id, again.ID, first.message, second.message)
	}
	u.showJob(again.ID)
	h.waitFor("the second job's detail", func() bool {
		return slices.Contains(labelTexts(u.detail.root), "#2")
	})
}

// TestDropSeveralDuplicatesOneDialog drops a checksum file and seven CSVs, then a new checksum
// file and the seven CSVs again, the last CSV as a renamed copy in another folder: the new file
// becomes a new job at once, and one dialog lists the first five already-processed files "and 2 more". "Run
// again" makes one new job for each of the seven dropped paths, the copy's included.
func TestDropSeveralDuplicatesOneDialog(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	u.Start()
	dir := t.TempDir()
	bin, _ := writeFile(t, "data.bin", 4096)
	var csvs []string
	for i, name := range []string{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv", "f.csv", "g.csv"} {
		csvs = append(csvs, writeCSV(t, dir, name, 20, uint64(i+10)))
	}
	u.handleDrop(fyne.Position{}, fileURIs(append([]string{bin}, csvs...)...))
	h.waitFor("eight jobs", func() bool { return len(u.model.rows) == 8 })
	if s := dialogText(h); s != "" {
		t.Fatalf("a first drop asked %q", s)
	}
	byName := map[string]int64{} // numbers
	for _, j := range u.model.rows {
		byName[j.Name] = j.Number
	}

	// The same bytes as g.csv under another name and folder.
	b, err := os.ReadFile(csvs[6])
	if err != nil {
		t.Fatal(err)
	}
	gCopy := filepath.Join(t.TempDir(), "g-copy.csv")
	if err := os.WriteFile(gCopy, b, 0o644); err != nil {
		t.Fatal(err)
	}
	other, _ := writeFile(t, "other.bin", 8192)
	second := append(append([]string{other}, csvs[:6]...), gCopy)
	u.handleDrop(fyne.Position{}, fileURIs(second...))
	h.waitFor("the question", func() bool { return strings.Contains(dialogText(h), "Run them again?") })
	text := dialogText(h)
	if !strings.Contains(text, "Already processed") || !strings.Contains(text, "7 of the dropped files were already processed:") {
		t.Fatalf("dialog %q", text)
	}
	for _, name := range []string{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv"} {
		if want := fmt.Sprintf("%s (job #%d, Pending)", name, byName[name]); !strings.Contains(text, want) {
			t.Fatalf("dialog %q lacks %q", text, want)
		}
	}
	if strings.Contains(text, "f.csv") || strings.Contains(text, "g-copy.csv") || !strings.Contains(text, "and 2 more") {
		t.Fatalf("dialog %q; want five names and \"and 2 more\"", text)
	}
	h.waitFor("the new checksum job", func() bool { return len(u.model.rows) == 9 })
	if !strings.Contains(u.status.Text, "Added 1 job(s).") {
		t.Fatalf("status bar %q", u.status.Text)
	}

	before := u.model.rows[0].ID
	tapDialogButton(t, h, "Run again")
	h.waitFor("seven more jobs", func() bool { return len(u.model.rows) == 16 })
	var got []string
	for _, j := range topLevel(t, h.app) {
		if j.ID > before {
			got = append(got, inputPath(j))
		}
	}
	want := append(append([]string(nil), csvs[:6]...), gCopy)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("run again read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(u.status.Text, "Added 7 job(s).") {
		t.Fatalf("status bar %q", u.status.Text)
	}
}

// TestRowAndDetailShowOutcome puts jobs of every kind of ending (and two under way) in the list
// and the detail pane: a job that ended without success shows no progress bar, a succeeded or
// partial one shows 100 %, and a finished one shows its outcome, never its last progress
// report.
func TestRowAndDetailShowOutcome(t *testing.T) {
	now := time.Now()
	sha := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	csvResult := `{"summary":"All 20 rows were accepted for 9 users.","summaryJa":"20 行すべて（ユーザー 9 人）を反映しました。","totalRecords":20}`
	cases := []struct {
		name     string
		lang     string
		j        job.Job
		bar      bool
		value    float64
		has      []string // in the row's message and the detail pane
		hasNot   []string // in neither
		detailOK bool     // the detail pane's line under the bar shows `has` too
	}{
		{name: "checksum succeeded", lang: LangEn,
			j:   job.Job{Status: job.Succeeded, Progress: 37, Message: "1024 / 4096 bytes", Result: json.RawMessage(`{"path":"/x","bytes":4096,"sha256":"` + sha + `"}`)},
			bar: true, value: 100, has: []string{"4,096 bytes", "SHA-256 9f86d081884c…"}, hasNot: []string{"1024 / 4096"}, detailOK: true},
		{name: "csv succeeded ja", lang: LangJa,
			j:   job.Job{Status: job.Succeeded, Progress: 100, Message: "validating", Result: json.RawMessage(csvResult)},
			bar: true, value: 100, has: []string{"20 行すべて（ユーザー 9 人）を反映しました。"}, hasNot: []string{"validating"}, detailOK: true},
		{name: "csv succeeded en", lang: LangEn,
			j:   job.Job{Status: job.Succeeded, Progress: 100, Message: "validating", Result: json.RawMessage(csvResult)},
			bar: true, value: 100, has: []string{"All 20 rows were accepted for 9 users."}, hasNot: []string{"validating"}, detailOK: true},
		{name: "conversion succeeded", lang: LangEn,
			j:   job.Job{Status: job.Succeeded, Progress: 90, Message: "converting memo.txt", Result: json.RawMessage(`{"page_count":1,"extracted_text_length":1400,"sha256":"` + sha + `"}`)},
			bar: true, value: 100, has: []string{"1 page · 1,400 characters"}, hasNot: []string{"converting", "SHA-256 9f86"}, detailOK: true},
		{name: "succeeded without result", lang: LangJa,
			j:   job.Job{Status: job.Succeeded, Progress: 60, Message: "converting memo.txt"},
			bar: true, value: 100, has: []string{"完了"}, hasNot: []string{"converting"}},
		{name: "partial", lang: LangEn,
			j:   job.Job{Status: job.Partial, Progress: 80, Message: "18 of 20 items done; 2 failed"},
			bar: true, value: 100, has: []string{"18 of 20 items done; 2 failed"}, detailOK: true},
		{name: "failed", lang: LangJa,
			j:   job.Job{Status: job.Failed, Progress: 40, Message: "reading page 3", Error: job.Errorf(job.E004, "the file cannot be read").WithJa("ファイルを読み取れません。")},
			bar: false, has: []string{"E004", "ファイルを読み取れません。"}, hasNot: []string{"reading page 3", "0%"}},
		{name: "cancelled", lang: LangEn,
			j:   job.Job{Status: job.Cancelled, Progress: 55, Message: "1 / 2 bytes"},
			bar: false, has: []string{"Cancelled"}, hasNot: []string{"1 / 2 bytes"}},
		{name: "timed out", lang: LangEn,
			j:   job.Job{Status: job.TimedOut, Progress: 20, Message: "waiting for the model", Error: job.Errorf(job.E010, "the job ran out of time").WithJa("時間切れです。")},
			bar: false, has: []string{"E010", "the job ran out of time"}, hasNot: []string{"waiting for the model"}},
		{name: "running", lang: LangEn,
			j:   job.Job{Status: job.Running, Progress: 40, Message: "2 / 5 bytes"},
			bar: true, value: 40, has: []string{"2 / 5 bytes"}, detailOK: true},
		{name: "retrying", lang: LangEn,
			j:   job.Job{Status: job.Retrying, Progress: 0, Error: job.Errorf(job.E007, "the server did not answer").WithJa("応答がありません。")},
			bar: true, value: 0, has: []string{"E007", "the server did not answer"}},
	}
	harnesses := map[string]*harness{LangJa: newHarness(t, LangJa), LangEn: newHarness(t, LangEn)}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := harnesses[c.lang]
			u := h.ui
			j := c.j
			j.ID, j.Type, j.Name, j.CreatedAt = int64(100+i), "checksum", "file.bin", now
			u.model.replace([]job.Job{j}, false)
			u.refreshList()
			st, ok := h.rowState(j.ID)
			if !ok {
				t.Fatal("the row is not on screen")
			}
			if st.bar != c.bar || (c.bar && st.progress != c.value) {
				t.Fatalf("row bar shown=%v value=%v; want shown=%v value=%v", st.bar, st.progress, c.bar, c.value)
			}
			u.detail.show(j, nil)
			detail := strings.Join(labelTexts(u.detail.root), "\n")
			barOnScreen := false
			for _, o := range test.LaidOutObjects(u.detail.root) {
				if b, ok := o.(*widget.ProgressBar); ok && b.Visible() {
					barOnScreen = true
					if b.Value != c.value {
						t.Fatalf("detail bar %v; want %v", b.Value, c.value)
					}
				}
			}
			if barOnScreen != c.bar {
				t.Fatalf("detail bar shown=%v; want %v", barOnScreen, c.bar)
			}
			for _, s := range c.has {
				if !strings.Contains(st.message, s) {
					t.Errorf("row message %q lacks %q", st.message, s)
				}
				if c.detailOK && !strings.Contains(u.detail.msg.Text, s) {
					t.Errorf("detail line %q lacks %q", u.detail.msg.Text, s)
				}
			}
			for _, s := range c.hasNot {
				if strings.Contains(st.message, s) || strings.Contains(detail, s) {
					t.Errorf("%q still shows: row %q, detail %q", s, st.message, detail)
				}
			}
			// A late progress report must not put the old message back in the detail pane.
			if j.Status.Final() {
				u.detail.showProgress(job.Event{JobID: j.ID, Kind: job.EventProgress, Progress: 12, Message: "late report"})
				if strings.Contains(strings.Join(labelTexts(u.detail.root), "\n"), "late report") {
					t.Error("a late progress report reached a finished job's detail")
				}
			}
		})
	}
}

// TestRealJobsShowOutcome runs a real conversion and a real failing CSV import on the engine:
// the conversion's row ends with its pages and characters instead of "converting …", the
// failed import shows no bar in its row nor in its detail.
func TestRealJobsShowOutcome(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	dir := t.TempDir()
	memo := filepath.Join(dir, "議事録.txt")
	if err := os.WriteFile(memo, []byte(strings.Repeat("本日の会議では来期の予算について話し合った。\n", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	var bad strings.Builder
	bad.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&bad, "X%d,abc,-1\n", i)
	}
	broken := filepath.Join(dir, "broken.csv")
	if err := os.WriteFile(broken, []byte(bad.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	jobs, err := h.app.Submit(context.Background(), []string{memo, broken}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, j := range jobs {
		ids[j.Name] = j.ID
	}
	conv, imp := ids["議事録.txt"], ids["broken.csv"]
	h.waitFor("the conversion to succeed", h.statusIs(conv, job.Succeeded))
	h.waitFor("the import to fail", h.statusIs(imp, job.Failed))

	st, _ := h.rowState(conv)
	// A text file has no pages: its row gives its characters, not "1 ページ", and no digest.
	if !st.bar || st.progress != 100 || strings.Contains(st.message, "ページ") || !strings.Contains(st.message, "文字") ||
		strings.Contains(st.message, "SHA-256") || strings.Contains(st.message, "converting") {
		t.Fatalf("conversion row %+v; want 100 %% and its characters", st)
	}
	st, _ = h.rowState(imp)
	if st.bar || !strings.Contains(st.message, "E006") {
		t.Fatalf("failed import row %+v; want no bar and the error code", st)
	}
	u.list.Select(u.model.index[imp])
	h.waitFor("the failed import's detail", func() bool { return u.detail.shown == job.Failed })
	for _, o := range test.LaidOutObjects(u.detail.root) {
		if b, ok := o.(*widget.ProgressBar); ok && b.Visible() {
			t.Fatalf("the failed job's detail shows a %v %% bar", b.Value)
		}
	}
}

// TestFilterBarFitsWindow lays the window out in both languages at its default width and at
// 800 px, with no jobs, jobs in a few statuses and jobs in every status: the window can be that
// narrow, the filter never reaches past the list into the detail pane, every status with jobs
// stays reachable (a button, or the drop-down that replaces the buttons), and a row keeps room
// for its file name.
func TestFilterBarFitsWindow(t *testing.T) {
	few := map[job.Status]int{job.Succeeded: 1234, job.Failed: 56, job.Running: 2}
	every := map[job.Status]int{}
	for i, s := range job.Statuses {
		every[s] = 100 + i*1000
	}
	for _, lang := range []string{LangJa, LangEn} {
		h := newHarness(t, lang)
		u := h.ui
		for _, width := range []float32{1180, 800} {
			for _, counts := range []map[job.Status]int{{}, few, every} {
				name := fmt.Sprintf("%s/%v/%d statuses", lang, width, len(counts))
				u.model.counts = counts
				u.model.replace([]job.Job{{ID: 1, Type: "csv", Name: "2026年度_売上明細_東日本.csv", Status: job.Running,
					Progress: 30, Message: "validating", CreatedAt: time.Now()}}, false)
				u.refreshFilters()
				u.refreshList()
				if min := u.Window.Content().MinSize().Width; min > width {
					t.Fatalf("%s: the window needs %v px", name, min)
				}
				u.Window.Resize(fyne.NewSize(width, 760))
				u.Window.Content().Refresh()

				drv := fyne.CurrentApp().Driver()
				limit := drv.AbsolutePositionForObject(u.detail.root).X
				right := func(o fyne.CanvasObject) float32 { return drv.AbsolutePositionForObject(o).X + o.Size().Width }
				for _, o := range u.filterBar.Objects {
					if o.Visible() && right(o) > limit {
						t.Fatalf("%s: a filter control ends at %v, past the list's edge at %v", name, right(o), limit)
					}
				}
				selectOn := u.filterSel.Visible()
				if selectOn && len(u.filterSel.Options) != len(job.Statuses)+1 {
					t.Fatalf("%s: the drop-down offers %v", name, u.filterSel.Options)
				}
				if !selectOn && !u.allBtn.Visible() {
					t.Fatalf("%s: no way to show every job", name)
				}
				for _, s := range job.Statuses {
					if !selectOn && counts[s] > 0 && !u.filterBtns[s].Visible() {
						t.Fatalf("%s: %s has jobs and no button", name, s)
					}
				}
				if width == 1180 && len(counts) <= len(few) && selectOn {
					t.Fatalf("%s: the default window should show buttons", name)
				}
				r := h.row(1)
				if r == nil {
					t.Fatalf("%s: the row is not on screen", name)
				}
				if w := r.name.Size().Width; w < 150 {
					t.Fatalf("%s: the file name gets %v px", name, w)
				}
				if right(r.retry) > limit {
					t.Fatalf("%s: the row's Retry ends at %v, past %v", name, right(r.retry), limit)
				}
			}
		}
		// The drop-down filters like the buttons.
		u.model.counts = every
		u.refreshFilters()
		u.filterSel.SetSelectedIndex(1 + indexOf(job.Statuses, job.Failed))
		if i := 1 + indexOf(job.Statuses, job.Failed); u.model.filter != job.Failed || u.filterSel.Selected != u.filterSel.Options[i] {
			t.Fatalf("%s: the drop-down set the filter to %q (%q)", lang, u.model.filter, u.filterSel.Selected)
		}
		u.filterSel.SetSelectedIndex(0)
		if u.model.filter != "" {
			t.Fatalf("%s: choosing All left the filter at %q", lang, u.model.filter)
		}
	}
}

func indexOf(list []job.Status, s job.Status) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestLanguageFor: the window follows an English system locale and speaks Japanese otherwise.
func TestLanguageFor(t *testing.T) {
	for _, c := range []struct{ locale, want string }{
		{"en", LangEn}, {"en-US", LangEn}, {"en_GB.UTF-8", LangEn}, {"EN-us", LangEn},
		{"ja", LangJa}, {"ja-JP", LangJa}, {"ja_JP.UTF-8", LangJa},
		{"C", LangJa}, {"", LangJa}, {"de-DE", LangJa}, {"eng", LangJa}, {"und", LangJa},
	} {
		if got := languageFor(c.locale); got != c.want {
			t.Errorf("languageFor(%q) = %q; want %q", c.locale, got, c.want)
		}
	}
}

// TestResultHeadline: a result's one-line summary in each language, from its own sentences or
// its figures, and nothing (no failure) for results that have neither.
func TestResultHeadline(t *testing.T) {
	ja, en := newTranslator(LangJa), newTranslator(LangEn)
	for _, c := range []struct {
		tr   *translator
		raw  string
		want string
	}{
		{en, `{"summary":"All 3 rows.","summaryJa":"3 行すべて。"}`, "All 3 rows."},
		{ja, `{"summary":"All 3 rows.","summaryJa":"3 行すべて。"}`, "3 行すべて。"},
		{ja, `{"summary":"Only English."}`, "Only English."},
		{en, `{"summary":"  two\nlines  "}`, "two lines"},
		{en, `{"summary":"","bytes":0,"sha256":"abc"}`, "0 bytes · SHA-256 abc"},
		{en, `{"bytes":1}`, "1 byte"},
		{ja, `{"bytes":1234567}`, "1,234,567 バイト"},
		{en, `{"success_count":3,"failed_count":1,"sha256":"ff"}`, "3 succeeded · 1 failed"},
		{ja, `{"success_count":3,"failed_count":1}`, "成功 3 件 · 失敗 1 件"},
		{en, `{"page_count":"many","bytes":2.5}`, ""},
		{en, `[1,2,3]`, ""},
		{en, `"just text"`, ""},
		{en, `not json`, ""},
		{en, ``, ""},
		{en, `null`, ""},
	} {
		if got := resultHeadline(c.tr, app.SummarizeResult(job.Job{Result: json.RawMessage(c.raw)})); got != c.want {
			t.Errorf("%s %s: %q; want %q", c.tr.lang, c.raw, got, c.want)
		}
	}
}

// FuzzResultHeadline: any result, however malformed, gives one line and no panic.
func FuzzResultHeadline(f *testing.F) {
	f.Add([]byte(`{"summary":"ok","bytes":12,"sha256":"abc"}`))
	f.Add([]byte(`{"summaryJa":"完了\n2行目","page_count":-1}`))
	f.Add([]byte(`{"bytes":1e400}`))
	f.Add([]byte(`[{"summary":1}]`))
	tr := newTranslator(LangJa)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if s := resultHeadline(tr, app.SummarizeResult(job.Job{Result: raw})); strings.ContainsAny(s, "\n\r") {
			t.Fatalf("%q gave a headline over several lines: %q", raw, s)
		}
	})
}

// TestWrapFor: Japanese text may break between any two characters, other text between words.
func TestWrapFor(t *testing.T) {
	for _, c := range []struct {
		s    string
		want fyne.TextWrap
	}{
		{"200 行中 200 行（100.00 %）が不正です。", fyne.TextWrapBreak},
		{"ファイル", fyne.TextWrapBreak},
		{"ひらがな", fyne.TextWrapBreak},
		{"E006 200 of 200 rows were rejected", fyne.TextWrapWord},
		{"", fyne.TextWrapWord},
		{"café naïve", fyne.TextWrapWord},
	} {
		if got := wrapFor(c.s); got != c.want {
			t.Errorf("wrapFor(%q) = %v; want %v", c.s, got, c.want)
		}
	}
}

// TestDropSameBytesTwiceInOneDrop: a file and its copy dropped together make one job, counted
// once, and no question (nothing was processed before the drop).
func TestDropSameBytesTwiceInOneDrop(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	u.Start()
	p := writeCSV(t, t.TempDir(), "x.csv", 30, 99)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "x-copy.csv")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	u.handleDrop(fyne.Position{}, fileURIs(p, cp))
	h.waitFor("the job", func() bool { return len(u.model.rows) == 1 && strings.Contains(u.status.Text, "Added") })
	if !strings.Contains(u.status.Text, "Added 1 job(s).") || dialogText(h) != "" {
		t.Fatalf("status %q, dialog %q", u.status.Text, dialogText(h))
	}
	if n := len(topLevel(t, h.app)); n != 1 {
		t.Fatalf("%d jobs", n)
	}
}
