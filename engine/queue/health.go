package queue

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// Health: what stops the queue from working that people must act on. Today that is a full disk:
// any write that fails for want of space (a handler's file, a commit) pauses this process's
// workers, which stop claiming jobs, fail the job that hit it with E009, keep the outcomes they
// could not record, and resume by themselves when space returns. Nothing committed is touched.

// Health says whether this process's workers are paused, and why. The zero value is healthy.
type Health struct {
	// DiskFull is set while the disk holding Folder is full: workers claim nothing new.
	DiskFull bool
	// Folder is the data folder whose disk is full.
	Folder string
	// Since is when the disk was found full.
	Since time.Time
	// Error is what people should read (E009, English and Japanese).
	Error *job.Error
}

// Events published (JobID 0) when the health changes; subscribers re-read Health.
const (
	EventDiskFull = "QueuePausedDiskFull" // the disk is full: workers paused
	EventResumed  = "QueueResumed"        // space returned: workers claim again
)

// minFreeToResume is how much space must be free before paused workers try again: enough for
// the outcomes they hold and the WAL pages of a few claims.
const minFreeToResume = 4 << 20

// Health returns the queue's health in this process.
func (q *Queue) Health() Health {
	q.healthMu.Lock()
	defer q.healthMu.Unlock()
	return q.health
}

// folder is the data folder: where the database and the jobs' files are.
func (q *Queue) folder() string {
	if q.opts.DataDir != "" {
		return q.opts.DataDir
	}
	return filepath.Dir(q.db.Path)
}

// diskFullError is the error of a job or a write that failed for want of space.
func (q *Queue) diskFullError(cause error) *job.Error {
	dir := q.folder()
	return job.Wrap(job.E009, cause, fmt.Sprintf("the disk is full: free some space on the disk of %s, then retry this job (it is not retried by itself); "+
		"the jobs still waiting start by themselves once there is room", dir)).
		WithJa(fmt.Sprintf("ディスクがいっぱいです。%s のあるディスクの空き容量を増やしてから、このジョブを再実行してください（自動では再実行しません）。"+
			"待機中のジョブは空きができると自動的に始まります。", dir)).
		Permanent()
}

// writeFullError is the error of a write asked of the queue (a submission, a claim, an outcome)
// that failed for want of space: nothing of it was recorded. It names no job: the job, if any,
// is as it was.
func (q *Queue) writeFullError(cause error) *job.Error {
	dir := q.folder()
	return job.Wrap(job.E009, cause, fmt.Sprintf("the disk is full: nothing could be recorded; free some space on the disk of %s, then try again", dir)).
		WithJa(fmt.Sprintf("ディスクがいっぱいのため、何も記録できませんでした。%s のあるディスクの空き容量を増やしてから、もう一度お試しください。", dir)).
		Permanent()
}

// pausedError is what Health says while the workers are paused for want of space: what waits
// starts by itself, what failed does not.
func (q *Queue) pausedError(cause error) *job.Error {
	dir := q.folder()
	return job.Wrap(job.E009, cause, fmt.Sprintf("the disk is full: free some space on the disk of %s. The jobs still waiting start by themselves "+
		"once there is room; a job that failed for want of space must be retried", dir)).
		WithJa(fmt.Sprintf("ディスクがいっぱいです。%s のあるディスクの空き容量を増やしてください。待機中のジョブは空きができると自動的に始まります。"+
			"容量不足で失敗したジョブは再実行が必要です。", dir)).
		Permanent()
}

// diskFull records that the disk is full (pausing the workers; said once) and returns the error
// to report.
func (q *Queue) diskFull(cause error) *job.Error {
	e := q.diskFullError(cause)
	q.healthMu.Lock()
	was := q.health.DiskFull
	if !was {
		go q.giveRoom()
		q.health = Health{DiskFull: true, Folder: q.folder(), Since: q.now(), Error: q.pausedError(cause)}
	}
	q.healthMu.Unlock()
	if !was {
		q.publish(job.Event{Kind: EventDiskFull, Message: e.Message, At: q.now()})
	}
	return e
}

// spaceReturned reports whether the disk of the data folder has room again (where the system
// can tell; elsewhere the next write tells).
func (q *Queue) spaceReturned() bool {
	free, ok := store.FreeSpace(q.folder())
	return !ok || free >= minFreeToResume
}

// resumed clears the disk-full state once a write succeeded again, and wakes the workers.
func (q *Queue) resumed() {
	q.healthMu.Lock()
	was := q.health.DiskFull
	q.health = Health{}
	q.healthMu.Unlock()
	if was {
		go func() {
			q.db.W.Exec("PRAGMA wal_autocheckpoint=1000") // the default again
			q.keepReserve()
		}()
		q.publish(job.Event{Kind: EventResumed, At: q.now()})
		q.signalAll()
	}
}

// reserveSize is the room kept aside in the data folder (ReserveFile) while the disk has space,
// and given back the moment it fills: enough for the outcomes of the jobs running then to be
// recorded (a failure, a return to the queue), so that no job is left RUNNING by a full disk.
const reserveSize = 4 << 20

// ReserveFile is the file in the data folder holding that room (no handler or workflow may
// touch it).
const ReserveFile = ".jobdesk-space-reserve"

// keepReserve sets the room aside if it is not yet and the disk has enough besides.
func (q *Queue) keepReserve() {
	path := filepath.Join(q.folder(), ReserveFile)
	if fi, err := os.Stat(path); err == nil && fi.Size() == reserveSize {
		return
	}
	if free, ok := store.FreeSpace(q.folder()); !ok || free < reserveSize+minFreeToResume {
		return
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	_, err = f.Write(make([]byte, reserveSize)) // written, not sparse: the room is really taken
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err != nil || cerr != nil {
		os.Remove(path)
	}
}

// giveRoom is what the disk filling does: the automatic checkpoints stop, then the reserve is
// given back to the disk. A checkpoint copies the WAL's pages into the database file, which
// grows by as much as the WAL holds beyond its end (the pages of a large import): run after
// any small commit, it would take the room given back, and the outcomes waiting to be recorded
// would fail again. The WAL, whose frames are rewritten in place, needs little. (It runs in its
// own goroutine: diskFull may be called while the writing connection is held.)
func (q *Queue) giveRoom() {
	q.db.W.Exec("PRAGMA wal_autocheckpoint=0")
	os.Remove(filepath.Join(q.folder(), ReserveFile))
}
