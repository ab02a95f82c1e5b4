package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Damage, checks and backups. Open runs a quick check bounded in time (QuickCheckBudget) and
// refuses a damaged file with a DamagedError, so nothing is written over unreadable rows;
// Doctor runs the full integrity check; Backup keeps rolling copies in the data folder's
// backups/ (SQLite's VACUUM INTO, a consistent copy taken while others keep working), and
// Restore brings one back.

// QuickCheckBudget bounds the check Open runs: PRAGMA quick_check reads every page, which takes
// milliseconds on a usual database and seconds on a very large one. A check that does not finish
// within the budget is abandoned (the file is opened); Doctor checks it in full.
var QuickCheckBudget = 300 * time.Millisecond

// BackupDir is the folder of rolling backups inside the data folder.
const BackupDir = "backups"

// DefaultBackupKeep is how many backups Backup keeps by default.
const DefaultBackupKeep = 7

// DamagedError says which database file is damaged, what the check found, and what to do. It
// matches ErrDamaged (errors.Is).
type DamagedError struct {
	Path   string
	Detail string // what SQLite reported (the first problems)
}

func (e *DamagedError) Error() string {
	hint, _ := RepairHint(filepath.Dir(e.Path))
	return fmt.Sprintf("%v: %s (%s); nothing was written to it. %s", ErrDamaged, e.Path, e.Detail, hint)
}

// ErrNoBackup is returned (wrapped) by Restore when the data folder holds no backup.
var ErrNoBackup = errors.New("there is no backup")

// RepairHint says what to do about the damaged database of data folder dir, in English and
// Japanese: bring back the newest backup with `jobdesk doctor --restore` when the folder holds
// one; when it holds none there is nothing to restore, so it says so and to move the damaged
// file aside to start afresh (never to run a restore that can only fail).
func RepairHint(dir string) (en, ja string) {
	if b, err := Backups(dir); err == nil && len(b) > 0 {
		return "Run `jobdesk doctor --restore` to bring back the newest good backup, or move the file aside to start afresh",
			"`jobdesk doctor --restore` で最新の正常なバックアップを復元するか、ファイルを別の場所に移すと新しく始められます。"
	}
	backups := filepath.Join(dir, BackupDir)
	return fmt.Sprintf("There is no backup to restore (none in %s): move the file aside to start afresh", backups),
		fmt.Sprintf("復元できるバックアップはありません（%s にありません）。ファイルを別の場所に移すと新しく始められます。", backups)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// quickCheck runs PRAGMA quick_check on a reader within QuickCheckBudget and returns a
// DamagedError when it finds problems. Running out of time is not a finding.
func (db *DB) quickCheck() error {
	ctx, cancel := context.WithTimeout(context.Background(), QuickCheckBudget)
	defer cancel()
	problems, err := integrity(ctx, db.R, "quick_check")
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil:
		if c := classify(err); errors.Is(c, ErrDamaged) {
			return &DamagedError{Path: db.Path, Detail: err.Error()}
		}
		return err
	case len(problems) > 0:
		return &DamagedError{Path: db.Path, Detail: summarize(problems)}
	}
	return nil
}

// integrity runs PRAGMA pragma (quick_check or integrity_check), at most 100 findings, and
// returns them; none when the file is sound.
func integrity(ctx context.Context, db *sql.DB, pragma string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA "+pragma+"(100)")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if s != "ok" {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}

func summarize(problems []string) string {
	const shown = 3
	s := strings.Join(problems[:min(shown, len(problems))], "; ")
	if len(problems) > shown {
		s += fmt.Sprintf("; and %d more", len(problems)-shown)
	}
	return s
}

// Report is what Doctor found.
type Report struct {
	// Path is the database file checked.
	Path string
	// Exists is false when there is no database yet (nothing to check).
	Exists bool
	// OK is true when the full integrity check found nothing.
	OK bool
	// Problems are SQLite's findings (at most 100), or why the file could not be read at all.
	Problems []string
	// Took is how long the check ran.
	Took time.Duration
	// Backups are the backups in the data folder, newest first.
	Backups []BackupInfo
}

// BackupInfo is one backup file.
type BackupInfo struct {
	Path string
	At   time.Time // when it was taken
	Size int64
}

// Doctor runs SQLite's full integrity check on the database in data folder dir, read-only, and
// lists the backups that Restore could bring back. It is what `jobdesk doctor` shows; the error
// is for a check that could not run (the report of a damaged file is not an error).
func Doctor(dir string) (Report, error) {
	ctx := context.Background()
	path := filepath.Join(dir, FileName)
	r := Report{Path: path}
	var err error
	if r.Backups, err = Backups(dir); err != nil {
		return r, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return r, nil
	} else if err != nil {
		return r, err
	}
	r.Exists = true
	start := time.Now()
	r.Problems, err = checkFile(ctx, path)
	r.Took = time.Since(start)
	if err != nil {
		return r, err
	}
	r.OK = len(r.Problems) == 0
	return r, nil
}

// checkFile runs the full integrity check on the database file at path, read-only. A file
// SQLite cannot read at all is a finding, not an error.
func checkFile(ctx context.Context, path string) ([]string, error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	problems, err := integrity(ctx, db, "integrity_check")
	if err != nil {
		if errors.Is(classify(err), ErrDamaged) {
			return []string{err.Error()}, nil
		}
		return nil, err
	}
	return problems, nil
}

// Backups lists the backups in data folder dir, newest first.
func Backups(dir string) ([]BackupInfo, error) {
	entries, err := os.ReadDir(filepath.Join(dir, BackupDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []BackupInfo
	for _, e := range entries {
		at, ok := backupTime(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, BackupInfo{Path: filepath.Join(dir, BackupDir, e.Name()), At: at, Size: info.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out, nil
}

const backupLayout = "20060102-150405.000"

// backupName is the file name of a backup taken at t; backupTime reads it back.
func backupName(t time.Time) string {
	return "jobdesk-" + t.UTC().Format(backupLayout) + ".db"
}

func backupTime(name string) (time.Time, bool) {
	s, ok := strings.CutPrefix(name, "jobdesk-")
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(s, ".db")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(backupLayout, s)
	return t, err == nil
}

// Backup writes a consistent copy of db (taken while other connections keep working) into the
// backups folder beside it, keeps the newest keep backups (DefaultBackupKeep when keep <= 0)
// and deletes older ones. It returns the new backup's path.
func Backup(ctx context.Context, db *DB, keep int) (string, error) {
	if keep <= 0 {
		keep = DefaultBackupKeep
	}
	dir := filepath.Join(filepath.Dir(db.Path), BackupDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create backup folder: %w", err)
	}
	path := filepath.Join(dir, backupName(time.Now()))
	tmp := path + ".part"
	os.Remove(tmp)
	if err := vacuumInto(ctx, db, tmp); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("back up %s: %w", db.Path, classify(err))
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	all, err := Backups(filepath.Dir(db.Path))
	if err != nil {
		return path, err
	}
	for _, b := range all[min(keep, len(all)):] {
		os.Remove(b.Path)
	}
	return path, nil
}

// vacuumInto writes a compact copy of db to path with VACUUM INTO, which reads in one
// transaction: on a reader connection it never holds up the writer. Readers are query-only,
// which VACUUM INTO counts as writing, so this one is let write for the copy.
func vacuumInto(ctx context.Context, db *DB, path string) error {
	conn, err := db.R.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA query_only=0`); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `VACUUM INTO ?`, path)
	if _, err2 := conn.ExecContext(context.Background(), `PRAGMA query_only=1`); err2 != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // never hand it back writable
	}
	return err
}

// BackupIfDue calls Backup when the newest backup is older than every (or there is none), and
// returns the new backup's path, or "" when none was due. A long-running process calls it from
// time to time for a rolling daily backup.
func BackupIfDue(ctx context.Context, db *DB, every time.Duration, keep int) (string, error) {
	all, err := Backups(filepath.Dir(db.Path))
	if err != nil {
		return "", err
	}
	if len(all) > 0 && time.Since(all[0].At) < every {
		return "", nil
	}
	return Backup(ctx, db, keep)
}

// Restore replaces the database in data folder dir with a backup: from (a path), or the newest
// sound backup when from is "". The backup is checked in full first; the replaced file (and its
// WAL) is kept beside it as jobdesk.db.replaced-<time>. No JobDesk process may have the
// database open meanwhile. It returns the backup restored and where the old file went.
func Restore(dir, from string) (restored, movedTo string, err error) {
	ctx := context.Background()
	var candidates []string
	if from != "" {
		candidates = []string{from}
	} else {
		all, err := Backups(dir)
		if err != nil {
			return "", "", err
		}
		for _, b := range all {
			candidates = append(candidates, b.Path)
		}
		if len(candidates) == 0 {
			return "", "", fmt.Errorf("%w in %s", ErrNoBackup, filepath.Join(dir, BackupDir))
		}
	}
	var problems []string
	for _, c := range candidates {
		p, err := checkFile(ctx, c)
		if err != nil {
			return "", "", fmt.Errorf("check backup %s: %w", c, err)
		}
		if len(p) == 0 {
			restored = c
			break
		}
		problems = append(problems, fmt.Sprintf("%s: %s", c, summarize(p)))
	}
	if restored == "" {
		return "", "", fmt.Errorf("%w: no sound backup (%s)", ErrDamaged, strings.Join(problems, "; "))
	}
	path := filepath.Join(dir, FileName)
	tmp := path + ".restoring"
	if err := copyFile(restored, tmp); err != nil {
		os.Remove(tmp)
		return "", "", fmt.Errorf("copy backup: %w", err)
	}
	if _, err := os.Stat(path); err == nil {
		movedTo = path + ".replaced-" + time.Now().UTC().Format("20060102-150405")
		if err := os.Rename(path, movedTo); err != nil {
			os.Remove(tmp)
			return "", "", err
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + suffix); err == nil {
				if err := os.Rename(path+suffix, movedTo+suffix); err != nil {
					return "", "", err
				}
			}
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", "", err
	}
	return restored, movedTo, nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
