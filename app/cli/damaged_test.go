package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/store"
)

// TestCSVImportOverDamagedTable: csv_users holds 50,000 users; six bytes inside one of its
// b-tree's leaf pages are overwritten so that a row sits out of key order (the check made when
// the database opens does not see it). A new import of the 50,000 users must not end SUCCEEDED:
// run --wait ends FAILED with E009 and the doctor's hint in both languages, the job's error (what
// the window shows) is that coded error, and the table keeps what it had.
func TestCSVImportOverDamagedTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	src := t.TempDir()
	var first, second strings.Builder
	first.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	second.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 1; i <= 50_000; i++ {
		fmt.Fprintf(&first, "U%05d,7,3\n", i)
		fmt.Fprintf(&second, "U%05d,1,1\n", i)
	}
	if code, out, errOut := csvMain(t, "--data-dir", dir, "run", "--wait", writeFile(t, src, "first.csv", []byte(first.String()))); code != ExitOK {
		t.Fatalf("first import: %d\n%s\n%s", code, out, errOut)
	}
	// Rewrite the file without free pages (they hold old copies of the keys) and without WAL,
	// then damage one key that appears once (in a leaf cell, not copied into an interior page).
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`VACUUM`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	path := filepath.Join(dir, store.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := false
	for i := 20_000; i <= 20_500 && !damaged; i++ {
		key := []byte(fmt.Sprintf("U%05d", i))
		if bytes.Count(b, key) == 1 {
			at := bytes.Index(b, key)
			copy(b[at:], "U99999") // the row now claims the last key, in the middle of the tree
			damaged = true
		}
	}
	if !damaged {
		t.Fatal("no user key found once in the file")
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := csvMain(t, "--data-dir", dir, "run", "--wait", "--json", writeFile(t, src, "second.csv", []byte(second.String())))
	if code == ExitOK || !strings.Contains(out, `"status":"FAILED"`) || !strings.Contains(out, `"code":"E009"`) ||
		!strings.Contains(out, "jobdesk doctor") || !strings.Contains(errOut+out, "壊れている") {
		t.Fatalf("import over a damaged table: exit %d\n%s\n%s", code, out, errOut)
	}
	table := csvTable(t, dir)
	for id, v := range table {
		if v == [2]int64{1, 1} {
			t.Fatalf("the failed import changed user %s", id)
		}
	}
}
