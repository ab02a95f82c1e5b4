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

// CloudStatus is whether the cloud can be used now, as `jobdesk cloud status --json` prints it
// and the window's cloud page shows it.
type CloudStatus struct {
	cloudstatus.Report
	DataDir  string             `json:"data_dir"`
	Outbox   int                `json:"outbox"`         // cloud jobs waiting to go out (PENDING)
	Jobs     map[job.Status]int `json:"jobs_by_status"` // the cloud's top-level jobs
	LastSync *time.Time         `json:"last_sync,omitempty"`
}

// CloudStatus probes the cloud (each service within cloudstatus.Timeout) and counts the
// device's cloud jobs. overrides are flag values that override cloud.json and the environment
// (cloudconfig.Flags), as on `jobdesk cloud status`.
func (a *App) CloudStatus(ctx context.Context, overrides ...map[string]string) (CloudStatus, error) {
	var flags map[string]string
	if len(overrides) > 0 {
		flags = overrides[0]
	}
	cfg, err := cloudconfig.Load(a.DataDir(), os.Getenv, flags)
	if err != nil {
		return CloudStatus{}, err
	}
	st := CloudStatus{DataDir: a.DataDir()}
	if st.Report, err = cloudstatus.Check(ctx, cfg); err != nil {
		return st, err
	}
	if st.Jobs, err = a.CountsByTarget(ctx, job.TargetCloud); err != nil {
		return st, err
	}
	st.Outbox = st.Jobs[job.Pending] + st.Jobs[job.Retrying]
	if t, err := a.LastCompleted(ctx, job.TargetCloud); err == nil && !t.IsZero() {
		t := t.In(time.Local)
		st.LastSync = &t
	}
	return st, nil
}
