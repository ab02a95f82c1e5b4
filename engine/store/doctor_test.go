package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var usersSet = Migrations{Name: "t", FS: fstest.MapFS{
	"001_users.sql": {Data: []byte("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, logins INTEGER NOT NULL);" +
		"CREATE INDEX users_name ON users(name);")},
}}

// filledDB creates a database in dir with n users (a few hundred pages) and closes it.
func filledDB(t *testing.T, dir string, n int) {
	t.Helper()
	db, err := OpenDir(dir, usersSet)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.W.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := tx.Exec(`INSERT INTO users(name, logins) VALUES(?, ?)`,
			fmt.Sprintf("user-%06d-%s", i, strings.Repeat("x", 120)), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// overwritePages writes random bytes over k distinct pages in the middle of the file (never
// page 1, the header), as a failing disk or a stray write would.
func overwritePages(t *testing.T, path string, k int, seed uint64) {
	t.Helper()
	const pageSize = 4096
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pages := int(st.Size() / pageSize)
	if pages < 4*k {
		t.Fatalf("only %d pages", pages)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(seed, seed))
	junk := make([]byte, pageSize)
	for _, p := range rng.Perm(pages - 2)[:k] {
		for i := range junk {
			junk[i] = byte(rng.UintN(256))
		}
		if _, err := f.WriteAt(junk, int64(p+1)*pageSize); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDamagedDatabaseIsRefused overwrites 8 random pages in the middle of a real database file:
// opening it must fail with ErrDamaged naming the file and what to do, before anything is
// written to it, and Doctor must report the damage. Before the check, Open carried on.
func TestDamagedDatabaseIsRefused(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		dir := t.TempDir()
		filledDB(t, dir, 5000)
		path := filepath.Join(dir, FileName)
		overwritePages(t, path, 8, seed)
		before, _ := os.ReadFile(path)

		db, err := OpenDir(dir, usersSet)
		if err == nil {
			db.Close()
			t.Fatalf("seed %d: a database with 8 overwritten pages opened", seed)
		}
		var de *DamagedError
		if !errors.Is(err, ErrDamaged) || !errors.As(err, &de) {
			t.Fatalf("seed %d: err = %v, want ErrDamaged", seed, err)
		}
		// No backup was taken: the error says so instead of sending the person to a restore.
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "There is no backup to restore") ||
			strings.Contains(err.Error(), "--restore") {
			t.Errorf("seed %d: the error names neither the file nor what to do: %v", seed, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("seed %d: the damaged file was written to", seed)
		}
		r, err := Doctor(dir)
		if err != nil {
			t.Fatal(err)
		}
		if r.OK || !r.Exists || len(r.Problems) == 0 {
			t.Fatalf("seed %d: doctor: %+v", seed, r)
		}
	}
}

// TestBackupAndRestore takes backups of a sound database, keeps only the newest, and after the
// file is damaged brings the newest back: it opens, with every row.
func TestBackupAndRestore(t *testing.T) {
	dir := t.TempDir()
	filledDB(t, dir, 3000)
	db, err := OpenDir(dir, usersSet)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := 0; i < 4; i++ {
		p, err := Backup(t.Context(), db, 2)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if p, err := BackupIfDue(t.Context(), db, 24*60*60*1e9, 2); err != nil || p != "" {
		t.Fatalf("a backup was not due yet: %q %v", p, err)
	}
	db.Close()
	all, err := Backups(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Path != paths[3] || all[1].Path != paths[2] {
		t.Fatalf("backups kept: %+v; want the newest two of %v", all, paths)
	}
	if st, _ := os.Stat(all[0].Path); st.Mode().Perm() != 0o600 {
		t.Errorf("backup perm = %v", st.Mode().Perm())
	}

	overwritePages(t, filepath.Join(dir, FileName), 8, 7)
	if _, err := OpenDir(dir, usersSet); !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v, want ErrDamaged", err)
	}
	// A damaged newest backup is passed over for the next sound one.
	overwritePages(t, all[0].Path, 8, 8)
	restored, moved, err := Restore(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if restored != all[1].Path || moved == "" {
		t.Fatalf("restored %q (moved the damaged file to %q); want %q", restored, moved, all[1].Path)
	}
	if _, err := os.Stat(moved); err != nil {
		t.Fatalf("the damaged file was not kept: %v", err)
	}
	db, err = OpenDir(dir, usersSet)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM users WHERE logins >= 0`).Scan(&n); err != nil || n != 3000 {
		t.Fatalf("users after restore: %d %v", n, err)
	}
	r, err := Doctor(dir)
	if err != nil || !r.OK {
		t.Fatalf("doctor after restore: %+v %v", r, err)
	}
}
