package app

import (
	"errors"
	"fmt"
	"path/filepath"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// DoctorReport is what the full check of a data folder's database found (store.Report).
type DoctorReport = store.Report

// Doctor runs SQLite's full integrity check on the database of data folder dir, read-only,
// without opening the App (which refuses a damaged database), and lists the backups Restore
// could bring back. It is `jobdesk doctor`.
func Doctor(dir string) (DoctorReport, error) {
	if dir == "" {
		d, err := DefaultDataDir()
		if err != nil {
			return DoctorReport{}, err
		}
		dir = d
	}
	r, err := store.Doctor(dir)
	if err != nil {
		return r, job.Wrap(job.E009, err, fmt.Sprintf("the database in %s could not be checked", dir)).
			WithJa(fmt.Sprintf("%s のデータベースを検査できませんでした。", dir))
	}
	return r, nil
}

// Restore brings back a backup of data folder dir's database: from, or the newest backup that
// passes the full check when from is "". The file it replaces is kept beside it (movedTo). No
// other JobDesk may have the database open meanwhile. It is `jobdesk doctor --restore`.
func Restore(dir, from string) (restored, movedTo string, err error) {
	if dir == "" {
		if dir, err = DefaultDataDir(); err != nil {
			return "", "", err
		}
	}
	restored, movedTo, err = store.Restore(dir, from)
	if err != nil {
		// The reason in Japanese where JobDesk words it, else SQLite's or the system's own.
		ja := "バックアップを復元できませんでした: " + err.Error()
		switch {
		case errors.Is(err, store.ErrNoBackup):
			ja = fmt.Sprintf("バックアップを復元できませんでした: %s にバックアップがありません。", filepath.Join(dir, store.BackupDir))
		case errors.Is(err, store.ErrDamaged):
			ja = "バックアップを復元できませんでした: 検査に通るバックアップがありません（" + err.Error() + "）。"
		}
		return "", "", job.Wrap(job.E009, err, "no backup could be restored: "+err.Error()).WithJa(ja)
	}
	return restored, movedTo, nil
}

// RepairHint says what to do about the damaged database of data folder dir, in English and
// Japanese: `jobdesk doctor --restore` when a backup exists, else to move the file aside.
func RepairHint(dir string) (en, ja string) { return store.RepairHint(dir) }
