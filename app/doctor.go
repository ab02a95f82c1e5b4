package app

import (
	"fmt"

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
		return "", "", job.Wrap(job.E009, err, "no backup could be restored: "+err.Error()).
			WithJa("バックアップを復元できませんでした。")
	}
	return restored, movedTo, nil
}
