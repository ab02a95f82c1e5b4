// Package app is JobDesk's composition root and its service API. It opens the data folder,
// database, queue and workflow engine of the device, gives every job family (families.go lists
// them, each wired in a package of its own under app/) what it needs through a family.Host,
// and offers the service the window (ui) and the command line (app/cli) both use: submit, list,
// get, count, follow, cancel, retry, export (service.go, result_view.go), and the device's
// workflows and executions (workflows.go). Nothing below it knows about windows or flags; nothing
// above it touches the database, the queue or the workflow engine: App exports none of them.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"jobdesk/app/csvfamily"
	"jobdesk/app/family"
	"jobdesk/assets"
	"jobdesk/engine/aijob"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/grants"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Config is what JobDesk needs to start.
type Config struct {
	// DataDir is the data folder (database, result files). Empty: store.DefaultDataDir().
	DataDir string
	// Workers is how many jobs run at once (0: number of CPUs).
	Workers int
	// Retention is how long finished jobs are kept (0: 90 days).
	Retention time.Duration
	// CloudStandIn makes this App stand in for the cloud (`jobdesk serve`): when cloud.json
	// names a bucket, the workflows' Lambda functions read and write that bucket exactly as the
	// Lambda worker does, and ItemReader/ResultWriter reach it by name (see ServeStores).
	CloudStandIn bool
	// ReadOnly says the caller only reads (ls, show): when the data folder or its database may
	// not be written, Open opens the database read-only instead of failing (writes then fail).
	ReadOnly bool
	// Functions replace the workflow functions of the same names (what the workflows' Tasks
	// call) once the families have registered theirs, as the cloud stand-in's do: a function
	// that must fail in a known way, for a test.
	Functions []functions.Function
}

// App is one running JobDesk: its database, queue, workflow engine, blob store and families,
// and (once started) the engine that runs jobs in this process.
type App struct {
	cfg       Config
	db        *store.DB
	queue     *queue.Queue
	flow      *flow.Engine
	blobs     *blob.Mux
	families  []family.Family // in detection order (newFamilies)
	worker    *queue.Worker
	cloud     *Cloud // the dispatcher and status mirror, while the engine runs and cloud.json configures them
	stopCloud func()
}

// SubmitOptions adjust Submit (family.SubmitOptions, which a family's Submit receives).
type SubmitOptions = family.SubmitOptions

// Open opens (creating when missing) the data folder and database, the queue and the workflow
// engine, opens every family and loads the shipped workflows.
func Open(cfg Config) (*App, error) {
	if cfg.DataDir == "" {
		d, err := store.DefaultDataDir()
		if err != nil {
			return nil, job.Wrap(job.E014, err, "cannot find the user data folder; pass --data-dir").
				WithJa("ユーザーデータフォルダーが見つかりません。--data-dir を指定してください。")
		}
		cfg.DataDir = d
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err == nil {
		cfg.DataDir = abs
	}
	fams := newFamilies()
	db, err := store.OpenDir(cfg.DataDir, migrations(fams)...)
	readOnly := false
	if err != nil && cfg.ReadOnly && notWritable(err) {
		if rdb, rerr := store.OpenDirReadOnly(cfg.DataDir, migrations(fams)...); rerr == nil {
			db, err, readOnly = rdb, nil, true
		} else if errors.Is(rerr, store.ErrDamaged) {
			err = rerr
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, store.ErrDamaged):
			en, ja := store.RepairHint(cfg.DataDir)
			return nil, job.Wrap(job.E009, err, fmt.Sprintf("the database in %s is damaged. %s", cfg.DataDir, en)).
				WithJa("データベースが壊れています。" + ja).Permanent()
		case errors.Is(err, store.ErrNetworkFolder):
			return nil, job.Wrap(job.E014, err, fmt.Sprintf("the data folder %s is on a network drive, where the database could be damaged; choose a folder on this PC with --data-dir", cfg.DataDir)).
				WithJa(fmt.Sprintf("データフォルダー %s はネットワークドライブ上にあり、データベースが壊れるおそれがあります。--data-dir でこの PC 上のフォルダーを指定してください。", cfg.DataDir))
		case errors.Is(err, store.ErrTooNew):
			return nil, job.Wrap(job.E009, err, "the database was created by a newer JobDesk; please update JobDesk").
				WithJa("データベースは新しいバージョンの JobDesk で作成されています。JobDesk を更新してください。").Permanent()
		}
		return nil, dataFolderError(cfg.DataDir, err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: cfg.DataDir, Retention: cfg.Retention})
	if err != nil {
		db.Close()
		return nil, job.Wrap(job.E009, err, "the job queue could not be opened").WithJa("ジョブキューを開けませんでした。")
	}
	a := &App{cfg: cfg, db: db, queue: q, families: fams}
	a.blobs = deviceBlobs(cfg.DataDir, db)
	flowOpts := flow.Options{DataDir: cfg.DataDir, Blobs: a.blobs}
	var standIn *functions.Registry
	if cfg.CloudStandIn {
		b, buckets, fns, err := ServeStores(context.Background(), cfg.DataDir)
		if err != nil {
			a.Close()
			return nil, err
		}
		if b != nil {
			flowOpts.Blobs, flowOpts.Buckets, standIn = b, buckets, fns
		}
	}
	if a.flow, err = flow.New(db, q, flowOpts); err != nil {
		a.Close()
		return nil, fmt.Errorf("the workflow engine could not start: %w", err)
	}
	host := &family.Host{DataDir: cfg.DataDir, DB: db, Queue: q, Flow: a.flow, Blobs: a.blobs, Grant: a.grantFiles}
	for _, f := range fams {
		if err := f.Open(host); err != nil {
			a.Close()
			return nil, err
		}
		// The workflows' Tasks call the same handlers as the Lambda functions of the cloud.
		if fs, ok := f.(family.FunctionSource); ok {
			for _, fn := range fs.Functions() {
				a.flow.RegisterFunction(fn.Name, family.Confined(fn.Handler), fn.Options)
			}
		}
	}
	if standIn != nil { // the cloud's versions of the same functions replace the device's
		for _, fn := range standIn.All() {
			a.flow.RegisterFunction(fn.Name, fn.Handler, fn.Options)
		}
	}
	for _, fn := range cfg.Functions {
		a.flow.RegisterFunction(fn.Name, fn.Handler, fn.Options)
	}
	if !readOnly {
		a.loadWorkflows()
	}
	return a, nil
}

// notWritable reports whether err says JobDesk may not write the data folder or its database:
// a read-only disk or database, or no write permission.
func notWritable(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) ||
		strings.Contains(err.Error(), "readonly database") || strings.Contains(err.Error(), "read-only file system")
}

// loadWorkflows stores every shipped workflow with the engine once the families' functions are
// registered. A workflow that does not validate is skipped with a warning, so one bad file
// never stops the app.
func (a *App) loadWorkflows() {
	ctx := context.Background()
	// The engine's own region and account (arn:aws:states:REGION:ACCOUNT:…) fill the
	// workflows' placeholders, as the deploy template's DefinitionSubstitutions do on AWS.
	arn := strings.Split(a.flow.StateMachineARN("x"), ":")
	for _, name := range assets.Workflows() {
		def, err := assets.DeviceWorkflow(name, arn[3], arn[4])
		if err != nil {
			fmt.Fprintf(os.Stderr, "jobdesk: warning: workflow %s was not loaded: %v\n", name, err)
			continue
		}
		if _, err := a.flow.PutStateMachine(ctx, name, string(def)); err != nil {
			fmt.Fprintf(os.Stderr, "jobdesk: warning: workflow %s was not loaded: %v\n", name, err)
		}
	}
}

// DeviceDefinition is a workflow file a person gives with the device's own values in its
// placeholders (${CsvProcessorFunction}, ${WorkflowNotificationsTopicArn}, …), as loadWorkflows
// fills the shipped ones, so a shipped workflow file validates and runs from the command line as
// it is; a placeholder the device has no value for is left for validation to name.
func (a *App) DeviceDefinition(def []byte) []byte {
	arn := strings.Split(a.flow.StateMachineARN("x"), ":")
	return assets.SubstituteKnown(def, assets.DeviceSubstitutions(arn[3], arn[4]))
}

// DefaultDataDir is the data folder used when none is given: the user's data folder.
func DefaultDataDir() (string, error) { return store.DefaultDataDir() }

// DataDir returns the data folder in use.
func (a *App) DataDir() string { return a.cfg.DataDir }

// migrations lists every package's schema, applied at open: the queue's, the families', the
// workflow engine's and the file grants'.
func migrations(fams []family.Family) []store.Migrations {
	sets := []store.Migrations{queue.Migrations}
	for _, f := range fams {
		sets = append(sets, f.Migrations()...)
	}
	return append(sets, flow.Migrations, grants.Migrations)
}

// StartEngine starts running jobs in this process until Close.
func (a *App) StartEngine(ctx context.Context) error {
	if a.worker != nil {
		return nil
	}
	w := queue.NewWorker(a.queue, queue.WorkerOptions{Workers: a.cfg.Workers})
	for _, f := range a.families {
		f.Register(w)
	}
	a.flow.Attach(w)
	if err := w.Start(ctx); err != nil {
		return err
	}
	a.worker = w
	// Jobs whose target is the cloud go out from here too; an unconfigured cloud starts nothing,
	// and one that cannot start now leaves its jobs waiting in the outbox.
	if c, stop, err := StartCloud(ctx, a); err == nil {
		a.cloud, a.stopCloud = c, stop
	} else {
		fmt.Fprintln(os.Stderr, "jobdesk: the cloud dispatcher did not start:", job.AsError(err).Message)
	}
	return nil
}

// EngineRunning reports whether an engine runs in this process or in another live process on
// this machine using the same data folder.
func (a *App) EngineRunning(ctx context.Context) bool {
	if a.worker != nil {
		return true
	}
	elsewhere, err := a.queue.WorkerElsewhere(ctx)
	return err == nil && elsewhere
}

// EngineTypes returns the job types the engine of this process runs (none before StartEngine).
func (a *App) EngineTypes() []string {
	if a.worker == nil {
		return nil
	}
	return a.worker.Types()
}

// Close stops the engine (running jobs go back to the queue) and closes the database.
func (a *App) Close() error {
	if a.stopCloud != nil {
		a.stopCloud()
	}
	if a.worker != nil {
		a.worker.Stop()
	}
	if a.flow != nil {
		a.flow.Close()
	}
	a.queue.Close()
	return a.db.Close()
}

// Submit enqueues one job per file and returns them in the order of paths (a family that
// recognises a file it processed before returns that job instead of a new one). A missing or
// unreadable path is refused with a clear error before anything is enqueued; should a later
// step fail, the jobs made so far are returned, in order, with the error.
func (a *App) Submit(ctx context.Context, paths []string, o SubmitOptions) ([]job.Job, error) {
	type request struct {
		path, typ, target string
		f                 family.Family
	}
	var reqs []request
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, job.Wrap(job.E014, err, fmt.Sprintf("%s does not exist or cannot be read", p)).
				WithJa(fmt.Sprintf("%s が見つからないか、読み取れません。", p))
		}
		if st.IsDir() {
			return nil, job.Errorf(job.E014, "%s is a folder; drop files instead", p).
				WithJa(fmt.Sprintf("%s はフォルダーです。ファイルを指定してください。", p))
		}
		typ := o.Type
		if typ == "" {
			typ = detectType(a.families, abs)
			if strings.EqualFold(strings.TrimSpace(o.Target), TargetCloud) && aijob.ImageMIME(family.ReadHead(abs)) != "" {
				// An image sent to the cloud is described there (Bedrock is the cloud's AI
				// service), whether or not an AI service is set up on the device.
				typ = aijob.TypeCaption
			}
		}
		f, ok := familyOf(a.families, typ)
		if !ok {
			return nil, job.Errorf(job.E014, "unknown job type %q (known: %s)", typ, strings.Join(Types(), ", ")).
				WithJa(fmt.Sprintf("ジョブの種類 %q は存在しません。", typ))
		}
		target, err := JobTarget(ctx, a.DataDir(), o.Target, typ, abs)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, request{abs, typ, target, f})
	}
	// A person chose these files: handlers and workflows may read them wherever they are.
	granted := make([]string, len(reqs))
	for i, r := range reqs {
		granted[i] = r.path
	}
	if err := a.grantFiles(ctx, granted); err != nil {
		return nil, err
	}
	out := make([]job.Job, 0, len(reqs))
	for _, r := range reqs {
		fo := o
		fo.Target = r.target
		if r.typ == csvjob.Type {
			fo.Extra = csvfamily.SavedLayoutOptions(a.DataDir(), r.path, o.Extra)
		}
		j, err := r.f.Submit(ctx, r.path, r.typ, fo)
		if err != nil {
			return out, err
		}
		out = append(out, j)
	}
	return out, nil
}
