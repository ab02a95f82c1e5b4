package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestOpenCreatesPrivateFileAndMigratesOnce(t *testing.T) {
	dir := t.TempDir()
	set := Migrations{Name: "t", FS: fstest.MapFS{
		"001_a.sql": {Data: []byte("CREATE TABLE a(x INTEGER);")},
		"002_b.sql": {Data: []byte("CREATE TABLE b(y TEXT);")},
	}}
	db, err := OpenDir(dir, set)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("perm = %v, want 0600", st.Mode().Perm())
	}
	var mode string
	db.W.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Fatalf("journal_mode = %q", mode)
	}
	db.Close()
	// Reopen: migrations must not run again (CREATE TABLE would fail).
	db, err = OpenDir(dir, set)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	db.R.QueryRow("SELECT count(*) FROM schema_migrations WHERE set_name='t'").Scan(&n)
	if n != 2 {
		t.Fatalf("applied = %d, want 2", n)
	}
	db.Close()
	// An older binary that knows only 001 must refuse the newer database.
	old := Migrations{Name: "t", FS: fstest.MapFS{"001_a.sql": {Data: []byte("CREATE TABLE a(x INTEGER);")}}}
	if _, err := OpenDir(dir, old); !errors.Is(err, ErrTooNew) {
		t.Fatalf("err = %v, want ErrTooNew", err)
	}
}

func TestOpenDamagedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	os.WriteFile(p, junk, 0o600)
	_, err := Open(p)
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v, want ErrDamaged", err)
	}
}

// A data folder whose name holds URI characters (% ? #) opens and keeps its data.
func TestOpenPathWithURICharacters(t *testing.T) {
	for _, name := range []string{"売上 100%", "what?", "#1 集計"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := OpenDir(dir)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if _, err := db.W.Exec(`CREATE TABLE t(x)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
			t.Fatalf("%q: the database is not in the folder: %v", name, err)
		}
	}
}

func TestMigrationsFromFolder(t *testing.T) {
	files := fstest.MapFS{
		"migrations/001_a.sql": {Data: []byte("CREATE TABLE a(x INTEGER);")},
		"other/001_b.sql":      {Data: []byte("CREATE TABLE b(y TEXT);")},
	}
	set := MigrationsFrom("t", files, "migrations")
	db, err := OpenDir(t.TempDir(), set)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.R.QueryRow("SELECT count(*) FROM sqlite_master WHERE name IN ('a','b')").Scan(&n)
	if set.Name != "t" || n != 1 {
		t.Fatalf("set %q applied %d tables, want only the folder's one", set.Name, n)
	}
	defer func() {
		if recover() == nil {
			t.Error("an invalid folder did not panic")
		}
	}()
	MigrationsFrom("t", files, "../x")
}
