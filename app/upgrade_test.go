package app

import (
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/grants"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// releaseFixtures are the data folders written by earlier JobDesk releases, one per schema
// generation (testdata/releases/README.md says how they were made): the queue's migrations up
// to 002, 003 and 004 (7b2f522, the release before job numbers and granted files).
var releaseFixtures = []string{"8c26cbf", "15ae705", "7b2f522"}

// fixturePrefix is the folder the fixtures were written under; the test moves them into its
// own temporary folder and rewrites the paths the database holds.
const fixturePrefix = "/jobdesk-fixture/"

// oldJob is a job as the earlier release showed it: by its id.
type oldJob struct {
	id        int64
	typ, name string
	status    job.Status
	path      string
	hasParent bool
}

// installRelease copies the fixture of release rel into a fresh folder (data/ and files/),
// rewrites the paths inside its database to that folder, and returns the data folder and the
// jobs the release showed.
func installRelease(t *testing.T, rel string) (dataDir string, jobs []oldJob) {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join("testdata", "releases")
	dataDir = filepath.Join(root, "data")
	copyTree(t, filepath.Join(src, "files"), filepath.Join(root, "files"))
	copyTree(t, filepath.Join(src, rel), dataDir)
	gz, err := os.Open(filepath.Join(dataDir, "jobdesk.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(filepath.Join(dataDir, store.FileName), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()
	gz.Close()
	os.Remove(filepath.Join(dataDir, "jobdesk.db.gz"))

	// Open the file as it is (no migrations of this build) and move every path in it.
	db, err := store.Open(filepath.Join(dataDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rewritePaths(t, db.W, fixturePrefix+rel, root)
	rows, err := db.R.Query(`SELECT id, type, name, status, cast(input AS TEXT), parent_id IS NOT NULL FROM jobs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var j oldJob
		var input sql.NullString
		if err := rows.Scan(&j.id, &j.typ, &j.name, &j.status, &input, &j.hasParent); err != nil {
			t.Fatal(err)
		}
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(input.String), &in) == nil {
			j.path = in.Path
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return dataDir, jobs
}

// rewritePaths replaces from with to in every text and blob value of every table.
func rewritePaths(t *testing.T, db *sql.DB, from, to string) {
	t.Helper()
	for _, table := range queryNames(t, db, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`) {
		for _, c := range queryNames(t, db, `SELECT name FROM pragma_table_info(?)`, table) {
			q := fmt.Sprintf(`UPDATE %q SET %q = CASE typeof(%[2]q) WHEN 'blob' THEN cast(replace(%[2]q, ?1, ?2) AS BLOB)
				ELSE replace(%[2]q, ?1, ?2) END WHERE typeof(%[2]q) IN ('text', 'blob') AND instr(%[2]q, ?1) > 0`, table, c)
			if _, err := db.Exec(q, from, to); err != nil {
				t.Fatalf("%s.%s: %v", table, c, err)
			}
		}
	}
}

// queryNames is the text column of query's rows (tables, columns), read to the end before they are
// changed.
func queryNames(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		out = append(out, n)
	}
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// What each fixture job ends as when it runs (again) under this build.
var upgradeOutcome = map[string]job.Status{
	"users.csv": job.Succeeded, "bad.csv": job.Failed, "partial.csv": job.Partial, "waiting.csv": job.Succeeded,
	"cancelled.csv": job.Succeeded, "notes.txt": job.Succeeded, "report.docx": job.Succeeded,
	"bundle.zip": job.Succeeded, "broken.pdf": job.Failed, "data.bin": job.Succeeded, "waiting.txt": job.Succeeded,
	"waiting.zip": job.Succeeded, "readme.md": job.Succeeded, "waiting.bin": job.Succeeded,
	"photo.png": job.Succeeded, "テスト目標": job.Succeeded,
}

// The error code of the jobs upgradeOutcome says fail: their own fault, never E014.
var upgradeCode = map[string]job.Code{"bad.csv": job.E006, "broken.pdf": job.E004}

// Every job in a data folder of each earlier release can be shown under the number that
// release showed it by, run (the jobs still waiting), retried and exported by this build:
// the files people submitted then are still theirs to read, and no job moved to another number.
func TestEarlierReleasesJobsUpgrade(t *testing.T) {
	for _, rel := range releaseFixtures {
		t.Run(rel, func(t *testing.T) { testReleaseUpgrade(t, rel) })
	}
}

func testReleaseUpgrade(t *testing.T, rel string) {
	srv := aitest.NewOpenAI(t, nil)
	t.Setenv(aifamily.EnvEndpoint, srv.URL)
	t.Setenv(aifamily.EnvModel, "loopback-model")
	t.Setenv(aifamily.EnvProvider, "openai")
	dir, old := installRelease(t, rel)
	a, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Shown: each job the release listed answers to the id it was listed by, and only it.
	var maxID int64
	var people []oldJob
	for _, o := range old {
		maxID = max(maxID, o.id)
		j, err := a.JobByNumber(ctx, o.id)
		if o.hasParent {
			if err == nil {
				t.Errorf("job %d of the release was a workflow's step; #%d is now %s (%s)", o.id, o.id, j.Name, j.Type)
			}
			continue
		}
		people = append(people, o)
		if err != nil || j.ID != o.id || j.Name != o.name {
			t.Errorf("job %d (%s) of the release: #%d is %d %q, %v", o.id, o.name, o.id, j.ID, j.Name, err)
			continue
		}
		DescribeResult(j)
		if h, err := a.History(ctx, j.ID); err != nil || len(h) == 0 {
			t.Errorf("job %d: history %v, %v", o.id, h, err)
		}
		if o.path != "" {
			if _, err := a.blobs.Stat(ctx, o.path); err != nil {
				t.Errorf("job %d (%s): its file cannot be read under this build: %v", o.id, o.name, err)
			}
		}
	}
	if len(people) < 15 {
		t.Fatalf("the fixture holds %d jobs people started", len(people))
	}

	// Run: the jobs still waiting end as their files say, never refused.
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(stage string, j job.Job) {
		t.Helper()
		if j.Type == "flow.execution" {
			return
		}
		want, ok := upgradeOutcome[j.Name]
		if !ok {
			t.Errorf("%s: unexpected job %s %q", stage, j.Ref(), j.Name)
			return
		}
		if j.Status != want {
			t.Errorf("%s: job %s %s ended %s (%+v), want %s", stage, j.Ref(), j.Name, j.Status, j.Error, want)
		}
		if j.Error != nil && j.Error.Code != upgradeCode[j.Name] {
			t.Errorf("%s: job %s %s failed with %s: %s (cause %s)", stage, j.Ref(), j.Name, j.Error.Code, j.Error.Message, j.Error.Cause)
		}
	}
	for _, o := range people {
		if o.status.Final() {
			continue
		}
		j, err := a.Wait(ctx, o.id)
		if err != nil {
			t.Fatalf("job %d (%s): %v", o.id, o.name, err)
		}
		check("run", j)
	}

	// Retried: every job that did not succeed runs again, and every finished one exports.
	for _, o := range people {
		j, err := a.Get(ctx, o.id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == job.Succeeded || j.Type == "flow.execution" {
			continue
		}
		r, err := a.Retry(ctx, j.ID)
		if err != nil {
			t.Errorf("retry job %d (%s, %s): %v", o.id, o.name, j.Status, err)
			continue
		}
		if r, err = a.Wait(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		check("retry", r)
	}
	exported := 0
	for _, o := range people {
		j, err := a.Get(ctx, o.id)
		if err != nil {
			t.Fatal(err)
		}
		formats := ExportFormats(j)
		sort.Strings(formats)
		for _, f := range formats {
			out := filepath.Join(t.TempDir(), "out."+f)
			if err := a.ExportResult(ctx, j.ID, f, out); err != nil {
				t.Errorf("export job %d (%s) as %s: %v", o.id, o.name, f, err)
				continue
			}
			if st, err := os.Stat(out); err != nil || st.Size() == 0 {
				t.Errorf("export job %d (%s) as %s: %v", o.id, o.name, f, err)
			}
			exported++
		}
	}
	if exported < 10 {
		t.Errorf("only %d exports", exported)
	}

	// A job submitted now takes a number no job of the release had.
	files := filepath.Join(filepath.Dir(dir), "files")
	js, err := a.Submit(ctx, []string{filepath.Join(files, "pass.asl.json")}, SubmitOptions{Type: "checksum"})
	if err != nil {
		t.Fatal(err)
	}
	if js[0].Number <= maxID {
		t.Errorf("the first job after the upgrade is #%d; the release's jobs went up to %d", js[0].Number, maxID)
	}
	if got, err := a.JobByNumber(ctx, js[0].Number); err != nil || got.ID != js[0].ID {
		t.Errorf("#%d: %v, %v", js[0].Number, got.ID, err)
	}
}

// A job whose file JobDesk may not read (outside the folders it may use, never submitted by a
// person) says so in its sentence, in both languages, whichever family reads it; "does not exist
// or cannot be read" would send the person looking for a file that is there.
func TestRefusedFileSaysWhy(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	t.Setenv(aifamily.EnvEndpoint, srv.URL)
	t.Setenv(aifamily.EnvModel, "loopback-model")
	t.Setenv(aifamily.EnvProvider, "openai")
	a, ctx := openTestApp(t, t.TempDir())
	files := t.TempDir()
	src := filepath.Join("testdata", "releases", "files")
	var paths []string
	for _, name := range []string{"users.csv", "notes.txt", "data.bin", "photo.png"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	jobs, err := a.Submit(ctx, paths, SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The grants go (as when the files were submitted by a JobDesk that kept none).
	if _, err := a.db.W.Exec(`DELETE FROM granted_files`); err != nil {
		t.Fatal(err)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		j, err := a.Wait(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E014 ||
			!strings.Contains(j.Error.Message, "outside the folders JobDesk may use") ||
			!strings.Contains(j.Error.MessageJa, "JobDesk が使えるフォルダー") {
			t.Errorf("%s (%s): %s %+v; want E014 saying the file is outside the folders JobDesk may use", j.Name, j.Type, j.Status, j.Error)
		}
	}
}

// The grants carried over are only those of files a person submitted before JobDesk kept
// grants: never a path a workflow's step or an API caller's execution named, nor one of a job
// submitted after the table existed (whose file, if a person chose it, was granted then).
func TestCarriedGrantsAreOnlyPeoplesEarlierFiles(t *testing.T) {
	dir := t.TempDir()
	first := store.Migrations{Name: grants.Migrations.Name, FS: fstest.MapFS{}}
	b, err := fs.ReadFile(grants.Migrations.FS, "001_granted_files.sql")
	if err != nil {
		t.Fatal(err)
	}
	first.FS.(fstest.MapFS)["001_granted_files.sql"] = &fstest.MapFile{Data: b}
	db, err := store.OpenDir(dir, queue.Migrations, first)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().UnixMilli() + 60_000
	for _, r := range []struct {
		typ, path string
		parent    any
		created   int64
	}{
		{"csv", "/people/before.csv", nil, 1},
		{"convert", "/people/before.pdf", nil, 1},
		{"csv", "/workflow/step.csv", int64(1), 1},
		{"flow.execution", "/api/anything.csv", nil, 1},
		{"csv", "/people/after.csv", nil, later},
	} {
		in, _ := json.Marshal(map[string]string{"path": r.path})
		if _, err := db.W.Exec(`INSERT INTO jobs(type, name, status, run_at, input, parent_id, created_at, updated_at)
			VALUES(?, 'x', 'SUCCEEDED', 1, ?, ?, ?, ?)`, r.typ, in, r.parent, r.created, r.created); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	a, _ := openTestApp(t, dir)
	for path, want := range map[string]bool{"/people/before.csv": true, "/people/before.pdf": true,
		"/workflow/step.csv": false, "/api/anything.csv": false, "/people/after.csv": false} {
		if got := grants.Has(a.db, path); got != want {
			t.Errorf("%s granted %v, want %v", path, got, want)
		}
	}
}
