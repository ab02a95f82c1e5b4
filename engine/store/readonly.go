package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// ErrNotUpToDate is returned (wrapped) by OpenDirReadOnly when the database needs migrations
// that a read-only open cannot apply.
var ErrNotUpToDate = errors.New("the database needs an update that cannot be written")

// OpenDirReadOnly opens the database in data folder dir for reading only: for a folder or
// file JobDesk may not write (a read-only disk, a folder without write permission), so that
// commands that only read still work. Nothing is created, migrated or written: both W and R
// are read-only connections, on which a write fails (SQLITE_READONLY). The database must exist
// and know every migration of sets (else ErrNotUpToDate, or ErrTooNew); the quick check runs
// as on Open.
//
// The file is opened with mode=ro, which reads a WAL database whose -wal and -shm files
// exist, or can be created. Where they cannot be created (a read-only folder after JobDesk
// closed cleanly, which removes them) and no -wal file holds anything, the file is opened
// immutable: it then holds every committed change, and nothing can write it.
func OpenDirReadOnly(dir string, sets ...Migrations) (*DB, error) {
	path := filepath.Join(dir, FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open database file: %w", err)
	}
	uri := "file:" + uriPath(path) + "?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)"
	db, err := openReadOnly(path, uri)
	if err != nil {
		if st, werr := os.Stat(path + "-wal"); werr == nil && st.Size() > 0 {
			return nil, err // changes wait in the -wal file: reading without it would miss them
		}
		if db, err = openReadOnly(path, uri+"&immutable=1"); err != nil {
			return nil, err
		}
	}
	if err := db.quickCheck(); err != nil {
		db.Close()
		return nil, err
	}
	for _, s := range sets {
		if err := db.upToDate(s); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// openReadOnly opens both pools on dsn and reads the schema once, so a file that cannot be
// read this way fails here.
func openReadOnly(path, dsn string) (*DB, error) {
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(runtime.NumCPU(), 4)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{W: w, R: r, Path: path}
	var tables int
	if err := r.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
		db.Close()
		return nil, classify(err)
	}
	return db, nil
}

// upToDate reports, as an error, a database that does not have every migration of s.
func (db *DB) upToDate(s Migrations) error {
	ms, err := readSet(s)
	if err != nil {
		return err
	}
	var have sql.NullInt64
	if err := db.R.QueryRow(`SELECT max(version) FROM schema_migrations WHERE set_name=?`, s.Name).Scan(&have); err != nil {
		return classify(err)
	}
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	switch {
	case int(have.Int64) > known:
		return fmt.Errorf("%w (%s schema version %d; this JobDesk knows %d)", ErrTooNew, s.Name, have.Int64, known)
	case int(have.Int64) < known:
		return fmt.Errorf("%w (%s schema version %d; this JobDesk needs %d)", ErrNotUpToDate, s.Name, have.Int64, known)
	}
	return nil
}
