package app

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudjobs"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/mirror"
)

// Cloud is the cloud side of a running App: the dispatcher that sends target=cloud jobs and the
// status mirror that follows their executions. Mirror.SetOnScreen says which job the window
// shows.
type Cloud struct {
	Config     cloudconfig.Config
	Clients    *dispatch.Cloud // the AWS clients (S3, Step Functions, SQS) the dispatcher uses
	Dispatcher *dispatch.Dispatcher
	Mirror     *mirror.Mirror
}

// StartCloud starts the dispatcher and the status mirror of the data folder's cloud.json (then
// the environment). When the cloud is not configured it starts nothing and returns a nil Cloud;
// stop ends both and waits for them (their jobs go back to the queue; the executions go on).
func StartCloud(ctx context.Context, a *App) (c *Cloud, stop func(), err error) {
	cfg, err := cloudconfig.Load(a.DataDir(), os.Getenv, nil)
	if err != nil || !cfg.Configured() {
		return nil, func() {}, err
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		return nil, func() {}, err
	}
	cloud := dispatch.FromConfig(cfg, awsCfg)
	m := mirror.New(cloud.Exec, a.queue, mirror.Options{SQS: mirror.StatusQueueClient(awsCfg), StatusQueue: cfg.StatusQueue})
	dev := cloudjobs.HandlerSet{DataDir: a.DataDir(), DB: a.db, Queue: a.queue, Executions: m.Executions(), Replies: m.Replies}
	d := dispatch.New(a.queue, cloud, dispatch.Options{Handlers: cloudjobs.Handlers(dev)})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{}, 2)
	go func() { d.Run(runCtx); done <- struct{}{} }()
	go func() { m.Run(runCtx); done <- struct{}{} }()
	return &Cloud{Config: cfg, Clients: cloud, Dispatcher: d, Mirror: m}, func() { cancel(); <-done; <-done }, nil
}

// Where a job runs: the --target flag's values, the job's own targets (job.TargetDevice,
// job.TargetCloud) and auto, which JobTarget decides per file.
const (
	TargetDevice = job.TargetDevice
	TargetCloud  = job.TargetCloud
	TargetAuto   = "auto"
)

// JobTarget turns --target device|cloud|auto for a job of type typ on path into the job's
// target (job.TargetDevice or job.TargetCloud). auto is the cloud when cloud.json configures it,
// its credentials can be had, the type can run there and the input is large by the thresholds
// (a CSV over csv_bytes; a ZIP of more than documents files); else the device. "cloud" for a
// cloud that is not configured is a usage error naming what cloud.json lacks.
func JobTarget(ctx context.Context, dataDir, target, typ, path string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(target)) {
	case "", TargetDevice:
		return job.TargetDevice, nil
	case TargetCloud, TargetAuto:
	default:
		return "", job.Errorf(job.E014, "--target %q must be device, cloud or auto", target).
			WithJa("--target には device、cloud、auto のいずれかを指定してください。")
	}
	cfg, err := cloudconfig.Load(dataDir, os.Getenv, nil)
	if err != nil {
		return "", err
	}
	runs := cloudjobs.Runs(typ)
	if strings.EqualFold(target, TargetCloud) {
		if !cfg.Configured() {
			return "", job.Errorf(job.E014, "The cloud is not configured: set %s in cloud.json.", cfg.Missing()).
				WithJa("クラウドが設定されていません。cloud.json に " + cfg.Missing() + " を設定してください。")
		}
		if !runs {
			return "", job.Errorf(job.E014, "a %s job cannot run in the cloud yet", typ).
				WithJa("この種類のジョブはまだクラウドで実行できません。")
		}
		return job.TargetCloud, nil
	}
	if !cfg.Configured() || !runs || !bigInput(cfg.Thresholds(), typ, path) {
		return job.TargetDevice, nil
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil || cfg.Credentials(ctx, awsCfg) != nil {
		return job.TargetDevice, nil // not reachable as things are: the device runs it
	}
	return job.TargetCloud, nil
}

// bigInput reports whether path is over the auto thresholds for a job of type typ.
func bigInput(t cloudconfig.Thresholds, typ, path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if typ == cloudjobs.TypeCSV {
		return t.Big(st.Size(), -1, 0)
	}
	docs := 1
	if strings.EqualFold(filepath.Ext(path), ".zip") {
		if zr, err := zip.OpenReader(path); err == nil {
			docs = len(zr.File)
			zr.Close()
		}
	}
	return t.Big(0, -1, docs)
}

// CloudDetail is where a cloud job runs, for its detail (`jobdesk show`, the window): the region,
// its Step Functions execution and a link to it in the AWS console, and the S3 URI its input was
// uploaded to. A queue-driven job (an image caption, an eligibility extraction) has no execution.
type CloudDetail struct {
	Region       string `json:"region,omitempty"`
	ExecutionARN string `json:"execution_arn,omitempty"`
	ConsoleURL   string `json:"console_url,omitempty"`
	InputURI     string `json:"input_uri,omitempty"`
}

// CloudDetail returns the cloud detail of job id from what the device recorded (no AWS call): the
// execution and input its history names, the region of the execution's ARN (else cloud.json's).
// A job that does not run in the cloud is refused with E014.
func (a *App) CloudDetail(ctx context.Context, id int64) (CloudDetail, error) {
	j, err := a.queue.Get(ctx, id)
	if err != nil {
		return CloudDetail{}, err
	}
	if j.Target != job.TargetCloud {
		return CloudDetail{}, job.Errorf(job.E014, "job %s runs on this device, not in the cloud", j.Ref()).
			WithJa(fmt.Sprintf("ジョブ %s はこのデバイスで実行されます（クラウドではありません）。", j.Ref()))
	}
	evs, err := a.queue.History(ctx, id)
	if err != nil {
		return CloudDetail{}, err
	}
	d := CloudDetail{ExecutionARN: mirror.LastExecution(evs), InputURI: cloudjobs.LastEvent(evs, cloudjobs.InputEvent)}
	// arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME
	if parts := strings.SplitN(d.ExecutionARN, ":", 5); len(parts) == 5 {
		d.Region = parts[3]
	}
	if d.Region == "" {
		if cfg, err := cloudconfig.Load(a.DataDir(), os.Getenv, nil); err == nil {
			d.Region = cfg.Region
		}
	}
	if d.ExecutionARN != "" && d.Region != "" {
		d.ConsoleURL = ConsoleURL(d.Region, d.ExecutionARN)
	}
	return d, nil
}

// ConsoleURL is the page of execution arn in the AWS console of region.
func ConsoleURL(region, arn string) string {
	return "https://" + region + ".console.aws.amazon.com/states/home?region=" + region + "#/v2/executions/details/" + arn
}
