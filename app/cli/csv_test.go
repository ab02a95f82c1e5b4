package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/japanese"

	"jobdesk/app"
	"jobdesk/app/convertfamily"
	"jobdesk/app/csvfamily"
	"jobdesk/assets"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
)

// csvMain runs the command line like runCLI, but fails the test instead of hanging forever when
// a command does not return.
func csvMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code     int
		out, err string
	}
	ch := make(chan res, 1)
	go func() {
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		ch <- res{code, out.String(), errb.String()}
	}()
	select {
	case r := <-ch:
		return r.code, r.out, r.err
	case <-time.After(2 * time.Minute):
		t.Fatalf("jobdesk %s did not return within two minutes", strings.Join(args, " "))
		return 0, "", ""
	}
}

// userLog renders a user-log CSV of n rows over users U00001…, with bad rows at the given row
// numbers (1-based), and returns it with the expected per-user sums of the good rows.
func userLog(n, users int, bad map[int]string) (string, map[string][2]int64) {
	var b strings.Builder
	b.WriteString("ユーザーID,ログイン回数,投稿回数\r\n")
	want := map[string][2]int64{}
	for i := 1; i <= n; i++ {
		if v, ok := bad[i]; ok {
			b.WriteString(v + "\r\n")
			continue
		}
		id := fmt.Sprintf("U%05d", i%users+1)
		l, p := int64(i%7), int64(i%3)
		fmt.Fprintf(&b, "%s,%d,%d\r\n", id, l, p)
		w := want[id]
		want[id] = [2]int64{w[0] + l, w[1] + p}
	}
	return b.String(), want
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// csvTable reads csv_users from the data folder's database.
func csvTable(t *testing.T, dataDir string) map[string][2]int64 {
	t.Helper()
	db, err := store.OpenDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.R.Query(`SELECT user_id, login_count, post_count FROM csv_users`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]int64{}
	for rows.Next() {
		var id string
		var l, p int64
		if err := rows.Scan(&id, &l, &p); err != nil {
			t.Fatal(err)
		}
		out[id] = [2]int64{l, p}
	}
	return out
}

// csvJob is what `run --json` prints for a CSV job.
type csvJob struct {
	ID     int64           `json:"id"`
	Number int64           `json:"number"`
	Type   string          `json:"type"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code      string `json:"code"`
		Name      string `json:"name"`
		Message   string `json:"message"`
		MessageJa string `json:"message_ja"`
	} `json:"error"`
}

func parseJob(t *testing.T, out string) (csvJob, csvjob.Summary) {
	t.Helper()
	var j csvJob
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("run --json printed %q: %v", out, err)
	}
	var s csvjob.Summary
	if len(j.Result) > 0 && string(j.Result) != "null" {
		if err := json.Unmarshal(j.Result, &s); err != nil {
			t.Fatalf("result %s: %v", j.Result, err)
		}
	}
	return j, s
}

func sameTable(t *testing.T, got, want map[string][2]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("csv_users has %d users, want %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Fatalf("csv_users[%s] = %v, want %v", id, got[id], w)
		}
	}
}

func TestCSVRunWaitJSON(t *testing.T) {
	dataDir, files := t.TempDir(), t.TempDir()
	text, want := userLog(3000, 250, nil)
	sjis, err := japanese.ShiftJIS.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, enc string
		data      []byte
	}{
		{"user-log-20240802-001.csv", csvjob.EncUTF8, []byte(text)},
		{"ユーザーログ_sjis.csv", csvjob.EncCP932, []byte(sjis)},
	} {
		t.Run(c.enc, func(t *testing.T) {
			path := writeFile(t, files, c.name, c.data)
			code, out, errOut := csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", path)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			j, s := parseJob(t, out)
			if j.Type != csvjob.Type || j.Status != "SUCCEEDED" || s.Status != csvjob.StatusSuccess {
				t.Fatalf("job %+v summary %+v", j, s)
			}
			if s.TotalRows != 3000 || s.SuccessCount != 3000 || s.ErrorCount != 0 || s.Users != 250 || s.Encoding != c.enc || s.Delimiter != "," {
				t.Fatalf("summary %+v", s)
			}
			if s.Table != csvjob.Table {
				t.Fatalf("table %q", s.Table)
			}
			for _, f := range []string{s.ErrorsCSV, s.ReportXLSX} {
				if st, err := os.Stat(f); err != nil || st.Size() == 0 {
					t.Fatalf("result file %q: %v", f, err)
				}
			}
			if len(s.Columns) != 3 || s.Columns[1].Name != "ログイン回数" {
				t.Fatalf("column statistics %+v", s.Columns)
			}
			sameTable(t, csvTable(t, dataDir), want)
		})
	}
}

func TestCSVToleranceExitCodes(t *testing.T) {
	bad2 := map[int]string{10: "U00001,abc,1", 20: "X1,1,1"}
	bad10 := map[int]string{}
	for i := 1; i <= 10; i++ {
		bad10[i*9] = fmt.Sprintf("U%05d,-1,2", i)
	}
	cases := []struct {
		name      string
		bad       map[int]string
		flags     []string
		code      int
		status    string
		errName   string
		writes    bool
		errorRows int64
	}{
		{"partial within 5 percent", bad2, nil, ExitPartial, "PARTIAL", "", true, 2},
		{"over 5 percent fails", bad10, nil, ExitFailed, "FAILED", csvjob.ErrToleranceExceeded, false, 10},
		{"tolerate 20 percent", bad10, []string{"--tolerate-percent", "20"}, ExitPartial, "PARTIAL", "", true, 10},
		{"tolerate count 1", bad2, []string{"--tolerate-count", "1"}, ExitFailed, "FAILED", csvjob.ErrToleranceExceeded, false, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dataDir := t.TempDir()
			text, want := userLog(100, 30, c.bad)
			path := writeFile(t, t.TempDir(), "log.csv", []byte(text))
			args := append([]string{"--data-dir", dataDir, "run", "--type", "csv", "--wait", "--json"}, c.flags...)
			code, out, errOut := csvMain(t, append(args, path)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.code, out, errOut)
			}
			j, s := parseJob(t, out)
			if j.Status != c.status {
				t.Fatalf("status %s: %s", j.Status, out)
			}
			if c.errName != "" {
				if j.Error == nil || j.Error.Name != c.errName || j.Error.Code != "E006" || j.Error.MessageJa == "" {
					t.Fatalf("error %+v", j.Error)
				}
			} else if s.ErrorCount != c.errorRows || s.Status != csvjob.StatusPartial {
				t.Fatalf("summary %+v", s)
			}
			got := csvTable(t, dataDir)
			if c.writes {
				sameTable(t, got, want)
			} else if len(got) != 0 {
				t.Fatalf("a failed job wrote %d users", len(got))
			}
			// Even a failed job leaves its errors file for export.
			code, _, errOut = csvMain(t, "--data-dir", dataDir, "export", fmt.Sprint(j.Number), "--format", "csv", "-o", filepath.Join(t.TempDir(), "e.csv"))
			if code != ExitOK {
				t.Fatalf("export: %d %s", code, errOut)
			}
		})
	}
}

func TestCSVDuplicateFileAndForce(t *testing.T) {
	dataDir := t.TempDir()
	text, _ := userLog(50, 10, nil)
	path := writeFile(t, t.TempDir(), "same.csv", []byte(text))
	copyPath := writeFile(t, t.TempDir(), "copy-of-same.csv", []byte(text))
	code, out, errOut := csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", path)
	if code != ExitOK {
		t.Fatalf("first run: %d %s %s", code, out, errOut)
	}
	first, _ := parseJob(t, out)
	// The same bytes under another name: the existing job is printed, nothing runs again.
	code, out, _ = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", copyPath)
	again, _ := parseJob(t, out)
	if code != ExitOK || again.ID != first.ID {
		t.Fatalf("duplicate: exit %d, job %d, want job %d", code, again.ID, first.ID)
	}
	code, out, errOut = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", "--force", path)
	forced, s := parseJob(t, out)
	if code != ExitOK || forced.ID == first.ID || s.Status != csvjob.StatusSuccess {
		t.Fatalf("--force: exit %d job %d (first %d) %s", code, forced.ID, first.ID, errOut)
	}
	// Re-running the same file changes nothing in the table.
	if s.UsersChanged != 0 {
		t.Fatalf("a re-run changed %d users", s.UsersChanged)
	}
	code, out, _ = csvMain(t, "--data-dir", dataDir, "ls", "--type", "csv", "--json")
	if code != ExitOK || strings.Count(out, "\n") != 2 {
		t.Fatalf("ls: want 2 csv jobs, got\n%s", out)
	}
	// A cancelled job does not count, but once retried (same id, PENDING again) it does.
	other := writeFile(t, t.TempDir(), "other.csv", []byte(strings.Replace(text, "U00001", "U00099", 1)))
	code, out, _ = csvMain(t, "--data-dir", dataDir, "run", "--json", other) // queued, no engine yet
	queued, _ := parseJob(t, out)
	if code, _, errOut = csvMain(t, "--data-dir", dataDir, "cancel", fmt.Sprint(queued.Number)); code != ExitOK {
		t.Fatalf("cancel: %d %s", code, errOut)
	}
	if code, _, errOut = csvMain(t, "--data-dir", dataDir, "retry", fmt.Sprint(queued.Number)); code != ExitOK {
		t.Fatalf("retry: %d %s", code, errOut)
	}
	code, out, errOut = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", other)
	if j, _ := parseJob(t, out); code != ExitOK || j.ID != queued.ID || j.Status != "SUCCEEDED" {
		t.Fatalf("run after retry: %d %+v %s", code, j, errOut)
	}
	code, out, _ = csvMain(t, "--data-dir", dataDir, "ls", "--type", "csv", "--json")
	if code != ExitOK || strings.Count(out, "\n") != 3 {
		t.Fatalf("ls: want 3 csv jobs, got\n%s", out)
	}
	// A changed file is a new job.
	text2, _ := userLog(51, 10, nil)
	os.WriteFile(path, []byte(text2), 0o600)
	code, out, _ = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", path)
	if j, _ := parseJob(t, out); code != ExitOK || j.ID == first.ID || j.ID == forced.ID {
		t.Fatalf("changed file: exit %d job %d", code, j.ID)
	}
}

func TestCSVExport(t *testing.T) {
	dataDir, outDir := t.TempDir(), t.TempDir()
	text, _ := userLog(200, 20, map[int]string{5: "U00001,1", 7: "U00002,x,1"})
	path := writeFile(t, t.TempDir(), "export.csv", []byte(text))
	code, out, _ := csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", path)
	if code != ExitPartial {
		t.Fatalf("exit %d: %s", code, out)
	}
	j, _ := parseJob(t, out)
	id := fmt.Sprint(j.Number)
	xlsx := filepath.Join(outDir, "sub", "report.xlsx")
	if code, _, errOut := csvMain(t, "--data-dir", dataDir, "export", id, "--format", "xlsx", "-o", xlsx); code != ExitOK {
		t.Fatalf("export xlsx: %d %s", code, errOut)
	}
	b, err := os.ReadFile(xlsx)
	if err != nil || !bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		t.Fatalf("xlsx export is not a workbook: %v", err)
	}
	errorsCSV := filepath.Join(outDir, "errors.csv")
	if code, _, errOut := csvMain(t, "--data-dir", dataDir, "export", id, "-o", errorsCSV); code != ExitOK {
		t.Fatalf("export csv (format from extension): %d %s", code, errOut)
	}
	b, _ = os.ReadFile(errorsCSV)
	if !bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) || bytes.Count(b, []byte("\n")) != 3 || !bytes.Contains(b, []byte("ログイン回数,x")) {
		t.Fatalf("errors CSV (BOM, header and 2 rows expected):\n%s", b)
	}
	if code, _, errOut := csvMain(t, "--data-dir", dataDir, "export", id, "--format", "md", "-o", filepath.Join(outDir, "x.md")); code != ExitUsage || !strings.Contains(errOut, "E014") {
		t.Fatalf("export md: %d %s", code, errOut)
	}
}

func TestCSVSniffAndSchema(t *testing.T) {
	dataDir, dir := t.TempDir(), t.TempDir()
	var b strings.Builder
	b.WriteString("社員番号\t氏名\t入社日\t残業時間\t在籍\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "E%04d\t社員%d\t2024-04-%02d\t%d.5\ttrue\n", i, i, i%28+1, i)
	}
	sjis, _ := japanese.ShiftJIS.NewEncoder().String(b.String())
	path := writeFile(t, dir, "社員.tsv", []byte(sjis))
	code, out, errOut := csvMain(t, "--data-dir", dataDir, "csv", "sniff", path)
	if code != ExitOK {
		t.Fatalf("sniff: %d %s", code, errOut)
	}
	for _, want := range []string{"Shift_JIS", `\t (tab)`, `^E\\d{4}$`, "date", "decimal", "boolean", "社員番号", "Counts:    社員 (employee)"} {
		if !strings.Contains(out, want) {
			t.Errorf("sniff output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = csvMain(t, "--data-dir", dataDir, "csv", "sniff", "--json", path)
	if code != ExitOK {
		t.Fatal(code)
	}
	schemaPath := writeFile(t, dir, "schema.json", []byte(out))
	if _, err := csvjob.LoadSchema(schemaPath); err != nil {
		t.Fatalf("sniffed schema does not load: %v\n%s", err, out)
	}
	// The sniffed schema validates the same file: every row passes; it maps no table fields.
	code, out, errOut = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", "--schema", schemaPath, path)
	j, s := parseJob(t, out)
	if code != ExitOK || s.TotalRows != 40 || s.ErrorCount != 0 || s.Table != "" {
		t.Fatalf("run --schema: %d %+v %+v %+v %s", code, j, j.Error, s, errOut)
	}
	if code, _, errOut := csvMain(t, "--data-dir", dataDir, "csv", "sniff"); code != ExitUsage {
		t.Fatalf("sniff without a file: %d %s", code, errOut)
	}
	if code, _, errOut := csvMain(t, "--data-dir", dataDir, "run", "--schema", filepath.Join(dir, "missing.json"), path); code != ExitUsage || !strings.Contains(errOut, "E014") {
		t.Fatalf("missing schema file: %d %s", code, errOut)
	}
	for _, bad := range [][]string{{"--tolerate-percent", "150"}, {"--tolerate-count", "-1"}, {"--encoding", "latin-9"}, {"--delimiter", "ab"}} {
		if code, _, errOut := csvMain(t, append([]string{"--data-dir", dataDir, "run"}, append(bad, path)...)...); code != ExitUsage || !strings.Contains(errOut, "E014") {
			t.Fatalf("%v: exit %d %s", bad, code, errOut)
		}
	}
	// A forced encoding and delimiter are used as given.
	code, out, errOut = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", "--force", "--encoding", "cp932", "--delimiter", `\t`, "--schema", schemaPath, path)
	if _, s := parseJob(t, out); code != ExitOK || s.Encoding != csvjob.EncCP932 || s.Delimiter != "\t" {
		t.Fatalf("forced dialect: %d %+v %s", code, s, errOut)
	}
}

func TestCSVBadInputs(t *testing.T) {
	dataDir, dir := t.TempDir(), t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 3}, 200)...)
	cases := []struct {
		name string
		data []byte
		code string
		says string
	}{
		{"empty.csv", nil, "E004", "the file is empty"},
		{"header-only.csv", []byte("ユーザーID,ログイン回数,投稿回数\n"), "E006", "no data rows"},
		{"binary.csv", png, "E004", "binary"},
		{"letter.csv", []byte("Dear colleague,\nplease find the report attached.\nRegards\n"), "E004", "not a CSV"},
		{"wrong-header.csv", []byte("id,logins,posts\nU00001,1,2\n"), "E006", "ユーザーID"},
		{"invalid-utf8.csv", []byte("ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,\xff\xfe,3\n"), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, c.name, c.data)
			code, out, errOut := csvMain(t, "--data-dir", dataDir, "run", "--type", "csv", "--wait", "--json", path)
			if code != ExitFailed {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			j, _ := parseJob(t, out)
			if j.Status != "FAILED" || j.Error == nil || j.Error.Message == "" || j.Error.MessageJa == "" {
				t.Fatalf("job %+v", j)
			}
			if c.code != "" && (j.Error.Code != c.code || !strings.Contains(j.Error.Message, c.says)) {
				t.Fatalf("error %+v, want %s saying %q", j.Error, c.code, c.says)
			}
			if c.data == nil && !strings.Contains(j.Error.MessageJa, "ファイルが空です") {
				t.Fatalf("a 0-byte file's Japanese error: %q", j.Error.MessageJa)
			}
		})
	}
	if got := csvTable(t, dataDir); len(got) != 0 {
		t.Fatalf("failed files wrote %d users", len(got))
	}
}

func TestCSVDetect(t *testing.T) {
	dir := t.TempDir()
	text, _ := userLog(20, 5, nil)
	cases := []struct {
		name string
		data string
		csv  bool
	}{
		{"log.csv", text, true},
		{"LOG.TSV", "a\tb\n1\t2\n", true},
		{"export.txt", text, true},
		{"data", strings.ReplaceAll(text, ",", "|"), true},
		{"notes.txt", "Meeting notes\nWe agreed on the plan.\nNext meeting on Monday.\n", false},
		{"table.md", "a,b\n1,2\n3,4\n5,6\n", false},
		{"image.bin", "\x89PNG\r\n\x1a\n\x00\x00", false},
	}
	for _, c := range cases {
		p := writeFile(t, dir, c.name, []byte(c.data))
		if got := app.DetectType(p) == csvjob.Type; got != c.csv {
			t.Errorf("%s: detected %q, csv=%v wanted", c.name, app.DetectType(p), c.csv)
		}
	}
}

// TestCSVWorkflowLoaded checks that the shipped CSV workflow is loaded by the workflow engine, so
// CSV jobs run as executions of it rather than in-process.
func TestCSVWorkflowLoaded(t *testing.T) {
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Workflow(context.Background(), csvfamily.Workflow); err != nil {
		t.Fatalf("the csv-processing workflow is not loaded by the workflow engine: %v", err)
	}
	def, err := assets.Workflow(csvfamily.Workflow)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range a.ValidateWorkflow(def) {
		t.Errorf("%s %s at %s: %s", d.Severity, d.Code, d.Location, d.Message)
	}
}

func TestCSVAuditLog(t *testing.T) {
	text, _ := userLog(100, 10, map[int]string{42: "U00001,1,-3"})
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprint("audit-all=", all), func(t *testing.T) {
			dataDir := t.TempDir()
			path := writeFile(t, t.TempDir(), "audit.csv", []byte(text))
			args := []string{"--data-dir", dataDir, "run", "--wait", "--json", path}
			if all {
				args = append(args, "--audit-all")
			}
			if code, out, errOut := csvMain(t, args...); code != ExitPartial {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			db, err := store.OpenDir(dataDir)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			count := func(q string) (n int64) {
				if err := db.R.QueryRow(q).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := count(`SELECT count(*) FROM csv_audit WHERE log_type='BUSINESS_ERROR' AND line=43`); n != 1 {
				t.Fatalf("%d BUSINESS_ERROR records for line 43, want 1", n)
			}
			if ok, failed := count(`SELECT sum(rows_ok) FROM csv_audit WHERE log_type='SUCCESS' AND line=0`),
				count(`SELECT sum(rows_failed) FROM csv_audit WHERE log_type='SUCCESS' AND line=0`); ok != 99 || failed != 1 {
				t.Fatalf("chunk counts: %d ok, %d failed", ok, failed)
			}
			perRow := count(`SELECT count(*) FROM csv_audit WHERE log_type='SUCCESS' AND line>0`)
			if want := map[bool]int64{false: 0, true: 99}[all]; perRow != want {
				t.Fatalf("%d per-row SUCCESS records, want %d", perRow, want)
			}
		})
	}
}

// TestCSVJobRunsTheWorkflow: a CSV job always runs as an execution of the shipped workflow
// (there is no in-process path any more), ends PARTIAL with the Summary and fills the table.
func TestCSVJobRunsTheWorkflow(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	text, want := userLog(500, 40, map[int]string{3: "U1,1,1"})
	path := writeFile(t, t.TempDir(), "direct.csv", []byte(text))
	jobs, err := a.Submit(ctx, []string{path}, app.SubmitOptions{})
	if err != nil || len(jobs) != 1 || jobs[0].Type != csvjob.Type {
		t.Fatalf("%v %+v", err, jobs)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	j, err := a.Wait(wctx, jobs[0].ID)
	if err != nil || j.Status != "PARTIAL" {
		t.Fatalf("%v %+v", err, j)
	}
	var s csvjob.Summary
	if err := json.Unmarshal(j.Result, &s); err != nil || s.ErrorCount != 1 || s.TotalRows != 500 || s.Table != csvjob.Table {
		t.Fatalf("%v %+v", err, s)
	}
	var res csvfamily.Result
	json.Unmarshal(j.Result, &res)
	if x, err := a.Execution(ctx, res.ExecutionARN); err != nil || x.Status != flow.StatusSucceeded {
		t.Fatalf("no execution of the workflow ran for the job: %+v %v", x, err)
	}
	a.Close()
	sameTable(t, csvTable(t, a.DataDir()), want)
}

// BenchmarkCSVRunWait: the whole CSV job through the engine, as `jobdesk run --wait` runs it, on
// a generated 1M-row user log (50k users) in UTF-8 and Shift_JIS: validation, the Map over the
// chunks, the csv_users update of a fresh data folder and the result files (target ≤ 1.0 s).
// scripts/bench-csv.sh measures the same through the binary, with peak RSS, beside sqlite3.
func BenchmarkCSVRunWait(b *testing.B) {
	const rows, users = 1_000_000, 50_000
	var buf bytes.Buffer
	buf.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&buf, "U%05d,%d,%d\n", 1+next(users), next(100), next(1000))
	}
	sjis, err := japanese.ShiftJIS.NewEncoder().Bytes(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		enc  string
		data []byte
	}{{csvjob.EncUTF8, buf.Bytes()}, {csvjob.EncCP932, sjis}} {
		b.Run(c.enc, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "user-log-1m.csv")
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(c.data)))
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dataDir := b.TempDir()
				b.StartTimer()
				var out, errb bytes.Buffer
				if code := Main([]string{"--data-dir", dataDir, "run", "--wait", "--json", path}, &out, &errb); code != ExitOK {
					b.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// TestCSVCancel: cancelling a running CSV job aborts its workflow execution; the table is not
// changed.
func TestCSVCancel(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	text, _ := userLog(400_000, 5000, nil)
	path := writeFile(t, t.TempDir(), "cancel.csv", []byte(text))
	jobs, err := a.Submit(ctx, []string{path}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	// The execution and its job are committed together, then their event is published.
	events, stop := a.Subscribe(1024)
	defer stop()
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	var x flow.Execution
	for {
		// The execution is the csv job's child; cancel as soon as it runs.
		kids, _ := a.List(ctx, app.ListFilter{ParentID: id})
		if len(kids) > 0 {
			if x, err = a.ExecutionByJob(ctx, kids[0].ID); err == nil {
				break
			}
		}
		select {
		case <-events:
		case <-deadline:
			t.Fatal("the execution did not start")
		}
	}
	stop()
	if err := a.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	j, err := a.Wait(wctx, id)
	if err != nil || j.Status != "CANCELLED" {
		t.Fatalf("%v %+v", err, j)
	}
	if x, err = a.WaitExecution(wctx, x.ARN); err != nil || x.Status != flow.StatusAborted {
		t.Fatalf("execution %v %+v", err, x)
	}
	var n int
	openDB(t, a.DataDir()).R.QueryRow(`SELECT count(*) FROM csv_users`).Scan(&n)
	if n != 0 {
		t.Fatalf("a cancelled job wrote %d users", n)
	}
}

// TestCSVRetryAfterFailure: `jobdesk retry` of a failed CSV job runs a new execution of the
// workflow (the failed one is kept), so a corrected file then succeeds under the same job.
func TestCSVRetryAfterFailure(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	bad := map[int]string{}
	for i := 1; i <= 10; i++ {
		bad[i*7] = "U00001,x,1"
	}
	text, _ := userLog(100, 10, bad)
	path := writeFile(t, t.TempDir(), "retry.csv", []byte(text))
	jobs, err := a.Submit(ctx, []string{path}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	wait := func(want string) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		j, err := a.Wait(wctx, id)
		if err != nil || string(j.Status) != want {
			t.Fatalf("want %s: %v %+v", want, err, j)
		}
	}
	wait("FAILED")
	good, want := userLog(100, 10, nil)
	os.WriteFile(path, []byte(good), 0o600)
	if _, err := a.Retry(ctx, id); err != nil {
		t.Fatal(err)
	}
	wait("SUCCEEDED")
	xs, _, err := a.Executions(ctx, csvfamily.Workflow, 100, "")
	if err != nil || len(xs) != 2 {
		t.Fatalf("%v: %d executions, want the failed one and the retry", err, len(xs))
	}
	a.Close()
	sameTable(t, csvTable(t, a.DataDir()), want)
}

// killPoint kills this process with SIGKILL the n-th time the operation op has committed: the
// crash tests' way to stop a real process exactly between two commits of a step.
type killPoint struct {
	op    string
	n     int64
	count atomic.Int64
}

// parseKillPoint reads "op:n" (JOBDESK_CRASH_AT); "" is none.
func parseKillPoint(s string) *killPoint {
	op, n, ok := strings.Cut(s, "#")
	if !ok {
		return nil
	}
	k := &killPoint{op: op}
	fmt.Sscan(n, &k.n)
	return k
}

// after is called once op committed.
func (k *killPoint) after(op string) {
	if k == nil || op != k.op || k.count.Add(1) != k.n {
		return
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Minute) // never reached: SIGKILL cannot be caught
}

// killCSVStore is the csv-processor's Store, killing the process after a commit.
type killCSVStore struct {
	csvjob.Store
	k *killPoint
}

func (s killCSVStore) StageChunk(ctx context.Context, run csvjob.Run, chunk int, data []byte) error {
	err := s.Store.StageChunk(ctx, run, chunk, data)
	s.k.after("StageChunk")
	return err
}

func (s killCSVStore) Audit(ctx context.Context, run csvjob.Run, call string, recs []csvjob.AuditRecord) error {
	err := s.Store.Audit(ctx, run, call, recs)
	s.k.after("Audit")
	return err
}

func (s killCSVStore) ApplyResult(ctx context.Context, run csvjob.Run, sum *csvjob.Summary, users *csvjob.Users) error {
	err := s.Store.ApplyResult(ctx, run, sum, users)
	s.k.after("ApplyResult")
	return err
}

func (s killCSVStore) ClearStaged(ctx context.Context, run csvjob.Run) {
	s.Store.ClearStaged(ctx, run)
	s.k.after("ClearStaged")
}

// killBlobs is a blob store killing the process once an object with a given base name is
// committed ("write:NAME").
type killBlobs struct {
	blob.Store
	k *killPoint
}

type killWriter struct {
	blob.Writer
	name string
	k    *killPoint
}

func (w killWriter) Commit() error {
	err := w.Writer.Commit()
	w.k.after("write:" + w.name)
	return err
}

func (b killBlobs) Create(ctx context.Context, uri string) (blob.Writer, error) {
	w, err := b.Store.Create(ctx, uri)
	if err != nil {
		return w, err
	}
	return killWriter{Writer: w, name: filepath.Base(uri), k: b.k}, nil
}

// killCache is the converter's cache, killing the process after a lookup or a stored result.
type killCache struct {
	docjob.Cache
	k *killPoint
}

func (c killCache) Get(ctx context.Context, k docjob.Key) (docjob.Result, bool, error) {
	res, ok, err := c.Cache.Get(ctx, k)
	c.k.after("Get")
	return res, ok, err
}

func (c killCache) Put(ctx context.Context, k docjob.Key, res docjob.Result) error {
	err := c.Cache.Put(ctx, k, res)
	c.k.after("Put")
	return err
}

// TestCrashHelperProcess is the process the crash tests start (the test binary run again, see
// crashRun): it submits JOBDESK_CRASH_FILE as JOBDESK_CRASH_TYPE in the data folder it was given
// (finding the job again when it exists), runs the engine until the job is final and prints it
// as JSON; with JOBDESK_CRASH_AT ("op#n") it kills itself with SIGKILL right after that commit.
func TestCrashHelperProcess(t *testing.T) {
	dir := crashtest.Child(t, "the crash tests")
	a, err := app.Open(app.Config{DataDir: dir, Workers: 2})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if k := parseKillPoint(os.Getenv("JOBDESK_CRASH_AT")); k != nil {
		cf, _ := app.FamilyOf[*csvfamily.Family](a)
		p := cf.Processor()
		p.Store, p.Blob = killCSVStore{Store: p.Store, k: k}, killBlobs{Store: p.Blob, k: k}
		df, _ := app.FamilyOf[*convertfamily.Family](a)
		conv := df.Converter()
		conv.Cache, conv.Blobs = killCache{Cache: conv.Cache, k: k}, killBlobs{Store: conv.Blobs, k: k}
	}
	ctx := context.Background()
	jobs, err := a.Submit(ctx, []string{os.Getenv("JOBDESK_CRASH_FILE")}, app.SubmitOptions{Type: os.Getenv("JOBDESK_CRASH_TYPE")})
	if err == nil {
		err = a.StartEngine(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	j, err := a.Wait(wctx, jobs[0].ID)
	if err == nil && j.Status.Final() {
		b, _ := json.Marshal(j)
		a.Close()
		fmt.Println(string(b))
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "the job did not finish in 2 minutes: %s %v\n", j.Status, err)
	os.Exit(3)
}

// crashRun runs TestCrashHelperProcess for file in dir and returns the final job's JSON, or
// killed = true when the process died by SIGKILL at killAt.
func crashRun(t *testing.T, dir, file, typ, killAt string) (out string, killed bool) {
	t.Helper()
	cmd := crashtest.Command(context.Background(), "TestCrashHelperProcess", dir)
	cmd.Env = append(cmd.Env, "JOBDESK_CRASH_FILE="+file, "JOBDESK_CRASH_TYPE="+typ, "JOBDESK_CRASH_AT="+killAt)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }() // reaped, so the queue sees the process gone
	var err error
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the process did not end: %s", stderr.String())
	}
	if crashtest.Killed(err) {
		return "", true
	}
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return lines[len(lines)-1], false
}

// crashRecover runs the job of file in dir, killed at killAt (which must be reached), then again
// until it is final (at most 5 runs), and returns the final job's JSON.
func crashRecover(t *testing.T, dir, file, typ, killAt string) string {
	t.Helper()
	if _, killed := crashRun(t, dir, file, typ, killAt); !killed {
		t.Fatalf("the run was not killed at %s", killAt)
	}
	for run := 0; run < 5; run++ {
		if out, killed := crashRun(t, dir, file, typ, ""); !killed {
			return out
		}
	}
	t.Fatal("the job never finished")
	return ""
}

// csvOutcome is what a finished CSV job left, with what differs between two runs of the same
// file taken out (times, paths, execution names): the job's status and summary, the tables and
// the result files.
func csvOutcome(t *testing.T, dir, out string) string {
	t.Helper()
	var j job.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	var s csvjob.Summary
	json.Unmarshal(j.Result, &s)
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %v\nsummary %s %d rows, %d ok, %d failed, %d error records, %d users, %d changed, table %q: %s / %s\n",
		j.Status, j.Error, s.Status, s.TotalRows, s.SuccessCount, s.ErrorCount, s.ErrorRecords, s.Users, s.UsersChanged, s.Table, s.Message, s.MessageJa)
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`SELECT user_id, login_count, post_count FROM csv_users ORDER BY user_id`,
		`SELECT status, rows_total, rows_ok, rows_failed, users, users_changed FROM csv_imports`,
		`SELECT log_type, line, rows_ok, rows_failed, detail FROM csv_audit ORDER BY log_type, line, detail`,
		`SELECT count(*) FROM csv_stage`,
	} {
		rows, err := db.R.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	errs, err := os.ReadFile(s.ErrorsCSV)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "errors.csv:\n%s", errs)
	x, err := excelize.OpenFile(s.ReportXLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, sheet := range x.GetSheetList() {
		rows, _ := x.GetRows(sheet)
		for _, r := range rows {
			if len(r) > 0 && (strings.HasPrefix(r[0], "処理時間") || strings.HasPrefix(r[0], "実行名")) {
				continue // how long it took, and the execution's name (from the time it started)
			}
			fmt.Fprintf(&b, "%s: %q\n", sheet, r)
		}
	}
	return strings.ReplaceAll(b.String(), dir, "DATA")
}

// TestCSVKilledBetweenCommits kills a real process with SIGKILL right after each commit of each
// step of a CSV job (validation's manifest, a staged chunk, the audit records, the users and the
// import record, the cleared chunks), runs it again until the job is final, and checks the
// status, tables and files are those of an undisturbed run.
func TestCSVKilledBetweenCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	text, _ := userLog(3000, 60, map[int]string{5: "U00001,1", 7: "U00002,x,1", 900: "U00003,-1,2"})
	file := writeFile(t, t.TempDir(), "users.csv", []byte(text))
	refDir := t.TempDir()
	ref, killed := crashRun(t, refDir, file, "csv", "")
	if killed {
		t.Fatal("the undisturbed run was killed")
	}
	want := csvOutcome(t, refDir, ref)
	if !strings.Contains(want, "summary PARTIAL 3000 rows") {
		t.Fatalf("undisturbed run:\n%s", want)
	}
	for _, at := range []string{"write:context.json#1", "StageChunk#1", "Audit#1", "ApplyResult#1", "ClearStaged#1"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			got := csvOutcome(t, dir, crashRecover(t, dir, file, "csv", at))
			if got != want {
				t.Fatalf("killed at %s, the job ended differently from an undisturbed run:\n%s", at, lineDiff(got, want))
			}
		})
	}
}

// lineDiff lists the lines of got and want that differ (got first, then want).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "line %d:\n  got  %s\n  want %s\n", i+1, gl, wl)
		}
	}
	return b.String()
}
