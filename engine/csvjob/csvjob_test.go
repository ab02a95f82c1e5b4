package csvjob

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/job"
)

func pf(v float64) *float64 { return &v }

// runEvents runs a whole CSV job by calling p's events in the workflow's order, one chunk at a
// time, without a workflow engine: validation, every chunk with its audit, aggregation, and
// ERROR_HANDLING on a failure path (as the workflow's Catch would, with the coded error as JSON
// in the Cause). It returns the Summary, or the Failure and the coded error.
func runEvents(t testing.TB, p *Processor, path, exec string, o Options) (*Summary, *Failure, error) {
	t.Helper()
	ctx := context.Background()
	call := func(ev map[string]any) (json.RawMessage, error) {
		raw, _ := json.Marshal(ev)
		return p.Handle(ctx, raw, nil)
	}
	fail := func(errorType string, err error) (*Summary, *Failure, error) {
		je := job.AsError(err)
		catch, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": je.CauseJSON()})
		out, herr := call(map[string]any{"eventType": EventError, "errorType": errorType, "executionId": exec,
			"bucket": "local", "key": path, "error": json.RawMessage(catch)})
		if herr != nil {
			t.Fatalf("ERROR_HANDLING: %v", herr)
		}
		var f Failure
		json.Unmarshal(out, &f)
		return nil, &f, err
	}
	out, err := call(map[string]any{"eventType": EventValidation, "bucket": "local", "key": path, "executionId": exec, "options": o})
	if err != nil {
		if job.AsError(err).Name == "ValidationError" {
			return fail(ValidationFailure, err)
		}
		return fail(SystemFailure, err)
	}
	var v Validation
	json.Unmarshal(out, &v)
	mb, err := blob.ReadAll(ctx, p.blobs(), v.Manifest.URI())
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	var items []Chunk
	json.Unmarshal(mb, &items)
	for _, c := range items {
		res, err := call(map[string]any{"eventType": EventChunk, "items": []Chunk{c}, "executionId": exec})
		if err != nil {
			je := job.AsError(err)
			catch, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": je.CauseJSON()})
			call(map[string]any{"eventType": EventAudit, "logType": "SYSTEM_ERROR", "executionId": exec, "error": json.RawMessage(catch)})
			continue
		}
		if _, err := call(map[string]any{"eventType": EventAudit, "logType": "SUCCESS", "executionId": exec, "processResult": res}); err != nil {
			t.Fatalf("AUDIT_LOGGING: %v", err)
		}
	}
	out, err = call(map[string]any{"eventType": EventAggregation, "executionId": exec})
	if err != nil {
		if job.AsError(err).Name == ErrToleranceExceeded {
			_, f, _ := fail(MapProcessingFailure, err)
			return nil, f, err
		}
		return fail(SystemFailure, err)
	}
	var s Summary
	json.Unmarshal(out, &s)
	return &s, nil, nil
}

// TestBlobStore: with no database, the whole job keeps its state as objects in the execution's
// folder: the users of a file that passed go to users.json (in key order, the sums of the
// file), the outcome to summary.json or failure.json, the staged chunks are gone at the end,
// and ExecutionError reads the coded error back from the objects.
func TestBlobStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := blob.NewMux(blob.Local{})
	p := NewProcessor(NewBlobStore(b), b, filepath.Join(dir, "out"))
	g := csvtest.File{Rows: 900, Users: 70, Enc: csvtest.EncCP932, EOL: "\r\n", Note: true, Seed: 4}
	path, rows := g.Write(t, dir, "b.csv")
	s, _, err := runEvents(t, p, path, "b-120000", Options{ChunkBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "out", "csv", "b-120000")
	if s.Status != StatusSuccess || s.Table != Table || s.UsersFile != filepath.Join(work, UsersFile) {
		t.Fatalf("summary %+v", s)
	}
	var uf struct {
		Execution, SHA256, Table string
		Columns                  []string
		Users                    [][3]any
	}
	raw, err := os.ReadFile(s.UsersFile)
	if err != nil || json.Unmarshal(raw, &uf) != nil {
		t.Fatalf("users file %s: %v", raw, err)
	}
	want := csvtest.Expected(rows)
	if uf.Execution != "b-120000" || uf.SHA256 != s.SHA256 || uf.Table != Table || strings.Join(uf.Columns, ",") != "user_id,login_count,post_count" || len(uf.Users) != len(want) {
		t.Fatalf("users file %+v", uf)
	}
	for i, u := range uf.Users {
		id := u[0].(string)
		if w := want[id]; u[1].(float64) != float64(w[0]) || u[2].(float64) != float64(w[1]) {
			t.Fatalf("user %s = %v, want %v", id, u, w)
		}
		if i > 0 && uf.Users[i-1][0].(string) >= id {
			t.Fatalf("users not in key order at %s", id)
		}
	}
	var got Summary
	if raw, err := os.ReadFile(filepath.Join(work, SummaryFile)); err != nil || json.Unmarshal(raw, &got) != nil || got.TotalRows != 900 {
		t.Fatalf("summary file: %v %+v", err, got)
	}
	if l, _ := b.List(ctx, filepath.Join(work, "chunk-")); len(l) != 0 {
		t.Fatalf("staged chunks left: %+v", l)
	}
	if l, _ := b.List(ctx, filepath.Join(work, "audit-")); len(l) == 0 {
		t.Fatal("no audit records")
	}
	for _, name := range []string{"errors.csv", "report.xlsx", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(work, name)); err != nil {
			t.Fatalf("result file %s: %v", name, err)
		}
	}

	// A file that fails validation: failure.json, no users, and the coded error comes back.
	bad := filepath.Join(dir, "bad.csv")
	csvtest.WriteBytes(t, bad, []byte("id,logins,posts\nU00001,1,2\n"))
	_, f, err := runEvents(t, p, bad, "bad-120000", Options{})
	if je := job.AsError(err); je == nil || je.Code != job.E006 || f == nil || f.Code != job.E006 {
		t.Fatalf("%v %+v", err, f)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "csv", "bad-120000", FailureFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "csv", "bad-120000", UsersFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed file wrote users: %v", err)
	}
	if je := p.ExecutionError(ctx, "bad-120000", "ValidationError", "plain text"); je.Code != job.E006 || je.MessageJa == "" {
		t.Fatalf("ExecutionError %+v", je)
	}

	// Too many rejected rows: the Summary is kept (not replaced by the failure), no users.
	over := csvtest.WriteRaw(t, dir, "over.csv", csvtest.EncUTF8, "ユーザーID,ログイン回数,投稿回数\nU00001,-1,1\nU00002,1,1\n")
	_, _, err = runEvents(t, p, over, "over-120000", Options{TolerancePercent: pf(10)})
	if je := job.AsError(err); je == nil || je.Name != ErrToleranceExceeded {
		t.Fatalf("%v", err)
	}
	if je := p.ExecutionError(ctx, "over-120000", ErrToleranceExceeded, ""); je.Code != job.E006 || !strings.Contains(je.Message, "rejected") {
		t.Fatalf("ExecutionError %+v", je)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "csv", "over-120000", UsersFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed file wrote users: %v", err)
	}
}

// TestCauseForms: ERROR_HANDLING and ExecutionError read a Cause that is the JSON of a coded
// job.Error (as the engine and the Lambda worker send it), Lambda's error envelope around it,
// and plain text.
func TestCauseForms(t *testing.T) {
	b := blob.NewMux(blob.Local{})
	p := NewProcessor(NewBlobStore(b), b, t.TempDir())
	coded := job.Errorf(job.E004, "not a CSV file").WithJa("CSVではありません。").WithName("ValidationError")
	envelope, _ := json.Marshal(map[string]string{"errorType": "ValidationError", "errorMessage": coded.CauseJSON()})
	for _, c := range []struct {
		name, cause string
		code        job.Code
		ja          string
	}{
		{"json", coded.CauseJSON(), job.E004, "CSVではありません。"},
		{"lambda", string(envelope), job.E004, "CSVではありません。"},
		{"text", "The CSV file did not pass validation.", job.E015, ""},
	} {
		catch, _ := json.Marshal(map[string]string{"Error": "ValidationError", "Cause": c.cause})
		raw, _ := json.Marshal(map[string]any{"eventType": EventError, "errorType": ValidationFailure, "executionId": "c-" + c.name, "error": json.RawMessage(catch)})
		out, err := p.Handle(context.Background(), raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		var f Failure
		json.Unmarshal(out, &f)
		if f.Code != c.code || !strings.Contains(f.MessageJa, c.ja) || f.Error != "ValidationError" {
			t.Fatalf("%s: failure %+v", c.name, f)
		}
		// Nothing recorded under this name: the execution's own cause is read.
		je := p.ExecutionError(context.Background(), "none-"+c.name, "ValidationError", c.cause)
		want := c.code
		if c.name == "text" {
			want = job.E006 // a ValidationError known only by its text
		}
		if je.Code != want || !strings.Contains(je.MessageJa, c.ja) {
			t.Fatalf("%s: ExecutionError %+v", c.name, je)
		}
	}
}

func TestExecutionName(t *testing.T) {
	at := csvtest.MustTime("12:34:56")
	cases := map[string]string{
		"data/user-log-20240802-001.csv":   "user-log-20240802-001-123456",
		"input/report_2024_08_02.csv":      "report_2024_08_02-123456",
		"ユーザー ログ.csv":                      "csv-123456",
		"売上_2024.csv":                      "_2024-123456",
		"a..b//c.d.csv":                    "c-d-123456",
		strings.Repeat("x", 100) + ".csv":  strings.Repeat("x", 70) + "-123456",
		strings.Repeat("x", 69) + "-y.csv": strings.Repeat("x", 69) + "-123456",
	}
	for in, want := range cases {
		got := ExecutionName(in, at)
		if got != want {
			t.Errorf("ExecutionName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetect(t *testing.T) {
	text := "ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,3,4\nU00003,5,6\n"
	sjis := csvtest.EncodeAs(EncCP932, text)
	cases := []struct {
		name, data string
		want       bool
	}{
		{"a.csv", "anything", true},
		{"a.TSV", "", true},
		{"a.txt", text, true},
		{"a.dat", string(sjis), true},
		{"a", strings.ReplaceAll(text, ",", "\t"), true},
		{"a.txt", string(csvtest.EncodeAs(EncUTF16LE, text)), true},
		{"a.md", text, false},
		{"a.pdf", text, false},
		{"a.txt", "Dear colleague,\nthe report is attached.\nRegards\n", false},
		{"a.txt", "one line, no break", false},
		{"a.bin", "a,b\n\x00\x01,\x02\n1,2\n3,4\n", false},
		{"a.txt", "a,b\n1,2\n", false}, // too short to tell
	}
	for _, c := range cases {
		if got := Detect(c.name, []byte(c.data)); got != c.want {
			t.Errorf("Detect(%q, %q) = %v, want %v", c.name, c.data, got, c.want)
		}
	}
}

func TestFileSHA256(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	csvtest.WriteBytes(t, path, []byte("abc"))
	got, err := FileSHA256(context.Background(), path)
	if err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("%s %v", got, err)
	}
	if _, err := FileSHA256(context.Background(), path+".missing"); job.AsError(err).Code != job.E014 {
		t.Fatalf("missing file: %v", err)
	}
}

// TestExecutionSummary reads a succeeded execution's aggregation; an output without one is E015.
func TestExecutionSummary(t *testing.T) {
	s, err := ExecutionSummary(json.RawMessage(`{"aggregation":{"status":"PARTIAL","summary":"m"}}`))
	if err != nil || s.Status != StatusPartial || s.Message != "m" {
		t.Fatalf("%+v %v", s, err)
	}
	for _, out := range []string{`{}`, `{"aggregation":{}}`, `not json`} {
		if _, err := ExecutionSummary(json.RawMessage(out)); job.AsError(err) == nil || job.AsError(err).Code != job.E015 {
			t.Errorf("%s: %v", out, err)
		}
	}
}
