package app

import (
	"context"
	"os"
	"time"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudstatus"
)

// This file serves the window's cloud page: cloud.json as the page edits it, and the same
// status `jobdesk cloud status` prints (the probes of sync/cloudstatus, the outbox, the cloud's
// jobs and the last sync).

// CloudConfig returns cloud.json with the environment applied, as the cloud side reads it.
func (a *App) CloudConfig() (cloudconfig.Config, error) {
	return cloudconfig.Load(a.DataDir(), os.Getenv, nil)
}

// SaveCloudConfig writes c to cloud.json.
func (a *App) SaveCloudConfig(c cloudconfig.Config) error {
	return cloudconfig.Save(a.DataDir(), c)
}

// CloudStatus probes the cloud (each service within cloudstatus.Timeout) and counts the
// device's cloud jobs.
func (a *App) CloudStatus(ctx context.Context) (CloudStatus, error) {
	cfg, err := a.CloudConfig()
	if err != nil {
		return CloudStatus{}, err
	}
	st := CloudStatus{DataDir: a.DataDir()}
	if st.Report, err = cloudstatus.Check(ctx, cfg); err != nil {
		return st, err
	}
	if st.Jobs, err = a.Queue.CountsByTarget(ctx, job.TargetCloud); err != nil {
		return st, job.Wrap(job.E009, err, "the cloud's jobs could not be counted").WithJa("クラウドのジョブを数えられませんでした。")
	}
	st.Outbox = st.Jobs[job.Pending] + st.Jobs[job.Retrying]
	if t, err := a.Queue.LastCompleted(ctx, job.TargetCloud); err == nil && !t.IsZero() {
		t := t.In(time.Local)
		st.LastSync = &t
	}
	return st, nil
}
