package csvsqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// damagedUsers writes users U00001…U<n> (login 7, posts 3) into csv_users of a fresh database in
// data folder dir, closes it, and overwrites the digits of one user's key inside a leaf page of
// csv_users' b-tree so that the row sits out of primary-key order (the key appears only once in
// the file: not a divider copied into an interior page). The damage passes the check Open makes.
func damagedUsers(t *testing.T, dir string, n int) {
	t.Helper()
	db, err := store.OpenDir(dir, csvsqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Tx(context.Background(), func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO csv_users(user_id, login_count, post_count, updated_at, source_job, source_sha256) VALUES(?,7,3,1,'old','x')`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i := 1; i <= n; i++ {
			if _, err := st.Exec(fmt.Sprintf("U%05d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		_, err = db.W.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	path := filepath.Join(dir, store.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	for i := n / 3; i <= n && !done; i++ {
		key := []byte(fmt.Sprintf("U%05d", i))
		if bytes.Count(b, key) != 1 {
			continue
		}
		at := bytes.Index(b, key)
		copy(b[at+1:], "99999") // the row now claims the last key, in the middle of the tree
		done = true
	}
	if !done {
		t.Fatal("no user key found once in the file")
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedTableFailsTheImport: an import over a csv_users whose b-tree holds a row out of
// key order (damage the check at open does not see) must not end SUCCESS: the import checks what
// it wrote before committing and fails with E009 naming `jobdesk doctor`, in both languages, and
// the table keeps what it had.
func TestDamagedTableFailsTheImport(t *testing.T) {
	dir := t.TempDir()
	const users = 50000
	damagedUsers(t, dir, users)
	var text strings.Builder
	text.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 1; i <= users; i++ {
		fmt.Fprintf(&text, "U%05d,1,1\n", i)
	}
	path := csvtest.WriteRaw(t, t.TempDir(), "all-ones.csv", csvjob.EncUTF8, text.String())
	e := openDBIn(t, dir)
	s, err := runWorkflow(context.Background(), e, path, csvjob.Options{}, nil)
	je := job.AsError(err)
	if je == nil || je.Code != job.E009 || je.Retryable ||
		!strings.Contains(je.Message, "jobdesk doctor") || !strings.Contains(je.MessageJa, "jobdesk doctor") {
		t.Fatalf("import over a damaged table: %+v %v", s, err)
	}
	var n, sum int64
	if err := e.R.QueryRow(`SELECT count(*), coalesce(sum(login_count),0) FROM csv_users WHERE source_job <> 'old'`).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the failed import left %d rows of its own (login sum %d)", n, sum)
	}
}
