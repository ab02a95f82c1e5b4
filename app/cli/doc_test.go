package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"jobdesk/app"
	"jobdesk/app/convertfamily"
	"jobdesk/app/family"
	"jobdesk/assets"
	"jobdesk/engine/docjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/flow/asl"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// docCorpus copies a committed corpus file of engine/docjob into dir under the name as.
func docCorpus(t *testing.T, dir, name, as string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "engine", "docjob", "testdata", name))
	if err != nil {
		t.Fatalf("corpus file %s: %v", name, err)
	}
	p := filepath.Join(dir, as)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeTemp writes data to dir/name and returns the path.
func writeTemp(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// docJob is what `run --json` prints for a conversion job, with its result decoded.
type docJob struct {
	ID      int64  `json:"id"`
	Number  int64  `json:"number"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Error   *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		MessageJa string `json:"message_ja"`
	} `json:"error"`
	Result struct {
		Status     string `json:"status"`
		Reason     string `json:"reason"`
		Kind       string `json:"kind"`
		SHA256     string `json:"sha256"`
		PageCount  int    `json:"page_count"`
		TextLength int    `json:"extracted_text_length"`
		Method     string `json:"extraction_method"`
		OutputPath string `json:"output_path"`
		Cached     bool   `json:"cached"`
		Children   []struct {
			Name, Status, Code, Reason string
		} `json:"children"`
	} `json:"result"`
}

func parseDocJobs(t *testing.T, out string) []docJob {
	t.Helper()
	var jobs []docJob
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var j docJob
		if err := dec.Decode(&j); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// convertCLI runs `run --wait --json ARGS...` and returns the exit code and the single job.
func convertCLI(t *testing.T, dataDir string, args ...string) (int, docJob, string) {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"--data-dir", dataDir, "run", "--wait", "--json"}, args...)...)
	jobs := parseDocJobs(t, out)
	if len(jobs) != 1 {
		t.Fatalf("exit %d: want one job, got %q\n%s", code, out, errOut)
	}
	return code, jobs[0], errOut
}

// exportMD exports the job with number n as Markdown and returns the text.
func exportMD(t *testing.T, dataDir string, n int64) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.md")
	code, stdout, errOut := runCLI(t, "--data-dir", dataDir, "export", itoa(n), "--format", "md", "-o", out)
	if code != ExitOK {
		t.Fatalf("export %d: exit %d %s %s", n, code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func makeTestZip(t *testing.T, path string, entries map[string][]byte, order []string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range order {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(entries[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDocConvertEachFormat converts one file of every format through the command line and checks
// key phrases in the exported Markdown.
func TestDocConvertEachFormat(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	zipPath := filepath.Join(in, "資料一式.zip")
	pdf, _ := os.ReadFile(filepath.Join("..", "..", "engine", "docjob", "testdata", "report.pdf"))
	makeTestZip(t, zipPath, map[string][]byte{"議事録.txt": []byte("本日の議題は予算です。"), "報告書.pdf": pdf},
		[]string{"議事録.txt", "報告書.pdf"})
	tests := []struct {
		name, path, kind string
		pages            int
		want             []string
	}{
		{"pdf", docCorpus(t, in, "report.pdf", "report.pdf"), "pdf", 3,
			[]string{"<!-- Page 1 -->", "補助金申請の手引き", "第3ページ：よくある質問と回答。"}},
		{"pdf renamed", docCorpus(t, in, "vertical.pdf", "縦書き.dat"), "pdf", 1,
			[]string{"縦書きの文章です。"}},
		{"docx", docCorpus(t, in, "report.docx", "report.docx"), "docx", 1,
			[]string{"# 補助金申請の手引き", "- 事業計画書", "| 小規模事業者 |", "> Header: 社外秘 ヘッダー"}},
		{"xlsx", docCorpus(t, in, "book.xlsx", "book.xlsx"), "xlsx", 0,
			[]string{"## 売上", "令和6年4月1日", "￥150,000", "## 非表示メモ (hidden)"}},
		{"csv", docCorpus(t, in, "sjis.csv", "社員.csv"), "csv", 1,
			[]string{"| 氏名 | 部署 | 内線 |", "| 山田太郎 | 総務部 | 1001 |"}},
		{"txt", docCorpus(t, in, "eucjp.txt", "memo.txt"), "txt", 1,
			[]string{"来週の会議は第二会議室で行います。"}},
		{"zip", zipPath, "zip", 4,
			[]string{"# 議事録.txt", "本日の議題は予算です。", "# 報告書.pdf", "補助金申請の手引き"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, j, errOut := convertCLI(t, dataDir, "--type", "convert", tc.path)
			if code != ExitOK || j.Status != "SUCCEEDED" || j.Type != convertfamily.Type {
				t.Fatalf("exit %d status %s %+v\n%s", code, j.Status, j.Error, errOut)
			}
			r := j.Result
			if r.Status != "ready" || r.Kind != tc.kind || r.Method != "NATIVE" || r.TextLength == 0 || len(r.SHA256) != 64 {
				t.Fatalf("result %+v", r)
			}
			if tc.pages > 0 && r.PageCount != tc.pages {
				t.Fatalf("page count %d, want %d", r.PageCount, tc.pages)
			}
			if filepath.Dir(r.OutputPath) != filepath.Join(dataDir, "documents") || filepath.Ext(r.OutputPath) != ".md" {
				t.Fatalf("output path %s", r.OutputPath)
			}
			md := exportMD(t, dataDir, j.Number)
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("missing %q in\n%s", w, md)
				}
			}
		})
	}
}

// TestDocDetectsByContent: without --type, PDF/Office/ZIP/text files go to the convert family by
// their content, and a CSV does not.
func TestDocDetectsByContent(t *testing.T) {
	in := t.TempDir()
	imageType := "" // an image is converted (OCR) only where tesseract can read it
	if ok, _ := docjob.ImageOCRAvailable(); ok {
		imageType = convertfamily.Type
	}
	tests := []struct {
		path, want string
	}{
		{docCorpus(t, in, "report.pdf", "scan0001"), convertfamily.Type},
		{docCorpus(t, in, "report.docx", "report.docx"), convertfamily.Type},
		{docCorpus(t, in, "book.xlsx", "renamed.bin"), convertfamily.Type},
		{docCorpus(t, in, "eucjp.txt", "memo.txt"), convertfamily.Type},
		{docCorpus(t, in, "eucjp.txt", "README.md"), convertfamily.Type},
		{docCorpus(t, in, "sjis.csv", "社員.csv"), ""},
		{writeTemp(t, in, "old.doc", append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, []byte("W\x00o\x00r\x00d\x00D\x00o\x00c\x00u\x00m\x00e\x00n\x00t\x00")...)), convertfamily.Type},
		{writeTemp(t, in, "note.rtf", []byte(`{\rtf1\ansi hello}`)), convertfamily.Type},
		{writeTemp(t, in, "photo.jpg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10}), imageType},
		{docCorpus(t, in, "garbage.pdf", "garbage.bin"), ""},
	}
	for _, tc := range tests {
		got := (&convertfamily.Family{}).Detect(tc.path, family.ReadHead(tc.path))
		if got != tc.want {
			t.Errorf("%s: %q, want %q", filepath.Base(tc.path), got, tc.want)
		}
	}
	dataDir := t.TempDir()
	code, j, errOut := convertCLI(t, dataDir, tests[0].path)
	if code != ExitOK || j.Type != convertfamily.Type || j.Result.Kind != "pdf" {
		t.Fatalf("exit %d %+v\n%s", code, j, errOut)
	}
}

// TestDocZipBadEntryPartial: an archive with a damaged entry, a password-protected PDF and a
// zip-slip name ends PARTIAL (exit code 3) listing every one of them.
func TestDocZipBadEntryPartial(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "engine", "docjob", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	zp := filepath.Join(in, "bundle.zip")
	makeTestZip(t, zp, map[string][]byte{
		"ok.docx": read("report.docx"), "broken.pdf": read("truncated.pdf"),
		"locked.pdf": read("pw_user_aes128.pdf"), "../evil.txt": []byte("x"),
		"__MACOSX/._ok.docx": []byte("junk"),
	}, []string{"ok.docx", "broken.pdf", "locked.pdf", "../evil.txt", "__MACOSX/._ok.docx"})
	code, j, errOut := convertCLI(t, dataDir, "--type", "convert", zp)
	if code != ExitPartial || j.Status != "PARTIAL" || j.Result.Status != "partial" {
		t.Fatalf("exit %d status %s result %+v\n%s", code, j.Status, j.Result, errOut)
	}
	want := map[string]string{"ok.docx": "ready", "broken.pdf": "E004", "locked.pdf": "E005", "../evil.txt": "E004"}
	for _, c := range j.Result.Children {
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected child %+v", c)
			continue
		}
		if (w == "ready" && c.Status != "ready") || (w != "ready" && (c.Status != "failed" || c.Code != w)) {
			t.Errorf("child %+v, want %s", c, w)
		}
		if w != "ready" && !strings.Contains(j.Result.Reason, c.Name) {
			t.Errorf("reason %q does not name %s", j.Result.Reason, c.Name)
		}
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("children missing: %v", want)
	}
	md := exportMD(t, dataDir, j.Number)
	if !strings.Contains(md, "補助金申請の手引き") || strings.Contains(md, "junk") {
		t.Fatalf("exported\n%s", md)
	}
	// The conversion ran the document-conversion workflow: one execution under the job, and
	// one child conversion job per safe entry (the Map), besides ingest, extract and collect.
	a, err := app.Open(app.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	execs, err := a.List(ctx, app.ListFilter{ParentID: j.ID, Type: flow.TypeExecution})
	if err != nil || len(execs) != 1 {
		t.Fatalf("executions under job %d: %v %v", j.ID, execs, err)
	}
	x, err := a.ExecutionByJob(ctx, execs[0].ID)
	if err != nil || x.Status != "SUCCEEDED" || !strings.Contains(x.StateMachineARN, convertfamily.Workflow) {
		t.Fatalf("execution %+v %v", x, err)
	}
	tasks, _ := a.List(ctx, app.ListFilter{ParentID: execs[0].ID, Type: flow.FunctionTypePrefix + docjob.FunctionName})
	perState := map[string]int{}
	for _, k := range tasks {
		perState[k.Name]++
	}
	if perState["ConvertEntry"] != 3 || perState["Ingest"] != 1 || perState["ExtractEntries"] != 1 || perState["Collect"] != 1 {
		t.Fatalf("task jobs per state %v", perState)
	}
	hist, _, err := a.ExecutionHistory(ctx, x.ARN, 0, "")
	iterations := 0
	for _, e := range hist {
		if e.Type == "MapIterationStarted" {
			iterations++
		}
	}
	if err != nil || iterations != 3 {
		t.Fatalf("history: %d map iterations, %v", iterations, err)
	}
	// The table output lists the job as PARTIAL too.
	code, out, _ := runCLI(t, "--data-dir", dataDir, "ls")
	if code != ExitOK || !strings.Contains(out, "PARTIAL") {
		t.Fatalf("ls: %s", out)
	}
}

// TestDocFailures: password-protected files fail with E005 (never "damaged"), damaged ones with
// E004 "damaged", unsupported ones with E004 naming the type; none can be exported.
func TestDocFailures(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	png := filepath.Join(in, "photo.png")
	os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o600)
	tests := []struct {
		path, code, says string
	}{
		{docCorpus(t, in, "pw_user_aes256.pdf", "secret.pdf"), "E005", "password-protected"},
		{docCorpus(t, in, "pw_user_rc4.pdf", "secret2.pdf"), "E005", "password-protected"},
		{docCorpus(t, in, "truncated.pdf", "broken.pdf"), "E004", "damaged"},
		{docCorpus(t, in, "truncated.docx", "broken.docx"), "E004", "damaged"},
		{docCorpus(t, in, "truncated.xlsx", "broken.xlsx"), "E004", "damaged"},
		{png, "E004", "image"},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			code, j, errOut := convertCLI(t, dataDir, "--type", "convert", tc.path)
			if code != ExitFailed || j.Status != "FAILED" || j.Error == nil || j.Error.Code != tc.code {
				t.Fatalf("exit %d %s %+v\n%s", code, j.Status, j.Error, errOut)
			}
			if !strings.Contains(j.Error.Message, tc.says) || j.Error.MessageJa == "" {
				t.Fatalf("error %+v does not say %q", j.Error, tc.says)
			}
			if tc.code == "E005" && strings.Contains(j.Error.Message, "damaged") {
				t.Fatalf("password file called damaged: %+v", j.Error)
			}
			out := filepath.Join(t.TempDir(), "x.md")
			if c, _, e := runCLI(t, "--data-dir", dataDir, "export", itoa(j.Number), "--format", "md", "-o", out); c != ExitUsage || !strings.Contains(e, "E014") {
				t.Fatalf("export of a failed job: %d %s", c, e)
			}
		})
	}
}

// TestDocCacheAndForce: the same bytes convert once; a second drop (even under another name)
// returns the job that converted them, and --force converts again in a job of its own.
func TestDocCacheAndForce(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	a := docCorpus(t, in, "report.pdf", "a.pdf")
	b := docCorpus(t, in, "report.pdf", "copy of a.pdf")
	_, first, _ := convertCLI(t, dataDir, "--type", "convert", a)
	_, second, _ := convertCLI(t, dataDir, "--type", "convert", b)
	code, forced, errOut := convertCLI(t, dataDir, "--type", "convert", "--force", a)
	if code != ExitOK || first.Result.Cached || second.ID != first.ID || forced.ID == first.ID || forced.Result.Cached {
		t.Fatalf("jobs: first %d second %d forced %d (cached %v) (exit %d %s)", first.ID, second.ID, forced.ID, forced.Result.Cached, code, errOut)
	}
	if forced.Result.SHA256 != first.Result.SHA256 || forced.Result.OutputPath != first.Result.OutputPath ||
		forced.Result.TextLength != first.Result.TextLength {
		t.Fatalf("converted again, the result differs: %+v vs %+v", forced.Result, first.Result)
	}
	if md := exportMD(t, dataDir, second.Number); !strings.Contains(md, "補助金申請の手引き") {
		t.Fatalf("export\n%s", md)
	}
	// A password failure is remembered as well and stays E005.
	pw := docCorpus(t, in, "pw_user_aes256.pdf", "pw.pdf")
	for i := 0; i < 2; i++ {
		if _, j, _ := convertCLI(t, dataDir, "--type", "convert", pw); j.Error == nil || j.Error.Code != "E005" {
			t.Fatalf("run %d: %+v", i, j)
		}
	}
	// The convert command prints the summary and the Markdown path (of the job that converted
	// these bytes last: the forced one).
	code, out, errOut := runCLI(t, "--data-dir", dataDir, "convert", a)
	if code != ExitOK || !strings.Contains(out, "SUCCEEDED") || !strings.Contains(out, first.Result.OutputPath) || !regexp.MustCompile(`(?m)^`+itoa(forced.Number)+`\s+SUCCEEDED`).MatchString(out) {
		t.Fatalf("convert: %d\n%s\n%s", code, out, errOut)
	}
	// Exporting in another format is refused.
	if c, _, e := runCLI(t, "--data-dir", dataDir, "export", itoa(first.Number), "--format", "csv", "-o", filepath.Join(in, "x.csv")); c != ExitUsage || !strings.Contains(e, "md") {
		t.Fatalf("export csv: %d %s", c, e)
	}
}

// TestDocScanPartial: a PDF with no text layer ends PARTIAL with "scanned — no text layer".
func TestDocScanPartial(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	code, j, errOut := convertCLI(t, dataDir, "--type", "convert", "--no-ocr", docCorpus(t, in, "scan.pdf", "scan.pdf"))
	if code != ExitPartial || j.Status != "PARTIAL" || !strings.Contains(j.Result.Reason, "scanned — no text layer") || j.Result.Method != "PARTIAL" {
		t.Fatalf("exit %d %+v\n%s", code, j, errOut)
	}
}

// TestDocWorkflowValidates checks the shipped workflow against the engine's ASL validator with
// the strict resource check (every Lambda function it names is registered), and that the app
// loaded it, so conversions run through it.
func TestDocWorkflowValidates(t *testing.T) {
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	def, err := assets.Workflow(convertfamily.Workflow)
	if err != nil {
		t.Fatal(err)
	}
	if ds := a.ValidateWorkflow(def); len(ds) != 0 {
		t.Fatalf("diagnostics: %+v", ds)
	}
	sm, err := a.Workflow(context.Background(), convertfamily.Workflow)
	if err != nil || !strings.HasSuffix(sm.ARN, ":stateMachine:"+convertfamily.Workflow) {
		t.Fatalf("workflow not loaded: %q %v", sm.ARN, err)
	}
}

// TestDocConvertJSONCarriesError: `jobdesk convert --json` prints a failed conversion with its
// error (code, message, message_ja), name and path, and a successful one without an error.
func TestDocConvertJSONCarriesError(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	pw := docCorpus(t, in, "pw_user_aes256.pdf", "secret.pdf")
	ok := docCorpus(t, in, "eucjp.txt", "memo.txt")
	code, out, errOut := runCLI(t, "--data-dir", dataDir, "convert", "--json", pw, ok)
	if code != ExitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	type line struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
		Name   string `json:"name"`
		Path   string `json:"path"`
		Error  *struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			MessageJa string `json:"message_ja"`
		} `json:"error"`
	}
	var got []line
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		got = append(got, l)
	}
	if len(got) != 2 {
		t.Fatalf("want 2 lines: %q", out)
	}
	f, s := got[0], got[1]
	if f.Name != "secret.pdf" {
		f, s = s, f
	}
	if f.Status != "FAILED" || f.Name != "secret.pdf" || f.Path != pw || f.Error == nil || f.Error.Code != "E005" ||
		!strings.Contains(f.Error.Message, "password-protected") || f.Error.MessageJa == "" {
		t.Fatalf("failed job printed as %+v (%q)", f, out)
	}
	if s.Status != "SUCCEEDED" || s.Error != nil {
		t.Fatalf("succeeded job printed as %+v", s)
	}
}

// TestDocZipNothingConvertedSaysWhy: through the workflow, an archive none of whose entries
// converts fails with the first entry's own code and reason, as the direct converter does.
func TestDocZipNothingConvertedSaysWhy(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	zipOf := func(name string, data []byte, declared uint64) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		h := &zip.FileHeader{Name: name, Method: zip.Store}
		if declared > 0 {
			h.CompressedSize64, h.UncompressedSize64 = uint64(len(data)), declared
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data)
		} else {
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	deep := zipOf("c.zip", zipOf("inner.txt", []byte("深い"), 0), 0)
	deep = zipOf("b.zip", deep, 0)
	deep = zipOf("a.zip", deep, 0)
	tests := []struct {
		file string
		data []byte
		code string
		says string
	}{
		{"onlyevil.zip", zipOf("../evil.txt", []byte("x"), 0), "E004", "path goes up a folder"},
		{"bomb.zip", zipOf("big.txt", []byte("x"), 60<<20), "E003", "entry too large"},
		{"nested.zip", deep, "E003", "nested more than"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p := writeTemp(t, in, tc.file, tc.data)
			code, j, errOut := convertCLI(t, dataDir, "--type", "convert", p)
			if code != ExitFailed || j.Error == nil || j.Error.Code != tc.code || !strings.Contains(j.Error.Message, tc.says) ||
				j.Error.MessageJa == "" || strings.Contains(j.Error.MessageJa, "could") {
				t.Fatalf("exit %d %s %+v\n%s", code, j.Status, j.Error, errOut)
			}
		})
	}
}

// TestDocWorkflowDoesNotRetryTimeouts: the Tasks that convert (Convert, and ConvertEntry inside
// the Map) do not retry the converter's own deadline error nor States.Timeout, and still retry
// transient Lambda errors.
func TestDocWorkflowDoesNotRetryTimeouts(t *testing.T) {
	def, err := assets.Workflow(convertfamily.Workflow)
	if err != nil {
		t.Fatal(err)
	}
	m, diags := asl.Parse(def, nil)
	for _, d := range diags {
		if d.Severity == "ERROR" || m == nil {
			t.Fatalf("parse: %+v", d)
		}
	}
	_, cerr := docjob.Convert(context.Background(), []byte("本文です。\n"), "a.txt", docjob.Options{Timeout: time.Nanosecond})
	je := job.AsError(cerr)
	if je == nil || je.Code != "E011" {
		t.Fatalf("deadline error %v", cerr)
	}
	entries := m.States["ConvertEntries"]
	if entries == nil || entries.Processor == nil {
		t.Fatal("no ConvertEntries Map")
	}
	for name, s := range map[string]*asl.State{"Convert": m.States["Convert"], "ConvertEntry": entries.Processor.States["ConvertEntry"]} {
		if s == nil {
			t.Fatalf("no state %s", name)
		}
		for _, e := range []string{je.ErrorName(), "States.Timeout"} {
			if i := s.FindRetry(e); i >= 0 {
				t.Errorf("%s retries %s: %+v", name, e, s.Retry[i])
			}
		}
		if s.FindRetry("Lambda.ServiceException") < 0 {
			t.Errorf("%s no longer retries transient Lambda errors", name)
		}
	}
}

// TestDocZipReused: converting the same ZIP bytes again (another name) reuses the archive's
// stored result through the workflow, other options or --force convert again.
func TestDocZipReused(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	entries := map[string][]byte{"議事録.txt": []byte("本日の議題は予算です。"), "memo.txt": []byte("メモ")}
	a, b := filepath.Join(in, "a.zip"), filepath.Join(in, "b.zip")
	makeTestZip(t, a, entries, []string{"議事録.txt", "memo.txt"})
	data, _ := os.ReadFile(a)
	os.WriteFile(b, data, 0o600)
	_, first, e1 := convertCLI(t, dataDir, "--type", "convert", a)
	// The same bytes dropped again are the same job; once that job is gone (the retention
	// purge), a new job reuses the stored result.
	if _, again, _ := convertCLI(t, dataDir, "--type", "convert", b); again.ID != first.ID {
		t.Fatalf("the same archive again made job %d, want job %d", again.ID, first.ID)
	}
	forgetSubmission(t, dataDir, first.ID)
	_, second, e2 := convertCLI(t, dataDir, "--type", "convert", b)
	_, forced, e3 := convertCLI(t, dataDir, "--type", "convert", "--force", a)
	_, furi, e4 := convertCLI(t, dataDir, "--type", "convert", "--furigana", a)
	for i, j := range []docJob{first, second, forced, furi} {
		if j.Status != "SUCCEEDED" || j.Result.Kind != "zip" {
			t.Fatalf("run %d: %+v\n%s%s%s%s", i, j, e1, e2, e3, e4)
		}
	}
	if first.Result.Cached || !second.Result.Cached || forced.Result.Cached || furi.Result.Cached {
		t.Fatalf("cached: %v %v %v %v", first.Result.Cached, second.Result.Cached, forced.Result.Cached, furi.Result.Cached)
	}
	if second.Result.OutputPath != first.Result.OutputPath || second.Result.SHA256 != first.Result.SHA256 || len(second.Result.Children) != 2 {
		t.Fatalf("reused result differs: %+v vs %+v", second.Result, first.Result)
	}
	if md := exportMD(t, dataDir, second.Number); !strings.Contains(md, "本日の議題は予算です。") {
		t.Fatalf("export of the reused result:\n%s", md)
	}
	// The reuse skipped the Map: no entry conversions ran under the second job's execution.
	reopened, err := app.Open(app.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	ctx := context.Background()
	execs, _ := reopened.List(ctx, app.ListFilter{ParentID: second.ID, Type: flow.TypeExecution})
	if len(execs) != 1 {
		t.Fatalf("executions %v", execs)
	}
	tasks, _ := reopened.List(ctx, app.ListFilter{ParentID: execs[0].ID, Type: flow.FunctionTypePrefix + docjob.FunctionName})
	for _, k := range tasks {
		if k.Name == "ConvertEntry" || k.Name == "ExtractEntries" {
			t.Fatalf("the reused archive was converted again: %s", k.Name)
		}
	}
}

// docCrashOutcome is what a finished conversion left, with what differs between two runs taken out
// (the data folder, whether the result came from the cache): the job's status and result, the
// Markdown file and the cache's rows.
func docCrashOutcome(t *testing.T, dir, out string) string {
	t.Helper()
	var j job.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	var res map[string]any
	json.Unmarshal(j.Result, &res)
	delete(res, "cached")
	rb, _ := json.Marshal(res)
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %v\nresult %s\n", j.Status, j.Error, rb)
	if p, _ := res["output_path"].(string); p != "" {
		md, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "markdown:\n%s\n", md)
	}
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.R.Query(`SELECT sha256, options, name, status, output_path FROM docjob_results ORDER BY sha256, options`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var sha, opts, name, status, outPath string
		rows.Scan(&sha, &opts, &name, &status, &outPath)
		fmt.Fprintln(&b, sha, opts, name, status, outPath)
	}
	return strings.ReplaceAll(b.String(), dir, "DATA")
}

// TestDocKilledBetweenCommits kills a real process with SIGKILL inside each step of a conversion
// (ingest's cache look-up; convert after the Markdown file and after the cache row; for a ZIP,
// after the entries are extracted, after a child's row and after collect's row), runs it again
// until the job is final, and checks status, result, Markdown and cache rows are those of an
// undisturbed run.
func TestDocKilledBetweenCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	in := t.TempDir()
	text := writeTemp(t, in, "notes.txt", []byte("会議の議事録\n\n本日の議題は予算です。\n"))
	zipPath := filepath.Join(in, "bundle.zip")
	makeTestZip(t, zipPath, map[string][]byte{"議事録.txt": []byte("本日の議題は予算です。"), "memo.txt": []byte("メモ")},
		[]string{"議事録.txt", "memo.txt"})
	cases := []struct {
		file string
		at   []string
	}{
		{text, []string{"Get#1", "write:notes_" + sha8(t, text) + ".md#1", "Put#1"}},
		{zipPath, []string{"Get#1", "write:memo.txt#1", "Put#1", "Put#3", "write:bundle_" + sha8(t, zipPath) + ".md#1"}},
	}
	for _, c := range cases {
		refDir := t.TempDir()
		ref, killed := crashRun(t, refDir, c.file, convertfamily.Type, "")
		if killed {
			t.Fatal("the undisturbed run was killed")
		}
		want := docCrashOutcome(t, refDir, ref)
		if !strings.Contains(want, "job SUCCEEDED") || !strings.Contains(want, "本日の議題は予算です。") {
			t.Fatalf("undisturbed run:\n%s", want)
		}
		for _, at := range c.at {
			t.Run(filepath.Base(c.file)+"/"+at, func(t *testing.T) {
				dir := t.TempDir()
				got := docCrashOutcome(t, dir, crashRecover(t, dir, c.file, convertfamily.Type, at))
				if got != want {
					t.Fatalf("killed at %s, the conversion ended differently from an undisturbed run:\n%s", at, lineDiff(got, want))
				}
			})
		}
	}
}

// sha8 is the first 8 hex digits of the SHA-256 of the file at path.
func sha8(t *testing.T, path string) string {
	t.Helper()
	sha, err := family.FileSHA256(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return sha[:8]
}

// TestSubmitSameFilesConcurrently: six submitters dropping the same 50 files (conversions,
// checksums and CSV files) at once through App.Submit make exactly 50 jobs; dropping them again
// returns those jobs, and --force makes new ones.
func TestSubmitSameFilesConcurrently(t *testing.T) {
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	in := t.TempDir()
	var files []string
	for i := 0; i < 50; i++ {
		switch i % 3 {
		case 0:
			files = append(files, writeTemp(t, in, fmt.Sprintf("note%d.txt", i), []byte(fmt.Sprintf("メモ %d\n", i))))
		case 1:
			files = append(files, writeTemp(t, in, fmt.Sprintf("blob%d.bin", i), []byte{0, 1, 2, byte(i), 0xff}))
		default:
			text, _ := userLog(10+i, 5, nil)
			files = append(files, writeTemp(t, in, fmt.Sprintf("log%d.csv", i), []byte(text)))
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	got := make([][]job.Job, 6)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			js, err := a.Submit(ctx, files, app.SubmitOptions{})
			got[g] = js
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	all, err := a.List(ctx, app.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(files) {
		t.Fatalf("6 submitters × %d files made %d jobs", len(files), len(all))
	}
	types := map[string]int{}
	for _, j := range all {
		types[j.Type]++
	}
	if types[convertfamily.Type] == 0 || types["checksum"] == 0 || types["csv"] == 0 {
		t.Fatalf("job types %v", types)
	}
	for g := range got {
		for i, j := range got[g] {
			if j.ID != got[0][i].ID {
				t.Fatalf("submitter %d got job %d for %s, submitter 0 job %d", g, j.ID, files[i], got[0][i].ID)
			}
		}
	}
	forced, err := a.Submit(ctx, files[:3], app.SubmitOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range forced {
		if j.ID == got[0][i].ID {
			t.Fatalf("--force returned the existing job %d for %s", j.ID, files[i])
		}
	}
}

// forgetSubmission makes job id no longer stand for its file, as when the retention purge has
// deleted it, so the next drop of the same bytes makes a new job.
func forgetSubmission(t *testing.T, dataDir string, id int64) {
	t.Helper()
	db, err := store.OpenDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.W.Exec(`UPDATE jobs SET dedup_key=NULL WHERE id=?`, id); err != nil {
		t.Fatal(err)
	}
}

// TestListSaysWhatCameOfAJob: a finished conversion's line says what came of it (its pages and
// characters), as the window's row does, not the workflow's last progress report; the --wait
// progress lines end the same way.
func TestListSaysWhatCameOfAJob(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	pdf := docCorpus(t, in, "report.pdf", "報告書.pdf")
	code, _, errOut := runCLI(t, "--data-dir", dataDir, "run", "--wait", pdf)
	if code != ExitOK || !strings.Contains(errOut, "SUCCEEDED 100% · 3 pages · ") {
		t.Fatalf("run --wait: %d\n%s", code, errOut)
	}
	code, out, _ := runCLI(t, "--data-dir", dataDir, "ls")
	if code != ExitOK || !strings.Contains(out, "3 pages · ") || strings.Contains(out, "starting") {
		t.Fatalf("ls:\n%s", out)
	}
}
