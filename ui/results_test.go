package ui

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
)

// findAll returns the laid-out objects under o of type T.
func findAll[T fyne.CanvasObject](o fyne.CanvasObject) []T {
	var out []T
	for _, c := range test.LaidOutObjects(o) {
		if x, ok := c.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// paneText is everything the detail pane says, rich text included.
func paneText(u *UI) string {
	texts := labelTexts(u.detail.root)
	for _, rt := range findAll[*widget.RichText](u.detail.root) {
		texts = append(texts, rt.String())
	}
	return strings.Join(texts, "\n")
}

// buttonIn returns the visible button labelled text under o, or nil.
func buttonIn(o fyne.CanvasObject, text string) *widget.Button {
	for _, b := range findAll[*widget.Button](o) {
		if b.Text == text && b.Visible() {
			return b
		}
	}
	return nil
}

// runAndShow starts the engine, submits paths and selects the first job once it ended.
func runAndShow(t *testing.T, h *harness, paths []string, o app.SubmitOptions) job.Job {
	t.Helper()
	u := h.ui
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	jobs, err := h.app.Submit(context.Background(), paths, o)
	if err != nil {
		t.Fatal(err)
	}
	return showWhenDone(t, h, jobs[0].ID)
}

// showWhenDone waits for job id to end and selects it.
func showWhenDone(t *testing.T, h *harness, id int64) job.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	j, err := h.app.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the job in the list", func() bool { _, ok := h.ui.model.index[id]; return ok })
	h.ui.list.Select(h.ui.model.index[id])
	h.waitFor("the finished detail", func() bool { return h.ui.detail.shown == j.Status })
	return j
}

// badRowsCSV writes a user log of n rows with every seventh row rejected.
func badRowsCSV(t *testing.T, n int) (string, int) {
	var b strings.Builder
	b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	bad := 0
	for i := 1; i <= n; i++ {
		if i%7 == 0 {
			fmt.Fprintf(&b, "U%05d,abc,3\n", i)
			bad++
			continue
		}
		fmt.Fprintf(&b, "U%05d,%d,%d\n", i, i%50, i%9)
	}
	path := filepath.Join(t.TempDir(), "利用ログ.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, bad
}

// TestCSVResultsInTheWindow: a CSV job's rejected rows read as a table in Japanese, a page of
// 100 at a time; the report and the errors file save where the person chose.
func TestCSVResultsInTheWindow(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path, bad := badRowsCSV(t, 1500) // 214 rejected rows: three pages
	j := runAndShow(t, h, []string{path}, app.SubmitOptions{Extra: map[string]string{"tolerate-percent": "50", "tolerate-count": "100000"}})
	if j.Status != job.Partial {
		t.Fatalf("job ended %s: %v", j.Status, j.Error)
	}
	h.waitFor("the rejected rows", func() bool {
		text := paneText(u)
		return strings.Contains(text, fmt.Sprintf("不正な行（%d 行）", bad)) && strings.Contains(text, "1–100 行目 / 全 214 行")
	})
	tables := findAll[*widget.Table](u.detail.root)
	if len(tables) != 1 {
		t.Fatalf("%d tables", len(tables))
	}
	tables[0].Select(widget.TableCellID{Row: 0, Col: 3})
	h.pump()
	if text := paneText(u); !strings.Contains(text, "8 行目 ・ 列「ログイン回数」 ・ 値「abc」") {
		t.Fatalf("the selected row is not shown in full:\n%s", text)
	}
	// The next page, then the last.
	for page, want := range []string{"101–200 行目 / 全 214 行", "201–214 行目 / 全 214 行"} {
		var nb *widget.Button
		for _, b := range findAll[*widget.Button](u.detail.root) {
			if b.Text == "" && b.Icon != nil && b.Icon.Name() == theme.NavigateNextIcon().Name() {
				nb = b
			}
		}
		if nb == nil {
			t.Fatal("no next-page button")
		}
		test.Tap(nb)
		h.waitFor(fmt.Sprintf("page %d", page+2), func() bool { return strings.Contains(paneText(u), want) })
	}

	// Save both files where the person chose (the dialog's callback calls saveResult).
	if got := app.ExportFormats(j); strings.Join(got, ",") != "xlsx,csv" {
		t.Fatalf("formats %v", got)
	}
	if buttonIn(u.detail.root, "Excel で保存…") == nil || buttonIn(u.detail.root, "CSV で保存…") == nil {
		t.Fatal("no save buttons")
	}
	dir := t.TempDir()
	for _, f := range []string{"xlsx", "csv"} {
		out := filepath.Join(dir, suggestedName(j, f))
		u.saveResult(j.ID, f, out)
		h.waitFor("saved "+f, func() bool { st, err := os.Stat(out); return err == nil && st.Size() > 0 })
	}
	b, _ := os.ReadFile(filepath.Join(dir, "利用ログ-errors.csv"))
	if !strings.Contains(string(b), "abc") {
		t.Fatalf("errors file %q", b)
	}
}

// TestCSVErrorsPagesOf100k: 100,000 rejected rows page quickly from the errors file.
func TestCSVErrorsPagesOf100k(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 rows")
	}
	h := newHarness(t, LangEn)
	var b strings.Builder
	b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&b, "U%05d,x%d,3\n", i%99999+1, i)
	}
	path := filepath.Join(t.TempDir(), "big.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	if err := h.app.StartEngine(h.ui.ctx); err != nil {
		t.Fatal(err)
	}
	jobs, err := h.app.Submit(context.Background(), []string{path}, app.SubmitOptions{Extra: map[string]string{"tolerate-percent": "100", "tolerate-count": "1000000"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := h.app.Wait(wctx, jobs[0].ID); err != nil {
		t.Fatal(err)
	}
	first, err := h.app.CSVErrors(ctx, jobs[0].ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if first.Total < 10000 || len(first.Rows) != 100 {
		t.Fatalf("total %d, %d rows", first.Total, len(first.Rows))
	}
	start := time.Now()
	last, err := h.app.CSVErrors(ctx, jobs[0].ID, first.Total-50, 100)
	if err != nil || len(last.Rows) != 50 {
		t.Fatalf("%v, %d rows", err, len(last.Rows))
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("the last page took %v", d)
	}
	if last.Rows[49].Line == 0 || last.Rows[49].Column == "" {
		t.Fatalf("last row %+v", last.Rows[49])
	}
}

// docFiles returns a workbook and a PDF from the converter's test files, and a ZIP holding both.
func docFiles(t *testing.T) (xlsx, pdf, zipPath string) {
	t.Helper()
	xlsx, pdf = filepath.Join("..", "engine", "docjob", "testdata", "book.xlsx"), filepath.Join("..", "engine", "docjob", "testdata", "kangxi.pdf")
	zipPath = filepath.Join(t.TempDir(), "資料.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, p := range []string{xlsx, pdf} {
		w, _ := zw.Create(filepath.Base(p))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	w, _ := zw.Create("壊れた.pdf")
	w.Write([]byte("%PDF-1.7 not really"))
	zw.Close()
	f.Close()
	return xlsx, pdf, zipPath
}

// TestDocumentResultsInTheWindow: a workbook's Markdown renders with its sheets to move between,
// raw on request, and copies to the clipboard; a ZIP lists its files with their status and
// shows any of them.
func TestDocumentResultsInTheWindow(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	xlsx, _, zipPath := docFiles(t)
	j := runAndShow(t, h, []string{xlsx}, app.SubmitOptions{})
	if j.Status != job.Succeeded {
		t.Fatalf("%s %v", j.Status, j.Error)
	}
	h.waitFor("the rendered workbook", func() bool {
		return len(findAll[*widget.Select](u.detail.root)) == 1 && strings.Contains(paneText(u), "ノートPC")
	})
	for _, leak := range []string{"NATIVE", "docjob/3", "{\""} {
		if strings.Contains(paneText(u), leak) {
			t.Errorf("%q leaks into the window:\n%s", leak, paneText(u))
		}
	}
	// The sheet's table is a grid: each cell its own label, the header row in bold.
	cells := map[string]*widget.Label{}
	for _, l := range findAll[*widget.Label](u.detail.root) {
		cells[l.Text] = l
	}
	if l := cells["品名"]; l == nil || !l.TextStyle.Bold || cells["ノートPC"] == nil || cells["¥150,000"] == nil && cells["￥150,000"] == nil {
		t.Fatalf("the sheet's table is not drawn cell by cell: %q", labelTexts(u.detail.root))
	}
	pick := findAll[*widget.Select](u.detail.root)[0]
	if !strings.Contains(strings.Join(pick.Options, "|"), "売上") {
		t.Fatalf("sections %q", pick.Options)
	}
	for i, o := range pick.Options {
		if strings.Contains(o, "非表示メモ") {
			pick.SetSelectedIndex(i)
		}
	}
	h.pump()
	if text := paneText(u); strings.Contains(text, "ノートPC") || !strings.Contains(text, "隠しシートの内容") {
		t.Fatalf("the chosen sheet is not the one shown:\n%s", text)
	}
	radio := findAll[*widget.RadioGroup](u.detail.root)[0]
	radio.SetSelected("Markdown")
	h.pump()
	if !strings.Contains(strings.Join(labelTexts(u.detail.root), "\n"), "## 非表示メモ") {
		t.Fatal("the raw Markdown is not shown")
	}
	test.Tap(buttonIn(u.detail.root, "コピー"))
	if got := u.fyneApp.Clipboard().Content(); !strings.HasPrefix(got, "## 非表示メモ") {
		t.Fatalf("clipboard %q", got)
	}
	if buttonIn(u.detail.root, "Markdown で保存…") == nil {
		t.Fatal("no save button")
	}
	out := filepath.Join(t.TempDir(), "book.md")
	u.saveResult(j.ID, "md", out)
	h.waitFor("the saved Markdown", func() bool { b, _ := os.ReadFile(out); return strings.Contains(string(b), "ノートPC") })

	// A ZIP: its files with their status; Show opens one.
	jobs, err := h.app.Submit(context.Background(), []string{zipPath}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z := showWhenDone(t, h, jobs[0].ID)
	if z.Status != job.Partial {
		t.Fatalf("zip ended %s %v", z.Status, z.Error)
	}
	h.waitFor("the ZIP's files", func() bool {
		text := paneText(u)
		return strings.Contains(text, "ZIP 内のファイル（3 件）") && strings.Contains(text, "壊れた.pdf  ·  変換できませんでした") &&
			strings.Contains(text, "kangxi.pdf  ·  変換済み")
	})
	var shows []*widget.Button
	for _, b := range findAll[*widget.Button](u.detail.root) {
		if b.Text == "表示" {
			shows = append(shows, b)
		}
	}
	if len(shows) != 2 {
		t.Fatalf("%d Show buttons, want one per converted file", len(shows))
	}
	test.Tap(shows[1]) // kangxi.pdf
	h.pump()
	if text := paneText(u); !strings.Contains(text, "一人日本") || strings.Contains(text, "ノートPC") {
		t.Fatalf("the PDF's part is not the one shown:\n%s", text)
	}
}

// TestPartialPagesSaySo: a partial result names the pages left out and why.
func TestPartialPagesSaySo(t *testing.T) {
	tr := newTranslator(LangJa)
	rv := &resultViews{host: resultHost{tr: func() *translator { return tr }}}
	v := &docView{rv: rv, doc: app.DocumentView{NoTextPages: []int{2, 3, 4, 9}, DamagedPages: []int{5}, ReasonJa: "一部のページを読めませんでした", Reason: "some pages"}}
	text := strings.Join(labelTexts(v.partialNote()), "\n")
	for _, want := range []string{"一部のページを読めませんでした", "文字のないページ（画像のみなど）：2–4, 9", "破損していて読めなかったページ：5"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in %q", want, text)
		}
	}
}

// TestGoalResultsInTheWindow: an AI goal reads as a tree of sub-goals, actions and tasks with its
// usage, and its 9×9 chart shows every title in full.
func TestGoalResultsInTheWindow(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	t.Setenv(aifamily.EnvEndpoint, srv.URL)
	t.Setenv(aifamily.EnvProvider, "openai")
	h := newHarness(t, LangJa)
	u := h.ui
	ctx := context.Background()
	first, err := h.app.SubmitGoal(ctx, app.GoalRequest{Title: "毎日の運動を習慣にして健康診断の数値を改善する"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := h.app.Wait(wctx, first.ID); err != nil {
		t.Fatal(err)
	}
	var in aijob.GoalInput
	jj, _ := h.app.Get(ctx, first.ID)
	if err := json.Unmarshal(jj.Input, &in); err != nil || in.GoalID == 0 {
		t.Fatalf("input %s", jj.Input)
	}
	ai, _ := app.FamilyOf[*aifamily.Family](h.app)
	tasks, err := ai.SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: in.GoalID})
	if err != nil {
		t.Fatal(err)
	}
	j := showWhenDone(t, h, tasks.ID)
	if j.Status != job.Succeeded {
		t.Fatalf("%s %v", j.Status, j.Error)
	}
	h.waitFor("the goal tree", func() bool { return len(findAll[*widget.Tree](u.detail.root)) == 1 })
	text := paneText(u)
	for _, want := range []string{"サブ目標 8 ・ 行動 64 ・ タスク", "呼び出し"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	for _, leak := range []string{"Subgoals", "Usage", "{\"", "goal_id"} {
		if strings.Contains(text, leak) {
			t.Errorf("%q leaks into the window:\n%s", leak, text)
		}
	}
	g, err := h.app.GoalOfJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	tree := findAll[*widget.Tree](u.detail.root)[0]
	sg := g.Goal.Subgoals[0]
	tree.OpenBranch(fmt.Sprintf("s%d", sg.ID))
	tree.OpenBranch(fmt.Sprintf("a%d", sg.Actions[0].ID))
	h.pump()
	if !strings.Contains(strings.Join(labelTexts(tree), "\n"), sg.Actions[0].Tasks[0].Title) {
		t.Fatalf("the tree does not show the first task: %q", labelTexts(tree))
	}

	test.Tap(buttonIn(u.detail.root, "9×9 チャートを表示"))
	top := u.Window.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no chart")
	}
	var chart []string
	for _, rt := range findAll[*widget.RichText](top) {
		chart = append(chart, rt.String())
	}
	joined := strings.Join(chart, "\n")
	if !strings.Contains(joined, g.Goal.Title) || !strings.Contains(joined, sg.Actions[7].Title) {
		t.Fatalf("the chart cuts titles: %q", chart)
	}
	tapDialogButton(t, h, "閉じる")

	for _, f := range []string{"md", "csv", "xlsx"} {
		out := filepath.Join(t.TempDir(), "goal."+f)
		u.saveResult(j.ID, f, out)
		h.waitFor("saved "+f, func() bool { st, err := os.Stat(out); return err == nil && st.Size() > 0 })
	}
}

// TestEligibilityReadsAsATable: requirements group under their headings with keys in words.
func TestEligibilityReadsAsATable(t *testing.T) {
	tr := newTranslator(LangJa)
	rv := &resultViews{host: resultHost{tr: func() *translator { return tr }}}
	r := aijob.EligibilityResult{FallbackLevel: 2, Eligibility: aijob.Eligibility{
		Must:        []aijob.Item{{Key: "company_size", Text: "従業員 300 人以下"}},
		NeedCheck:   []aijob.Item{{Key: "region", Text: "都内に事業所があること"}},
		MissingKeys: []string{"subsidy_amount"},
	}}
	text := strings.Join(labelTexts(rv.eligibilityView(r)), "\n")
	for _, want := range []string{"必須要件（1 件）", "企業規模", "従業員 300 人以下", "要確認（1 件）", "地域", "見つからなかった項目：補助金額", "見出しから構成だけ"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}

// TestCancelAsksFirst: Cancel opens a question; keeping the job leaves it waiting, confirming
// cancels it, and the pane then reads as cancelled, not as an error.
func TestCancelAsksFirst(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path, _ := writeFile(t, "見積書.pdf", 1024)
	u.Start()
	jobs, err := h.app.Submit(context.Background(), []string{path}, app.SubmitOptions{Type: "checksum"})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	h.waitFor("the row", h.statusIs(id, job.Pending))
	u.list.Select(u.model.index[id])
	h.waitFor("the detail", func() bool { return u.detail.shown == job.Pending })
	test.Tap(buttonIn(u.detail.root, "キャンセル"))
	if !strings.Contains(dialogText(h), "ジョブ #1「見積書.pdf」をキャンセルします") {
		t.Fatalf("the question reads %q", dialogText(h))
	}
	tapDialogButton(t, h, "続ける")
	if j, _ := h.app.Get(context.Background(), id); j.Status != job.Pending {
		t.Fatalf("keeping the job left it %s", j.Status)
	}
	test.Tap(buttonIn(u.detail.root, "キャンセル"))
	tapDialogButton(t, h, "キャンセルする")
	h.waitFor("CANCELLED in the pane", func() bool { return u.detail.shown == job.Cancelled })
	text := paneText(u)
	if !strings.Contains(text, "キャンセルしました。") || strings.Contains(text, "エラー\n") || strings.Contains(text, "Cancelled") {
		t.Fatalf("the pane reads:\n%s", text)
	}
	for _, rt := range findAll[*widget.RichText](u.detail.root) {
		for _, s := range rt.Segments {
			if ts, ok := s.(*widget.TextSegment); ok && ts.Style.ColorName == "error" {
				t.Fatalf("a cancelled job is drawn as an error: %q", ts.Text)
			}
		}
	}
}

// TestRetryHiddenWhenItCannotHelp: a CSV whose header does not match fails with E006; it offers
// no Retry and says what to change instead.
func TestRetryHiddenWhenItCannotHelp(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	path := filepath.Join(t.TempDir(), "名簿.csv")
	os.WriteFile(path, []byte("氏名,部署\n山田,営業\n"), 0o644)
	j := runAndShow(t, h, []string{path}, app.SubmitOptions{Type: "csv"})
	if j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E006 {
		t.Fatalf("%s %v", j.Status, j.Error)
	}
	if canRetry(j) {
		t.Fatal("retry offered for a wrong header")
	}
	st, _ := h.rowState(j.ID)
	if st.retryOn {
		t.Fatalf("row %+v offers Retry", st)
	}
	retry := buttonIn(u.detail.root, "再実行")
	if retry == nil || !retry.Disabled() {
		t.Fatal("the pane's Retry is enabled")
	}
	if text := paneText(u); !strings.Contains(text, "見出し行や列の並び") || !strings.Contains(text, "E006  内容の検証エラー") {
		t.Fatalf("the card does not say what to change:\n%s", text)
	}
	// A retryable failure keeps Retry.
	if !canRetry(job.Job{Status: job.Failed, Error: &job.Error{Code: job.E001, Retryable: true}}) {
		t.Fatal("retry hidden for a retryable error")
	}
}

// TestMarkdownTablesSplit: tables are cut out of the text with their delimiter rows dropped and
// escaped pipes kept in their cell; wide cells wrap within their column.
func TestMarkdownTablesSplit(t *testing.T) {
	md := "# 売上\n\n| 品名 | 金額 |\n|---|--:|\n| A\\|B | 100 |\n| 長い | |\n\n本文\n"
	got := splitMarkdownTables(md)
	if len(got) != 3 || got[0].text != "# 売上\n\n" || got[2].text != "\n本文\n\n" {
		t.Fatalf("blocks %q", got)
	}
	want := [][]string{{"品名", "金額"}, {"A|B", "100"}, {"長い", ""}}
	if fmt.Sprint(got[1].rows) != fmt.Sprint(want) {
		t.Fatalf("rows %q; want %q", got[1].rows, want)
	}
	test.NewTempApp(t)
	long := strings.Repeat("補助金の申請期限は", 20)
	wrapped := wrapCell(long, fyne.TextStyle{})
	if strings.ReplaceAll(wrapped, "\n", "") != long || !strings.Contains(wrapped, "\n") {
		t.Fatalf("a long cell is not wrapped without loss: %q", wrapped)
	}
	for _, line := range strings.Split(wrapped, "\n") {
		if w := fyne.MeasureText(line, theme.TextSize(), fyne.TextStyle{}).Width; w > maxCellWidth {
			t.Fatalf("line %q is %.0f wide, over %d", line, w, maxCellWidth)
		}
	}
}

// TestFailedCSVShowsWhy: an import refused for too many rejected rows shows, like a PARTIAL one,
// the rejected rows (counted as rows, not errors, when a row has several), the first reasons,
// and saves the errors file and the report; it shows no figures of rows taken in, as none were.
func TestFailedCSVShowsWhy(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	var b strings.Builder
	b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "X%d,abc,-1\n", i) // three errors in every row
	}
	path := filepath.Join(t.TempDir(), "不正データ.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	j := runAndShow(t, h, []string{path}, app.SubmitOptions{})
	if j.Status != job.Failed {
		t.Fatalf("job ended %s, want FAILED", j.Status)
	}
	h.waitFor("the rejected rows of the failed import", func() bool { return len(findAll[*widget.Table](u.detail.root)) == 1 })
	text := paneText(u)
	page, err := h.app.CSVErrors(u.ctx, j.ID, 0, 1)
	if err != nil || page.Total <= 60 {
		t.Fatalf("errors page %+v, %v; want more errors than rows", page, err)
	}
	if want := fmt.Sprintf("不正な行（60 行・エラー %s 件）", groupInt(int64(page.Total))); !strings.Contains(text, want) {
		t.Fatalf("no %q in the detail:\n%s", want, text)
	}
	if !strings.Contains(text, "主な理由: 列「") {
		t.Fatalf("the first reasons are not summarised:\n%s", text)
	}
	if strings.Contains(text, "反映した行") || strings.Contains(text, "ユーザー数") {
		t.Fatalf("a refused import shows rows taken in:\n%s", text)
	}
	if buttonIn(u.detail.root, "Excel で保存…") == nil || buttonIn(u.detail.root, "CSV で保存…") == nil {
		t.Fatal("no save buttons for the failed import")
	}
	j, _ = h.app.Get(u.ctx, j.ID)
	out := filepath.Join(t.TempDir(), suggestedName(j, "csv"))
	u.saveResult(j.ID, "csv", out)
	h.waitFor("the saved errors file", func() bool { st, err := os.Stat(out); return err == nil && st.Size() > 0 })
}
