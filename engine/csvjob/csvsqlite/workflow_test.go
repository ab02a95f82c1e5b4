package csvsqlite_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

type userRow struct {
	login, posts int64
	updated      int64
	source       string
}

func tableOf(t testing.TB, db *env) map[string]userRow {
	t.Helper()
	rows, err := db.R.Query(`SELECT user_id, login_count, post_count, updated_at, source_job FROM csv_users`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]userRow{}
	for rows.Next() {
		var id string
		var u userRow
		if err := rows.Scan(&id, &u.login, &u.posts, &u.updated, &u.source); err != nil {
			t.Fatal(err)
		}
		out[id] = u
	}
	return out
}

func checkTable(t *testing.T, db *env, want map[string][2]int64) {
	t.Helper()
	got := tableOf(t, db)
	if len(got) != len(want) {
		t.Fatalf("table has %d users, want %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || g.login != w[0] || g.posts != w[1] {
			t.Fatalf("user %s: got %+v, want login %d posts %d", id, g, w[0], w[1])
		}
	}
}

func pf(v float64) *float64 { return &v }
func pi(v int) *int         { return &v }

// TestWorkflowEncodingsAndDialects: every encoding, delimiter and line-ending style, with quoted
// fields holding delimiters, quotes and line breaks, gives the same table as the generator's sums.
func TestWorkflowEncodingsAndDialects(t *testing.T) {
	cases := []struct {
		name string
		g    csvtest.File
	}{
		{"utf8-comma-lf", csvtest.File{Enc: csvjob.EncUTF8, Delim: ',', EOL: "\n"}},
		{"utf8bom-comma-crlf", csvtest.File{Enc: csvjob.EncUTF8BOM, Delim: ',', EOL: "\r\n"}},
		{"utf16le-tab-crlf", csvtest.File{Enc: csvjob.EncUTF16LE, Delim: '\t', EOL: "\r\n"}},
		{"utf16be-comma-lf", csvtest.File{Enc: csvjob.EncUTF16BE, Delim: ',', EOL: "\n"}},
		{"sjis-comma-crlf", csvtest.File{Enc: csvjob.EncCP932, Delim: ',', EOL: "\r\n"}},
		{"sjis-semicolon-mixed", csvtest.File{Enc: csvjob.EncCP932, Delim: ';', EOL: "mixed"}},
		{"eucjp-bar-cr", csvtest.File{Enc: csvjob.EncEUCJP, Delim: '|', EOL: "\r"}},
		{"utf8-tab-mixed-quoteall", csvtest.File{Enc: csvjob.EncUTF8, Delim: '\t', EOL: "mixed", QuoteAll: true}},
		{"sjis-pipe-lf-quoteall", csvtest.File{Enc: csvjob.EncCP932, Delim: '|', EOL: "\n", QuoteAll: true}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.g
			g.Rows, g.Users, g.Note, g.Seed = 400, 37, true, uint64(i+1)
			dir := t.TempDir()
			path, rows := g.Write(t, dir, c.name+".csv")
			db := openDB(t)
			s, err := runWorkflow(context.Background(), db, path, csvjob.Options{ChunkBytes: 1024}, nil)
			if err != nil {
				t.Fatalf("runWorkflow: %v", err)
			}
			if s.Status != csvjob.StatusSuccess || s.TotalRows != int64(g.Rows) || s.ErrorCount != 0 {
				t.Fatalf("summary %+v", s)
			}
			if s.Encoding != g.Enc || s.Delimiter != string(g.Delim) {
				t.Fatalf("detected %s %q, want %s %q", s.Encoding, s.Delimiter, g.Enc, string(g.Delim))
			}
			checkTable(t, db, csvtest.Expected(rows))
			if s.Users != len(csvtest.Expected(rows)) {
				t.Fatalf("users %d", s.Users)
			}
		})
	}
}

// TestRowErrors: each kind of bad row is rejected with its line, column, value and reason, and
// only the good rows reach the table.
func TestRowErrors(t *testing.T) {
	text := "ユーザーID,ログイン回数,投稿回数\n" +
		"U00001,5,12\n" + // 2 ok
		"U00002,1e3,1\n" + // 3 not an integer
		"U00003,3.5,1\n" + // 4 not an integer
		"U00004,-1,1\n" + // 5 negative
		"X12,1,1\n" + // 6 pattern
		",1,1\n" + // 7 missing
		"U00005,1\n" + // 8 ragged
		"U00006,1,2,3\n" + // 9 ragged
		"U00001,2,3\n" + // 10 ok (combined with line 2)
		"U00007,\"4\",5\n" + // 11 ok, quoted number
		"U00008,５,1\n" + // 12 full-width digit
		"U00009, 5,1\n" // 13 space
	want := []struct {
		line   int
		column string
		kind   string
		reason string
	}{
		{3, "ログイン回数", csvjob.KindValidation, "not an integer"},
		{4, "ログイン回数", csvjob.KindValidation, "not an integer"},
		{5, "ログイン回数", csvjob.KindBusiness, "negative"},
		{6, "ユーザーID", csvjob.KindValidation, "pattern"},
		{7, "ユーザーID", csvjob.KindValidation, "required"},
		{8, "", csvjob.KindValidation, "expected 3 fields, found 2"},
		{9, "", csvjob.KindValidation, "expected 3 fields, found 4"},
		{12, "ログイン回数", csvjob.KindValidation, "not an integer"},
		{13, "ログイン回数", csvjob.KindValidation, "not an integer"},
	}
	for _, enc := range []string{csvjob.EncUTF8, csvjob.EncCP932} {
		t.Run(enc, func(t *testing.T) {
			dir := t.TempDir()
			path := csvtest.WriteRaw(t, dir, "bad.csv", enc, text)
			db := openDB(t)
			s, err := runWorkflow(context.Background(), db, path, csvjob.Options{TolerancePercent: pf(100), ToleranceCount: pi(100)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Status != csvjob.StatusPartial || s.TotalRows != 12 || s.ErrorCount != int64(len(want)) {
				t.Fatalf("summary %+v", s)
			}
			errs := readErrorsCSV(t, s.ErrorsCSV)
			if len(errs) != len(want) {
				t.Fatalf("errors file has %d rows, want %d: %v", len(errs), len(want), errs)
			}
			for i, w := range want {
				e := errs[i]
				if e[0] != fmt.Sprint(w.line) || e[1] != w.column || e[3] != w.kind || !strings.Contains(e[5], w.reason) || e[4] == "" {
					t.Errorf("error %d = %q, want line %d column %q kind %s reason ~%q", i, e, w.line, w.column, w.kind, w.reason)
				}
			}
			checkTable(t, db, map[string][2]int64{"U00001": {7, 15}, "U00007": {4, 5}})
		})
	}
}

func readErrorsCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
		t.Fatal("errors CSV has no UTF-8 BOM")
	}
	recs, err := csv.NewReader(bytes.NewReader(b[3:])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[1:]
}

// TestInvalidBytesInRow: a Shift_JIS file with a broken character in a value rejects that row only.
func TestInvalidBytesInRow(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	b.Write(csvtest.EncodeAs(csvjob.EncCP932, "ユーザーID,ログイン回数,投稿回数,備考\n"))
	for i := 1; i <= 300; i++ {
		b.Write(csvtest.EncodeAs(csvjob.EncCP932, fmt.Sprintf("U%05d,1,2,東京%d\n", i, i)))
	}
	b.WriteString("U0\x81\x2099,1,2,bad\n") // lead byte with an invalid trail byte
	path := filepath.Join(dir, "sjis.csv")
	os.WriteFile(path, b.Bytes(), 0o600)
	db := openDB(t)
	s, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Encoding != csvjob.EncCP932 || s.Status != csvjob.StatusPartial || s.ErrorCount != 1 {
		t.Fatalf("summary %+v", s)
	}
	errs := readErrorsCSV(t, s.ErrorsCSV)
	if errs[0][0] != "302" || !strings.Contains(errs[0][5], "not valid Shift_JIS") {
		t.Fatalf("error %q", errs[0])
	}
	if len(tableOf(t, db)) != 300 {
		t.Fatal("rejected row reached the table")
	}
}

// TestTolerance: more than 5 % or more than 50 rejected rows fail the job and leave the table as
// it was; fewer end PARTIAL; none SUCCESS. Both limits are configurable.
func TestTolerance(t *testing.T) {
	cases := []struct {
		name       string
		rows, bad  int
		pct        *float64
		cnt        *int
		wantStatus string
	}{
		{"none bad", 200, 0, nil, nil, csvjob.StatusSuccess},
		{"5 percent exactly", 100, 5, nil, nil, csvjob.StatusPartial},
		{"over 5 percent", 100, 6, nil, nil, csvjob.StatusFailed},
		{"50 rows exactly", 2000, 50, nil, nil, csvjob.StatusPartial},
		{"51 rows", 2000, 51, nil, nil, csvjob.StatusFailed},
		{"zero tolerance", 100, 1, pf(0), nil, csvjob.StatusFailed},
		{"lenient", 100, 30, pf(50), pi(1000), csvjob.StatusPartial},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
			for i := 0; i < c.rows; i++ {
				if i < c.bad {
					fmt.Fprintf(&b, "U%05d,-%d,1\n", i%50, i+1)
				} else {
					fmt.Fprintf(&b, "U%05d,%d,1\n", i%50, i)
				}
			}
			dir := t.TempDir()
			path := csvtest.WriteRaw(t, dir, "t.csv", csvjob.EncUTF8, b.String())
			db := openDB(t)
			db.W.Exec(`INSERT INTO csv_users(user_id, login_count, post_count, updated_at, source_job, source_sha256) VALUES('U00001', 77, 88, 1, 'before', '')`)
			s, err := runWorkflow(context.Background(), db, path, csvjob.Options{TolerancePercent: c.pct, ToleranceCount: c.cnt, ChunkBytes: 512}, nil)
			if s.Status != c.wantStatus {
				t.Fatalf("status %s, want %s (%v)", s.Status, c.wantStatus, err)
			}
			if s.ErrorCount != int64(c.bad) {
				t.Fatalf("errors %d, want %d", s.ErrorCount, c.bad)
			}
			tab := tableOf(t, db)
			if c.wantStatus == csvjob.StatusFailed {
				je := job.AsError(err)
				if je == nil || je.Name != csvjob.ErrToleranceExceeded || je.Code != job.E006 || je.MessageJa == "" {
					t.Fatalf("error %#v", je)
				}
				if len(tab) != 1 || tab["U00001"].login != 77 {
					t.Fatalf("table changed on a failed job: %v", tab)
				}
				if _, err := os.Stat(s.ErrorsCSV); err != nil {
					t.Fatalf("failed job has no errors file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tab) != 50 {
				t.Fatalf("table has %d users", len(tab))
			}
		})
	}
}

// TestBadFiles: each file that cannot be processed ends with a clear coded error, in English
// and Japanese, and writes nothing to the table.
func TestBadFiles(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
	cases := []struct {
		name     string
		content  []byte
		opts     csvjob.Options
		code     job.Code
		contains string
	}{
		{"empty", nil, csvjob.Options{}, job.E004, "the file is empty"},
		{"header only", []byte("ユーザーID,ログイン回数,投稿回数\r\n"), csvjob.Options{}, job.E006, "no data rows"},
		{"blank lines only", []byte("\n\n\r\n"), csvjob.Options{}, job.E006, "no header"},
		{"binary", png, csvjob.Options{}, job.E004, "binary"},
		{"not csv", []byte("This is a letter.\nDear colleague\nRegards\n"), csvjob.Options{}, job.E004, "not a CSV"},
		{"wrong header", []byte("id,logins,posts\nU00001,1,2\n"), csvjob.Options{}, job.E006, "wrong header"},
		{"no header", []byte("U00001,1,2\nU00002,3,4\n"), csvjob.Options{}, job.E006, "no header row"},
		{"unterminated quote", []byte("ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,\"3,4\nU00003,1,1\n"), csvjob.Options{}, job.E006, "never closed"},
		{"invalid bytes", append([]byte("ユーザーID,ログイン回数,投稿回数\n"), 0xFF, 0xFE, 0xFD, 0x80, '\n'), csvjob.Options{}, job.E006, "not valid"},
		{"declared encoding wrong", csvtest.EncodeAs(csvjob.EncCP932, "ユーザーID,ログイン回数,投稿回数\nU00001,1,2\n"), csvjob.Options{Encoding: "utf-8"}, job.E006, "not valid UTF-8"},
		{"too large", []byte("ユーザーID,ログイン回数,投稿回数\nU00001,1,2\n"), csvjob.Options{MaxBytes: 10}, job.E003, "too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.csv")
			os.WriteFile(path, c.content, 0o600)
			db := openDB(t)
			s, err := runWorkflow(context.Background(), db, path, c.opts, nil)
			checkFailed(t, db, s, err, c.code, c.contains)
		})
	}
}

func checkFailed(t *testing.T, db *env, s csvjob.Summary, err error, code job.Code, contains string) {
	t.Helper()
	var je *job.Error
	if !errors.As(err, &je) {
		t.Fatalf("error %v is not a *job.Error", err)
	}
	if je.Code != code || !strings.Contains(je.Message, contains) || je.MessageJa == "" || je.Name != "ValidationError" {
		t.Fatalf("got %s %q (%s) ja=%q, want %s ~%q", je.Code, je.Message, je.Name, je.MessageJa, code, contains)
	}
	if s.Status != csvjob.StatusFailed {
		t.Fatalf("status %s", s.Status)
	}
	var n int
	db.R.QueryRow(`SELECT count(*) FROM csv_users`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d users written for a failed file", n)
	}
	db.R.QueryRow(`SELECT count(*) FROM csv_stage`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d staged chunks left", n)
	}
	var status string
	db.R.QueryRow(`SELECT status FROM csv_imports WHERE execution=?`, s.ExecutionID).Scan(&status)
	if status != csvjob.StatusFailed {
		t.Fatalf("import record status %q", status)
	}
}

// TestHugeSparseFile: a 1 GB file (sparse: a header then NUL bytes) is refused quickly as binary,
// and as too large under a smaller limit, without reading it into memory.
func TestHugeSparseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("ユーザーID,ログイン回数,投稿回数\nU00001,1,2\n")
	if err := f.Truncate(1 << 30); err != nil {
		t.Skip("cannot make a sparse file here:", err)
	}
	f.Close()
	db := openDB(t)
	s, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
	checkFailed(t, db, s, err, job.E004, "binary")
	s, err = runWorkflow(context.Background(), db, path, csvjob.Options{MaxBytes: 512 << 20}, nil)
	checkFailed(t, db, s, err, job.E003, "too large")
}

// TestIdempotent: running the same file again changes no row (not even updated_at); a changed
// file changes only the users whose values changed.
func TestIdempotent(t *testing.T) {
	dir := t.TempDir()
	g := csvtest.File{Rows: 3000, Users: 500, Seed: 9}
	path, rows := g.Write(t, dir, "same.csv")
	db := openDB(t)
	s1, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1.UsersChanged != int64(len(csvtest.Expected(rows))) {
		t.Fatalf("first run changed %d users", s1.UsersChanged)
	}
	before := tableOf(t, db)
	s2, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s2.UsersChanged != 0 {
		t.Fatalf("second run changed %d users", s2.UsersChanged)
	}
	after := tableOf(t, db)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("table changed on a re-run")
	}
	rows[0].Login += 1000
	os.WriteFile(path, g.Render(g.Header(), g.Records(rows)), 0o600)
	s3, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s3.UsersChanged != 1 {
		t.Fatalf("changed file changed %d users", s3.UsersChanged)
	}
	checkTable(t, db, csvtest.Expected(rows))
}

// TestChunkSizesAgree: any chunk size gives the same table and totals, also with quoted line
// breaks crossing the natural cut points.
func TestChunkSizesAgree(t *testing.T) {
	dir := t.TempDir()
	g := csvtest.File{Rows: 700, Users: 60, Note: true, EOL: "mixed", Seed: 3}
	path, rows := g.Write(t, dir, "c.csv")
	want := csvtest.Expected(rows)
	for _, cs := range []int64{1, 7, 100, 4096, 1 << 20} {
		db := openDB(t)
		s, err := runWorkflow(context.Background(), db, path, csvjob.Options{ChunkBytes: cs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.TotalRows != int64(len(rows)) || s.ErrorCount != 0 {
			t.Fatalf("chunk %d: %+v", cs, s)
		}
		checkTable(t, db, want)
	}
}

// TestCombineRules: a schema from a JSON file with max/min/last rules and other column types.
func TestCombineRules(t *testing.T) {
	dir := t.TempDir()
	schema := `{"name":"custom","key":"id","columns":[
		{"name":"id","type":"string","required":true,"pattern":"^[a-z]+$","field":"user_id"},
		{"name":"logins","type":"integer","min":1,"max":100,"field":"login_count","combine":"max"},
		{"name":"posts","type":"integer","field":"post_count","combine":"last"},
		{"name":"day","type":"date","min_date":"2024-01-01"},
		{"name":"active","type":"boolean"},
		{"name":"score","type":"decimal","max":10}]}`
	sp := filepath.Join(dir, "schema.json")
	os.WriteFile(sp, []byte(schema), 0o600)
	text := "id;logins;posts;day;active;score\n" +
		"abc;5;1;2024-08-02;true;1.5\n" +
		"abc;9;2;2024/08/03;no;2\n" +
		"xyz;3;7;2024-02-30;yes;1\n" + // bad date
		"xyz;0;7;2024-02-01;yes;1\n" + // below min 1
		"xyz;4;8;2023-12-31;yes;1\n" + // before min date
		"xyz;4;9;2024-02-01;maybe;1\n" + // bad boolean
		"xyz;4;9;2024-02-01;1;11.5\n" + // above max
		"xyz;4;6;2024-02-01;0;-3\n" +
		"xyz;2;5;;;\n"
	path := csvtest.WriteRaw(t, dir, "c.csv", csvjob.EncUTF8, text)
	db := openDB(t)
	s, err := runWorkflow(context.Background(), db, path, csvjob.Options{SchemaFile: sp, TolerancePercent: pf(100), ToleranceCount: pi(100)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Delimiter != ";" || s.ErrorCount != 5 || s.Status != csvjob.StatusPartial {
		t.Fatalf("summary %+v", s)
	}
	checkTable(t, db, map[string][2]int64{"abc": {9, 2}, "xyz": {4, 5}})
	for _, c := range s.Columns {
		if c.Name == "day" && (c.MinText != "2024-02-01" || c.MaxText != "2024-08-03" || c.Empty != 1) {
			t.Fatalf("date stats %+v", c)
		}
		if c.Name == "id" && c.Distinct != 2 {
			t.Fatalf("id stats %+v", c)
		}
	}
	if _, err := csvjob.ParseSchema([]byte(`{"columns":[{"name":"a","type":"money"}]}`)); err == nil {
		t.Fatal("unknown type accepted")
	}
	if _, err := csvjob.ParseSchema([]byte(`{"columns":[{"name":"a","pattern":"("}]}`)); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

// TestSniff infers the user-log schema from a generated Shift_JIS file.
func TestSniff(t *testing.T) {
	dir := t.TempDir()
	g := csvtest.File{Rows: 500, Users: 80, Enc: csvjob.EncCP932, Delim: '\t', EOL: "\r\n", Note: true, Seed: 5}
	path, _ := g.Write(t, dir, "s.tsv")
	r, err := csvjob.Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Encoding != csvjob.EncCP932 || r.Delimiter != "\t" || r.Rows != 500 {
		t.Fatalf("sniff %+v", r)
	}
	cols := r.Schema.Columns
	if len(cols) != 4 || cols[0].Name != "ユーザーID" || cols[0].Pattern != `^U\d{5}$` || !cols[0].Required ||
		cols[1].Type != csvjob.TypeInteger || cols[1].Min == nil || *cols[1].Min != 0 || cols[3].Type != csvjob.TypeString || cols[3].Required {
		b, _ := json.Marshal(r.Schema)
		t.Fatalf("schema %s", b)
	}
	// The counts are recognised by name and the key is the user, so the inferred schema fills
	// the table as the seed's does; text columns have no combine rule.
	if cols[0].Field != csvjob.FieldUserID || cols[1].Field != csvjob.FieldLoginCount || cols[2].Field != csvjob.FieldPostCount ||
		cols[3].Field != "" || cols[3].Combine != "" || !r.Schema.WritesTable() {
		b, _ := json.Marshal(r.Schema)
		t.Fatalf("fields %s", b)
	}
	s, err := runWorkflow(context.Background(), openDB(t), path, csvjob.Options{Schema: r.Schema}, nil)
	if err != nil || s.Table == "" || s.UsersChanged != 80 {
		t.Fatalf("run with the inferred schema: %+v %v", s, err)
	}
	for _, bad := range [][]byte{nil, []byte("\x00\x01\x02binary"), []byte("これは議事録です\n本日の議題は予算です\n以上\n")} {
		p := filepath.Join(dir, "bad")
		os.WriteFile(p, bad, 0o600)
		if _, err := csvjob.Sniff(p); job.AsError(err) == nil {
			t.Fatalf("sniff accepted %q", bad)
		}
	}
}

// TestResultFilesAndExport: the XLSX has a summary and an errors sheet with the same rows as the
// errors CSV, and Export copies either to a chosen file, by job id or execution name.
func TestResultFilesAndExport(t *testing.T) {
	dir := t.TempDir()
	text := "ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,x,2\nU00003,3,\"改行\nあり\"\nU00004,4,4\n"
	path := csvtest.WriteRaw(t, dir, "r.csv", csvjob.EncUTF8, text)
	db := openDBIn(t, filepath.Join(dir, "data"))
	db.JobID = 42
	s, err := runWorkflow(context.Background(), db, path, csvjob.Options{TolerancePercent: pf(100)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.ReportXLSX, filepath.Join(dir, "data")) {
		t.Fatalf("results not in the job's data folder: %s", s.ReportXLSX)
	}
	if st, err := os.Stat(s.ReportXLSX); err != nil || st.Mode().Perm()&0o111 != 0 {
		t.Fatalf("the report is executable or missing: %v %v", st.Mode(), err)
	}
	errs := readErrorsCSV(t, s.ErrorsCSV)
	if len(errs) != 2 || errs[0][0] != "3" || errs[1][0] != "4" || errs[1][2] != "改行\nあり" {
		t.Fatalf("errors %q", errs)
	}
	f, err := excelize.OpenFile(s.ReportXLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(csvjob.SheetErrors)
	if err != nil || len(rows) != 3 || rows[1][0] != "3" || rows[2][1] != "投稿回数" {
		t.Fatalf("errors sheet %q %v", rows, err)
	}
	sum, _ := f.GetRows(csvjob.SheetSummary)
	if len(sum) < 10 || sum[1][1] != csvjob.StatusPartial || sum[6][1] != "4" {
		t.Fatalf("summary sheet %q", sum)
	}
	out := filepath.Join(dir, "out", "r.xlsx")
	if err := db.Store.Export(context.Background(), "42", csvsqlite.FormatXLSX, out); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(s.ReportXLSX)
	if !bytes.Equal(a, b) {
		t.Fatal("exported xlsx differs")
	}
	outCSV := filepath.Join(dir, "r-errors.csv")
	if err := db.Store.Export(context.Background(), s.ExecutionID, csvsqlite.FormatCSV, outCSV); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.Export(context.Background(), "42", "pdf", outCSV); job.AsError(err) == nil || job.AsError(err).Code != job.E014 {
		t.Fatalf("bad format: %v", err)
	}
	if err := db.Store.Export(context.Background(), "999", csvsqlite.FormatCSV, outCSV); job.AsError(err) == nil {
		t.Fatal("unknown job exported")
	}
}

// TestHandlerEventsMatchWorkflow drives the csv-processor through JSON events in the workflow's
// order (the manifest read as the Map's ItemReader would, batched two by two) and compares the
// outcome with the shipped workflow's on the same file.
func TestHandlerEventsMatchWorkflow(t *testing.T) {
	dir := t.TempDir()
	g := csvtest.File{Rows: 2500, Users: 300, Enc: csvjob.EncCP932, EOL: "\r\n", Note: true, Seed: 11}
	path, rows := g.Write(t, dir, "h.csv")
	// Spoil a few rows so both paths must agree on errors too.
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte("U00001,"), []byte("U0001,"), -1)
	os.WriteFile(path, b, 0o600)

	dbA := openDB(t)
	want, err := runWorkflow(context.Background(), dbA, path, csvjob.Options{ChunkBytes: 8 << 10, TolerancePercent: pf(50), ToleranceCount: pi(1000)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dbB := openDB(t)
	p := csvjob.NewProcessor(dbB.Store, nil, t.TempDir())
	call := func(ev map[string]any) json.RawMessage {
		t.Helper()
		raw, _ := json.Marshal(ev)
		out, err := p.Handle(context.Background(), raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", ev["eventType"], err)
		}
		return out
	}
	input, err := p.EventInput(context.Background(), path, csvjob.Options{ChunkBytes: 8 << 10, TolerancePercent: pf(50), ToleranceCount: pi(1000)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	exec := "h-120000"
	var v csvjob.Validation
	json.Unmarshal(call(map[string]any{"eventType": csvjob.EventValidation, "bucket": "local", "key": path, "executionId": exec,
		"executionInput": json.RawMessage(input)}), &v)
	if !v.IsValid || v.RowCount != int64(len(rows)) || v.ChunkCount < 4 {
		t.Fatalf("validation %+v", v)
	}
	var items []csvjob.Chunk
	mb, err := os.ReadFile(v.Manifest.Key)
	if err != nil || json.Unmarshal(mb, &items) != nil || len(items) != v.ChunkCount {
		t.Fatalf("manifest: %v", err)
	}
	for i := 0; i < len(items); i += 2 {
		batch := items[i:min(i+2, len(items))]
		res := call(map[string]any{"eventType": csvjob.EventChunk, "items": batch, "executionId": exec})
		call(map[string]any{"eventType": csvjob.EventAudit, "logType": "SUCCESS", "executionId": exec, "processResult": res})
	}
	var got csvjob.Summary
	json.Unmarshal(call(map[string]any{"eventType": csvjob.EventAggregation, "executionId": exec}), &got)
	if got.Status != want.Status || got.TotalRows != want.TotalRows || got.ErrorCount != want.ErrorCount ||
		got.Users != want.Users || got.SHA256 != want.SHA256 || jsonOf(got.Columns) != jsonOf(want.Columns) {
		t.Fatalf("events path %+v\nworkflow %+v", got, want)
	}
	a, bb := tableOf(t, dbA), tableOf(t, dbB)
	if len(a) != len(bb) {
		t.Fatal("tables differ")
	}
	for k, v := range a {
		if bb[k].login != v.login || bb[k].posts != v.posts {
			t.Fatalf("user %s differs", k)
		}
	}
	var audits int
	dbB.R.QueryRow(`SELECT count(*) FROM csv_audit WHERE execution=? AND log_type='BUSINESS_ERROR'`, exec).Scan(&audits)
	if int64(audits) != got.ErrorCount {
		t.Fatalf("%d error audit records, want %d", audits, got.ErrorCount)
	}
	// ERROR_HANDLING summarises a caught failure.
	var f csvjob.Failure
	json.Unmarshal(call(map[string]any{"eventType": csvjob.EventError, "errorType": csvjob.ValidationFailure, "executionId": exec,
		"error": map[string]string{"Error": "ValidationError", "Cause": `{"code":"E006","message":"bad header","message_ja":"ヘッダー不正"}`}}), &f)
	if f.Status != csvjob.StatusFailed || f.Code != job.E006 || !strings.Contains(f.Message, "bad header") || !strings.Contains(f.MessageJa, "ヘッダー不正") {
		t.Fatalf("failure %+v", f)
	}
	if _, err := p.Handle(context.Background(), []byte(`{"eventType":"NOPE"}`), nil); job.AsError(err).Code != job.E014 {
		t.Fatalf("unknown event: %v", err)
	}
	if _, err := p.Handle(context.Background(), []byte(`{"eventType":"CSV_CHUNK_PROCESSING","executionId":"../../etc","items":[{}]}`), nil); job.AsError(err) == nil {
		t.Fatal("path escape accepted")
	}
}

// TestDatabaseErrorsAreRetryable: a chunk whose database write fails reports a retryable
// DatabaseConnectionError or TemporaryError, as the workflow's Retry expects.
func TestDatabaseErrorsAreRetryable(t *testing.T) {
	dir := t.TempDir()
	g := csvtest.File{Rows: 100, Users: 10, Seed: 2}
	path, _ := g.Write(t, dir, "d.csv")
	db, err := store.OpenDir(t.TempDir(), csvsqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	p := csvjob.NewProcessor(csvsqlite.New(db), nil, t.TempDir())
	raw, _ := json.Marshal(map[string]any{"eventType": csvjob.EventValidation, "bucket": "local", "key": path, "executionId": "d-1"})
	if _, err := p.Handle(context.Background(), raw, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	mb, _ := os.ReadFile(filepath.Join(p.Output, "csv", "d-1", "manifest.json"))
	var items []csvjob.Chunk
	json.Unmarshal(mb, &items)
	raw, _ = json.Marshal(map[string]any{"eventType": csvjob.EventChunk, "items": items, "executionId": "d-1"})
	_, err = p.Handle(context.Background(), raw, nil)
	je := job.AsError(err)
	if je == nil || !je.Retryable || je.Code != job.E009 || (je.Name != "DatabaseConnectionError" && je.Name != "TemporaryError") {
		t.Fatalf("got %#v", je)
	}
}

// TestWorkflowPartial: a job with a rejected row within tolerance ends PARTIAL with the Summary
// (the table and the report named), and an execution whose event names no file fails with E014.
func TestWorkflowPartial(t *testing.T) {
	dir := t.TempDir()
	path := csvtest.WriteRaw(t, dir, "j.csv", csvjob.EncUTF8, "ユーザーID,ログイン回数,投稿回数\nU00001,1,1\nU00002,-1,1\n"+strings.Repeat("U00003,1,1\n", 40))
	db := openDB(t)
	s, err := runWorkflow(context.Background(), db, path, csvjob.Options{}, nil)
	if err != nil || s.Status != csvjob.StatusPartial {
		t.Fatalf("want partial, got %s %v", s.Status, err)
	}
	if s.ErrorCount != 1 || s.Table != csvjob.Table || s.ReportXLSX == "" {
		t.Fatalf("summary %+v", s)
	}
	ctx := context.Background()
	x, err := db.eng.StartExecution(ctx, db.smARN, []byte(`{"detail":{"bucket":{"name":"local"},"object":{"key":"","size":0,"etag":""}}}`), flow.StartOptions{Name: "nofile-120000"})
	if err != nil {
		t.Fatal(err)
	}
	if x, err = db.eng.Wait(ctx, x.ARN); err != nil || x.Status != flow.StatusFailed {
		t.Fatalf("%+v %v", x, err)
	}
	if je := db.P.ExecutionError(ctx, x.Name, x.Error, x.Cause); je.Code != job.E014 {
		t.Fatalf("missing path: %+v", je)
	}
}

// TestCancel: a cancelled context stops the job with E013 and writes nothing.
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	path, _ := csvtest.File{Rows: 1000, Users: 10, Seed: 1}.Write(t, dir, "x.csv")
	db := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := runWorkflow(ctx, db, path, csvjob.Options{}, nil)
	if je := job.AsError(err); je == nil || je.Code != job.E013 {
		t.Fatalf("got %v", err)
	}
	if len(tableOf(t, db)) != 0 {
		t.Fatal("cancelled job wrote users")
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestValidationFailureKeepsCode: a workflow's Catch hands ERROR_HANDLING only the error name and
// the English cause; the failure summary still carries the seed's code and the Japanese sentence,
// and ExecutionError rebuilds the coded error for the job.
func TestValidationFailureKeepsCode(t *testing.T) {
	db := openDB(t)
	p := db.P
	dir := t.TempDir()
	cases := []struct {
		name string
		data []byte
		code job.Code
	}{
		{"binary.csv", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...), job.E004},
		{"empty.csv", nil, job.E004},
		{"header.csv", []byte("ユーザーID,ログイン回数,投稿回数\n"), job.E006},
	}
	for i, c := range cases {
		path := filepath.Join(dir, c.name)
		csvtest.WriteBytes(t, path, c.data)
		exec := fmt.Sprintf("bad-%d-120000", i)
		raw, _ := json.Marshal(map[string]any{"eventType": csvjob.EventValidation, "bucket": "local", "key": path, "executionId": exec})
		_, err := p.Handle(context.Background(), raw, nil)
		je := job.AsError(err)
		if je.Code != c.code || je.ErrorName() != "ValidationError" {
			t.Fatalf("%s: %v", c.name, err)
		}
		// What the engine's Catch passes on: {"Error": name, "Cause": English message}.
		catch, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": je.Message})
		raw, _ = json.Marshal(map[string]any{"eventType": csvjob.EventError, "errorType": csvjob.ValidationFailure, "executionId": exec, "error": json.RawMessage(catch)})
		out, err := p.Handle(context.Background(), raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		var f csvjob.Failure
		json.Unmarshal(out, &f)
		if f.Code != c.code || f.Error != "ValidationError" || !strings.Contains(f.MessageJa, je.MessageJa) || !strings.Contains(f.Message, je.Message) {
			t.Fatalf("%s: failure %+v", c.name, f)
		}
		got := p.ExecutionError(context.Background(), exec, "ValidationError", je.Message)
		if got.Code != c.code || got.MessageJa != je.MessageJa || got.Retryable {
			t.Fatalf("%s: ExecutionError %+v", c.name, got)
		}
		if n := len(tableOf(t, db)); n != 0 {
			t.Fatalf("%s: %d users written", c.name, n)
		}
	}
	// Without a record, the execution's own error and cause are used.
	if e := p.ExecutionError(context.Background(), "never-ran-120000", csvjob.ErrToleranceExceeded, "too many"); e.Code != job.E006 || e.Message != "too many" {
		t.Fatalf("%+v", e)
	}
}

// One broken byte in a small UTF-8 file rejects its row, named by line, not the whole file.
func TestOneBrokenByteRejectsItsRow(t *testing.T) {
	dir := t.TempDir()
	path := csvtest.WriteRaw(t, dir, "one-bad-byte.csv", csvjob.EncUTF8, "ユーザーID,ログイン回数,投稿回数\nU00001,1,2\nU00002,\xff,3\nU00003,4,5\n")
	s, err := runWorkflow(context.Background(), openDB(t), path, csvjob.Options{TolerancePercent: pf(100)}, nil)
	if err != nil || s.Status != csvjob.StatusPartial || s.SuccessCount != 2 || s.ErrorCount != 1 {
		t.Fatalf("%+v %v", s, err)
	}
	errs := readErrorsCSV(t, s.ErrorsCSV)
	if len(errs) != 1 || errs[0][0] != "3" {
		t.Fatalf("errors %q", errs)
	}
}
