// Package store owns JobDesk's SQLite database: where the file lives, how it is opened (WAL,
// synchronous=NORMAL, busy timeout, foreign keys, one writer connection and a pool of readers),
// and the versioned migrations embedded in the binary. Every package that keeps tables brings its
// own migration set, so the tables stay next to the code that owns them. It also guards the file
// (doctor.go): a quick check on every open that refuses a damaged database before anything is
// written to it, the full check for `jobdesk doctor`, and rolling backups with their restore.
// A data folder JobDesk may not write is opened read-only (readonly.go), for commands that
// only read.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the database file's name inside the data folder.
const FileName = "jobdesk.db"

// DB is an open JobDesk database. W is the single writer connection: every write goes through it,
// so writers never fight over SQLite's lock inside one process. R is a pool of readers that see
// committed data without blocking the writer (WAL).
type DB struct {
	W    *sql.DB
	R    *sql.DB
	Path string
}

// Migrations is one package's set of schema changes: files named NNN_description.sql in FS,
// applied in order, each once, each in its own transaction. Name keys the set in the
// schema_migrations table, so sets of different packages never collide.
type Migrations struct {
	Name string
	FS   fs.FS
}

// MigrationsFrom is the migration set name whose files are in folder dir of fsys, usually the
// package's embedded files:
//
//	//go:embed migrations/*.sql
//	var migrationFiles embed.FS
//	var Migrations = store.MigrationsFrom("queue", migrationFiles, "migrations")
//
// It panics when dir is not a valid path, a mistake in the program that its first run shows.
func MigrationsFrom(name string, fsys fs.FS, dir string) Migrations {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(fmt.Sprintf("store: migrations %s in %q: %v", name, dir, err))
	}
	return Migrations{Name: name, FS: sub}
}

// ErrDamaged is returned (wrapped, often as a *DamagedError) when the file is not a readable
// SQLite database or its check found damage.
var ErrDamaged = errors.New("the database file is damaged")

// ErrTooNew is returned (wrapped) when the database was written by a newer JobDesk.
var ErrTooNew = errors.New("the database was created by a newer version of JobDesk")

// DefaultDataDir returns the data folder: $JOBDESK_DATA_DIR when set, else the OS user data
// folder (~/.local/share/JobDesk on Linux, honouring XDG_DATA_HOME; ~/Library/Application
// Support/JobDesk on macOS; %LocalAppData%\JobDesk on Windows, see WindowsDataDir).
func DefaultDataDir() (string, error) {
	if d := os.Getenv("JOBDESK_DATA_DIR"); d != "" {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows": // os.UserConfigDir is %AppData%, os.UserCacheDir %LocalAppData%
		roaming, _ := os.UserConfigDir()
		local, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		return WindowsDataDir(WindowsFolders{Roaming: roaming, Local: local})
	case "darwin":
		base, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(base, "JobDesk"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "JobDesk"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "JobDesk"), nil
}

// OpenDir opens (creating when missing) the database in data folder dir and applies sets. On
// Windows a folder on a network drive is refused with ErrNetworkFolder.
func OpenDir(dir string, sets ...Migrations) (*DB, error) {
	if err := checkLocalFolder(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	return Open(filepath.Join(dir, FileName), sets...)
}

// uriPath escapes the characters that mean something in an SQLite URI filename, so a data folder
// named "売上 100%" or "what?" opens like any other.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Open opens the database file at path, creating it with permissions 0600 when missing, checks
// it (quickCheck: a damaged file fails with a *DamagedError, matching ErrDamaged, before
// anything is written to it), and applies the migration sets. Several processes may open the
// same file at once.
func Open(path string, sets ...Migrations) (*DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database file: %w", err)
	}
	f.Close()
	uri := "file:" + uriPath(path)
	dsn := uri + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	rdsn := uri + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=query_only(1)"
	r, err := sql.Open("sqlite", rdsn)
	if err != nil {
		w.Close()
		return nil, err
	}
	n := runtime.NumCPU()
	if n < 4 {
		n = 4
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{W: w, R: r, Path: path}
	if err := db.quickCheck(); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.check(); err != nil {
		db.Close()
		return nil, err
	}
	for _, s := range sets {
		if err := db.Migrate(s); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

func (db *DB) check() error {
	var mode string
	if err := db.W.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		return classify(err)
	}
	if _, err := db.W.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		set_name TEXT NOT NULL, version INTEGER NOT NULL, applied_at INTEGER NOT NULL,
		PRIMARY KEY (set_name, version))`); err != nil {
		return classify(err)
	}
	return nil
}

// IsDamaged reports whether err says the database file is damaged (SQLITE_CORRUPT,
// SQLITE_NOTADB, "malformed"), also when it was found only while working.
func IsDamaged(err error) bool { return errors.Is(classify(err), ErrDamaged) }

func classify(err error) error {
	if errors.Is(err, ErrDamaged) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") ||
		strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB") {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return err
}

// Close closes both pools.
func (db *DB) Close() error {
	err1 := db.R.Close()
	err2 := db.W.Close()
	return errors.Join(err1, err2)
}

type migration struct {
	version int
	name    string
	sql     string
}

func readSet(s Migrations) ([]migration, error) {
	entries, err := fs.ReadDir(s.FS, ".")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s/%s: name must start with a number and _", s.Name, e.Name())
		}
		b, err := fs.ReadFile(s.FS, e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, e.Name(), string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// Migrate applies the migrations of s that this database has not seen yet. It fails with
// ErrTooNew when the database has a version of s this binary does not know.
func (db *DB) Migrate(s Migrations) error {
	ms, err := readSet(s)
	if err != nil {
		return err
	}
	var have sql.NullInt64
	if err := db.W.QueryRow(`SELECT max(version) FROM schema_migrations WHERE set_name=?`, s.Name).Scan(&have); err != nil {
		return classify(err)
	}
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	if int(have.Int64) > known {
		return fmt.Errorf("%w (%s schema version %d; this JobDesk knows %d)", ErrTooNew, s.Name, have.Int64, known)
	}
	for _, m := range ms {
		if int64(m.version) <= have.Int64 {
			continue
		}
		if err := db.Tx(context.Background(), func(tx *sql.Tx) error {
			// Another process may have applied it meanwhile: the immediate transaction holds the
			// write lock, so checking again here is race-free.
			var n int
			if err := tx.QueryRow(`SELECT count(*) FROM schema_migrations WHERE set_name=? AND version=?`, s.Name, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.Exec(m.sql); err != nil {
				return fmt.Errorf("migration %s/%s: %w", s.Name, m.name, err)
			}
			_, err := tx.Exec(`INSERT INTO schema_migrations(set_name, version, applied_at) VALUES(?,?,?)`,
				s.Name, m.version, time.Now().UnixMilli())
			return err
		}); err != nil {
			return classify(err)
		}
	}
	return nil
}

// Tx runs fn in a write transaction on the writer connection and commits it when fn returns nil.
func (db *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
