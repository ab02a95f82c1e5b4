package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"jobdesk/app"
	"jobdesk/engine/aijob"
	"jobdesk/engine/job"
)

// OfflineWait is how long `--wait` waits while every unfinished job is held back by an AI
// provider that does not answer, when --timeout does not say otherwise. The jobs stay queued.
const OfflineWait = 5 * time.Minute

// WaitJobs waits until every job is final, drawing progress on Stderr, and returns them as they
// ended. Ctrl-C cancels the unfinished ones.
func (c *CLI) WaitJobs(ctx context.Context, a *app.App, jobs []job.Job) ([]job.Job, error) {
	events, unsub := a.Subscribe(1024)
	defer unsub()
	tty := isTerminal(c.Stderr)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastLine := printedLines{}
	var fullSince time.Time
	start := time.Now()
	var heldSince time.Time // since when every unfinished job waits for an offline AI provider
	waited := make(map[int64]bool, len(jobs))
	for _, j := range jobs {
		waited[j.ID] = true
	}
	for {
		done := 0
		for i := range jobs {
			if jobs[i].Status.Final() {
				done++
				continue
			}
			j, err := a.Get(ctx, jobs[i].ID)
			if err != nil {
				return jobs, err
			}
			jobs[i] = j
			if j.Status.Final() {
				done++
			}
		}
		c.drawProgress(jobs, tty, lastLine)
		if done == len(jobs) {
			if tty {
				fmt.Fprintln(c.Stderr)
			}
			return jobs, nil
		}
		// The disk is full: the engine is paused and nothing more can be recorded, so waiting
		// could last forever. Give the jobs that hit it a moment to record their failure, then
		// end with E009 saying what becomes of each unfinished job.
		if h := a.Health(); h.DiskFull {
			if fullSince.IsZero() {
				fullSince = time.Now()
			} else if time.Since(fullSince) >= diskFullGrace {
				if tty {
					fmt.Fprintln(c.Stderr)
				}
				return jobs, diskFullWait(h, jobs)
			}
		} else {
			fullSince = time.Time{}
		}
		if offlineHeld(jobs) {
			if heldSince.IsZero() {
				heldSince = time.Now()
			}
		} else {
			heldSince = time.Time{}
		}
		limit, since := OfflineWait, heldSince
		if c.waitLimitSet {
			limit, since = c.waitLimit, start
		}
		if limit > 0 && !since.IsZero() && time.Since(since) >= limit {
			if tty {
				fmt.Fprintln(c.Stderr)
			}
			return jobs, gaveUp(jobs, limit)
		}
		if !waitForChange(ctx, events, tick.C, waited) {
			// Ctrl-C while waiting: cancel what is still running, so nothing is left half done.
			for _, j := range jobs {
				if !j.Status.Final() {
					a.Cancel(context.Background(), j.ID)
				}
			}
			return jobs, job.Errorf(job.E013, "interrupted; the unfinished jobs were cancelled").WithJa("中断しました。未完了のジョブはキャンセルされました。")
		}
	}
}

// waitForChange sleeps until the jobs waited for may have changed: an event of one of them, an
// event of no job in particular (another process wrote, the disk filled or has room again), or
// the tick; it returns false when ctx ended first. The events of other jobs wake nothing: a
// workflow's task and map-item jobs send hundreds while the job a person waits for sends a few,
// and re-reading and redrawing on each of them cost the command processor time the jobs
// themselves could use (BenchmarkTaskWorkflow64CLI).
func waitForChange(ctx context.Context, events <-chan job.Event, tick <-chan time.Time, waited map[int64]bool) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case e := <-events:
			if e.JobID == 0 || waited[e.JobID] {
				return true
			}
		case <-tick:
			return true
		}
	}
}

// diskFullGrace is how long a waiting command still waits once the disk is full, for the jobs
// that hit it to record their failure.
const diskFullGrace = 2 * time.Second

// diskFullWait is the error a waiting command ends with on a full disk: E009, what to free, and
// what becomes of each job that did not finish. A job left RUNNING cannot be recorded as stopped
// (nothing can be written): its lease lapses and the next JobDesk that runs with room on the disk
// returns it to the queue and runs it again; a PENDING job runs then too.
func diskFullWait(h app.Health, jobs []job.Job) *job.Error {
	var en, ja strings.Builder
	fmt.Fprintf(&en, "the disk is full: free some space on the disk of %s.", h.Folder)
	fmt.Fprintf(&ja, "ディスクがいっぱいです。%s のあるディスクの空き容量を増やしてください。", h.Folder)
	for _, j := range jobs {
		switch {
		case j.Status == job.Failed && j.Error != nil && j.Error.Code == job.E009:
			fmt.Fprintf(&en, " Job %s (%s) failed: once there is room, retry it (jobdesk retry %d).", j.Ref(), j.Name, j.ID)
			fmt.Fprintf(&ja, "ジョブ %s（%s）は失敗しました。空きができたら再実行してください（jobdesk retry %d）。", j.Ref(), j.Name, j.ID)
		case j.Status.Final():
			continue
		case j.Status == job.Pending:
			fmt.Fprintf(&en, " Job %s (%s) waits: it runs when JobDesk runs again with room on the disk.", j.Ref(), j.Name)
			fmt.Fprintf(&ja, "ジョブ %s（%s）は待機中です。空きができた状態で JobDesk を再び動かすと実行されます。", j.Ref(), j.Name)
		default:
			fmt.Fprintf(&en, " Job %s (%s) could not finish: it runs again when JobDesk runs again with room on the disk.", j.Ref(), j.Name)
			fmt.Fprintf(&ja, "ジョブ %s（%s）は完了できませんでした。空きができた状態で JobDesk を再び動かすと、もう一度実行されます。", j.Ref(), j.Name)
		}
	}
	var cause error
	if h.Error != nil {
		cause = h.Error.Err
	}
	return job.Wrap(job.E009, cause, en.String()).WithJa(ja.String()).WithName("DiskFullError").Permanent()
}

// offlineHeld reports whether every unfinished job is PENDING because its AI provider does not
// answer (the message the AI family leaves while it waits).
func offlineHeld(jobs []job.Job) bool {
	n := 0
	for _, j := range jobs {
		if j.Status.Final() {
			continue
		}
		if j.Status != job.Pending || !strings.Contains(j.Message, aijob.OfflineMessage) {
			return false
		}
		n++
	}
	return n > 0
}

// gaveUp is the error of a wait that ran past its limit: E011, naming the unfinished jobs and
// why they wait; they stay queued and run when JobDesk runs next (the window, `jobdesk worker`).
func gaveUp(jobs []job.Job, limit time.Duration) error {
	var names []string
	offline := false
	for _, j := range jobs {
		if j.Status.Final() {
			continue
		}
		why := string(j.Status)
		if j.Message != "" {
			why += ": " + j.Message
		}
		offline = offline || strings.Contains(j.Message, aijob.OfflineMessage)
		names = append(names, fmt.Sprintf("job %s %s (%s)", j.Ref(), j.Name, why))
	}
	en := fmt.Sprintf("gave up waiting after %s: %s. The jobs stay queued and run when JobDesk runs again (the window or jobdesk worker); wait longer with --timeout", limit, strings.Join(names, ", "))
	ja := fmt.Sprintf("%s 待ちましたが終わらなかったため、待つのをやめました: %s。ジョブは登録されたままで、次に JobDesk が動くとき（ウィンドウまたは jobdesk worker）に実行されます。もっと待つには --timeout を指定してください。", limit, strings.Join(names, "、"))
	if offline {
		en += "; the AI provider does not answer: check that it is running, or its address in Settings → AI"
		ja += "AI プロバイダーが応答しません。起動しているか、設定 → AI のアドレスを確認してください。"
	}
	return job.Errorf(job.E011, "%s", en).WithJa(ja)
}
