package store

import (
	"errors"
	"testing"
	"testing/fstest"
)

// TestOpenDirReadOnly: a read-only open reads what was committed, writes nothing, and refuses
// a database that misses migrations it cannot apply.
func TestOpenDirReadOnly(t *testing.T) {
	dir := t.TempDir()
	set := Migrations{Name: "t", FS: fstest.MapFS{"001_a.sql": {Data: []byte("CREATE TABLE a(x INTEGER);")}}}
	db, err := OpenDir(dir, set)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`INSERT INTO a(x) VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ro, err := OpenDirReadOnly(dir, set)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var x int
	if err := ro.R.QueryRow(`SELECT x FROM a`).Scan(&x); err != nil || x != 7 {
		t.Fatalf("read %d, %v", x, err)
	}
	if err := ro.Migrate(set); err != nil {
		t.Fatalf("a database with every migration needs no write: %v", err)
	}
	if _, err := ro.W.Exec(`INSERT INTO a(x) VALUES (8)`); err == nil {
		t.Fatal("a write through a read-only open succeeded")
	}

	newer := Migrations{Name: "t", FS: fstest.MapFS{"001_a.sql": set.FS.(fstest.MapFS)["001_a.sql"],
		"002_b.sql": {Data: []byte("CREATE TABLE b(y INTEGER);")}}}
	if db, err := OpenDirReadOnly(dir, newer); !errors.Is(err, ErrNotUpToDate) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("a database missing a migration: %v", err)
	}
	if _, err := OpenDirReadOnly(t.TempDir()); err == nil {
		t.Fatal("a folder with no database opened")
	}
}
