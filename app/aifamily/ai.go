// Package aifamily wires AI generation into the app: sub-goal, action and task generation
// (seeds 000, 001), image captions (seed 002) and eligibility extraction (seed 003 Job D), on a
// model on the device or Amazon Bedrock (Settings). Each AI job runs its shipped workflow, whose
// Tasks call the AI service's functions (engine/aijob) with their state in this database
// (engine/aijob/aisqlite).
package aifamily

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"jobdesk/app/family"
	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/docjob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Family is the AI family of one App: the handlers' service and its SQLite store.
type Family struct {
	host  *family.Host
	svc   *aijob.Service
	store *aisqlite.Store
}

// unset reports that no AI service is set up (Settings.Configured is false), read afresh so a
// service set up in the window counts at once: images then go to OCR when it is installed,
// and a caption job fails at once saying where to set one up. A family not yet opened counts
// as set up.
func (f *Family) unset() bool {
	if f.host == nil {
		return false
	}
	s, err := LoadSettings(f.host.DataDir)
	return err == nil && !s.Configured
}

var (
	_ family.Family         = (*Family)(nil)
	_ family.FunctionSource = (*Family)(nil)
	_ family.Retrier        = (*Family)(nil)
	_ family.GoalSubmitter  = (*Family)(nil)
)

func (*Family) Name() string                   { return "ai" }
func (*Family) Migrations() []store.Migrations { return []store.Migrations{aisqlite.Migrations} }
func (*Family) Types() []string                { return aijob.Types }

// Open reads the AI settings of the data folder and builds the service on the App's database
// and blob store.
func (f *Family) Open(h *family.Host) error {
	set, err := LoadSettings(h.DataDir)
	if err != nil {
		return err
	}
	p, fb, err := set.Providers(context.Background())
	if err != nil {
		return err
	}
	f.host = h
	f.store = aisqlite.New(h.DB)
	f.svc = aijob.NewService(f.store.State(), p)
	f.svc.Fallback = fb
	f.svc.Prices = set.Prices
	f.svc.Blobs = h.Blobs
	return nil
}

// Service is the family's AI service: goals, their charts, notifications.
func (f *Family) Service() *aijob.Service { return f.svc }

// UsageSince is the model usage recorded since t, for the metrics view.
func (f *Family) UsageSince(ctx context.Context, t time.Time) (aisqlite.UsageTotals, error) {
	return f.store.UsageSince(ctx, t)
}

// TreeUsage is the model usage of job id and every job under it.
func (f *Family) TreeUsage(ctx context.Context, id int64) (aijob.Usage, error) {
	return f.store.TreeUsage(ctx, id)
}

// Functions are the AI service's Lambda functions: the workflows' Tasks call the same handlers
// as Lambda functions.
func (f *Family) Functions() []functions.Function { return f.svc.Functions() }

// Retry starts a new job linked to finished job j (seed 000: a retry is a new process with its
// own id).
func (f *Family) Retry(ctx context.Context, j job.Job) (job.Job, error) {
	return f.RetryGeneration(ctx, j.ID)
}

// SubmitGoal starts sub-goal generation for a goal a person typed, on g.Target.
func (f *Family) SubmitGoal(ctx context.Context, g family.GoalRequest) (job.Job, error) {
	in := aijob.GoalInput{Title: g.Title, Description: g.Description}
	if !g.Deadline.IsZero() {
		in.Deadline = g.Deadline.Format("2006-01-02")
	}
	return f.SubmitGenerationOn(ctx, g.Target, aijob.TypeSubgoals, in)
}

// Register runs each AI job type as an execution of its shipped workflow (they are embedded,
// so always loaded).
func (f *Family) Register(w *queue.Worker) {
	for _, typ := range aijob.Types {
		w.Handle(typ, f.workflowHandler(typ), queue.TypeOptions{Orchestrator: true, Concurrency: 64})
	}
}

// workflowHandler runs one AI job on the device (aijob.RunJob): its workflow reads the goal from
// this database, on the App's flow engine. While the provider is offline the job waits PENDING
// ("AI provider offline") before any execution starts; a caption's file that is no image fails
// first.
func (f *Family) workflowHandler(typ string) job.Handler {
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return aijob.RunJob(ctx, f.runtime(), typ, raw, r)
	}
}

// runtime is the device as an AI job runs on it: the App's flow engine and queue, the family's
// service, and the usage of the job's calls from this database.
func (f *Family) runtime() aijob.Runtime {
	svc := f.svc
	return aijob.Runtime{
		Runtime: orchestrator.Runtime{Executions: f.host.Flow.Executions(), Job: f.host.Queue.Get},
		Service: svc,
		Ready: func(ctx context.Context, typ string, raw json.RawMessage) error {
			if typ == aijob.TypeCaption {
				// A file that is no image fails now, not after waiting for an offline provider.
				var fi aijob.FileInput
				if err := json.Unmarshal(raw, &fi); err != nil {
					return job.Errorf(job.E014, "the job input is not valid").WithJa("ジョブの入力が正しくありません。").Permanent()
				}
				if _, err := svc.CheckImage(ctx, fi.Path); err != nil {
					return err
				}
				if f.unset() {
					return errNoService()
				}
			}
			if err := svc.DeferIfOffline(ctx); err != nil {
				return err
			}
			f.stopEarlierExecution(ctx, typ)
			return nil
		},
		Usage: func(ctx context.Context, jobID int64) (aijob.Usage, error) {
			u, _ := f.store.TreeUsage(ctx, jobID)
			return u, nil
		},
	}
}

// stopEarlierExecution stops the execution this job ran under the name earlier releases gave
// it (<workflow>-<job id>-<attempt>), if JobDesk was upgraded while it ran: the job now starts
// its execution under aijob.ExecutionName, and two executions must not generate for one job.
func (f *Family) stopEarlierExecution(ctx context.Context, typ string) {
	info, ok := job.InfoFrom(ctx)
	if !ok {
		return
	}
	ex := f.host.Flow.Executions()
	workflow := aijob.Workflows[typ]
	for attempt := 1; attempt <= info.Attempt; attempt++ {
		x, err := ex.Describe(ctx, workflow, fmt.Sprintf("%s-%d-%d", workflow, info.ID, attempt))
		if err == nil && x.Status == orchestrator.Running {
			_ = ex.Stop(ctx, x, "States.Aborted", "replaced by the job's execution under its current name")
		}
	}
}

// Detect takes PNG and JPEG files for CAPTION_GENERATION where an AI service is set up. With
// none set up, an image is left to the conversion family when OCR is installed (its text is
// read); with neither, it is still a caption job, which fails at once saying where to set an AI
// service up.
func (f *Family) Detect(path string, head []byte) string {
	if aijob.ImageMIME(head) == "" {
		return ""
	}
	if f.unset() {
		if ok, _ := docjob.ImageOCRAvailable(); ok {
			return ""
		}
	}
	return aijob.TypeCaption
}

// errNoService is the error of a caption job with no AI service set up: permanent (waiting
// would not help), saying where to set one up and that OCR reads an image's text.
func errNoService() error {
	return job.Errorf(job.E014, "no AI service is set up, so the image cannot be described: set one up in Settings → AI (or ai.json in the data folder, or %s); to read the text in an image, install tesseract-ocr and tesseract-ocr-jpn and convert it", EnvEndpoint).
		WithJa("AI サービスが設定されていないため、画像の説明文を作れません。設定 → AI で AI サービスを設定してください（データフォルダーの ai.json または環境変数 " + EnvEndpoint + " でも設定できます）。画像の文字を読み取るには tesseract-ocr と tesseract-ocr-jpn をインストールして変換してください。").
		Permanent()
}

// Submit submits CAPTION_GENERATION or ELIGIBILITY_EXTRACT for a file, or returns the job that
// already does it for the same bytes (Host.SubmitOnce); goal generation starts from `jobdesk
// generate`, not from a file.
func (f *Family) Submit(ctx context.Context, path, typ string, o family.SubmitOptions) (job.Job, error) {
	switch typ {
	case aijob.TypeCaption, aijob.TypeEligibility:
	default:
		return job.Job{}, job.Errorf(job.E014, "%s starts from a goal: use jobdesk generate", typ).
			WithJa("目標からの生成は jobdesk generate を使ってください。")
	}
	if typ == aijob.TypeCaption {
		if _, err := f.svc.CheckImage(ctx, path); err != nil {
			return job.Job{}, err
		}
	}
	sha, err := family.FileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	in, _ := json.Marshal(aijob.FileInput{Path: path})
	return f.host.SubmitOnce(ctx, sha, struct{}{}, queue.Params{Type: typ, Name: filepath.Base(path), Input: in, Priority: o.Priority, Target: o.Target}, o.Force)
}

// SubmitGeneration starts SUBGOAL_GENERATION, ACTION_GENERATION or TASK_GENERATION for a goal
// (creating the goal first when in names none, so that the job's input and result carry its
// id) on the device. Starting the same type for the same goal while one is pending or running
// returns that job.
func (f *Family) SubmitGeneration(ctx context.Context, typ string, in aijob.GoalInput) (job.Job, error) {
	return f.SubmitGenerationOn(ctx, job.TargetDevice, typ, in)
}

// SubmitGenerationOn is SubmitGeneration on target: job.TargetDevice or job.TargetCloud (as
// app.JobTarget decides; "" is the device).
func (f *Family) SubmitGenerationOn(ctx context.Context, target, typ string, in aijob.GoalInput) (job.Job, error) {
	svc := f.svc
	switch typ {
	case aijob.TypeSubgoals, aijob.TypeActions, aijob.TypeTasks:
	default:
		return job.Job{}, job.Errorf(job.E014, "%s is not a goal generation type", typ).WithJa("目標の生成ではないジョブの種類です。")
	}
	if in.Deadline != "" {
		if _, err := time.Parse("2006-01-02", in.Deadline); err != nil {
			return job.Job{}, job.Errorf(job.E014, "the deadline %q is not a date (YYYY-MM-DD)", in.Deadline).
				WithJa("期限は YYYY-MM-DD の形式で指定してください。")
		}
	}
	var title string
	if in.GoalID == 0 {
		id, err := svc.CreateGoal(ctx, in.Title, in.Description, in.Deadline)
		if err != nil {
			return job.Job{}, err
		}
		in.GoalID, title = id, in.Title
		in.Title, in.Description, in.Deadline = "", "", ""
	} else {
		g, err := svc.LoadGoal(ctx, in.GoalID)
		if err != nil {
			return job.Job{}, err
		}
		title = g.Title
	}
	input, _ := json.Marshal(in)
	id, existed, err := f.store.EnqueueGeneration(ctx, f.host.Queue, in.GoalID, queue.Params{Type: typ, Name: title, Input: input, Target: target})
	if err != nil {
		return job.Job{}, job.Wrap(job.E009, err, "the generation could not be started").WithJa("生成を開始できませんでした。")
	}
	if !existed {
		f.host.Queue.Notify(id)
	}
	return f.host.Queue.Get(ctx, id)
}

// RetryGeneration starts a new job with the input of finished job id, linked to it (seed 000:
// a retry is a new process with its own id), where the old one ran (the device or the cloud).
func (f *Family) RetryGeneration(ctx context.Context, id int64) (job.Job, error) {
	old, err := f.host.Queue.Get(ctx, id)
	if err != nil {
		return job.Job{}, err
	}
	if !old.Status.Final() {
		return job.Job{}, job.Errorf(job.E014, "job %s is still %s", old.Ref(), old.Status).WithJa(fmt.Sprintf("ジョブ %s はまだ終わっていません（%s）。", old.Ref(), old.Status))
	}
	known := false
	for _, t := range aijob.Types {
		known = known || t == old.Type
	}
	if !known {
		return job.Job{}, job.Errorf(job.E014, "job %s is not an AI job", old.Ref()).WithJa(fmt.Sprintf("ジョブ %s は AI のジョブではありません。", old.Ref()))
	}
	j, _, err := f.host.Queue.Enqueue(ctx, queue.Params{Type: old.Type, Name: old.Name, Input: old.Input, RetryOf: old.ID, Priority: old.Priority, Target: old.Target})
	return j, err
}

// SubmitEligibility starts ELIGIBILITY_EXTRACT for `jobdesk extract-eligibility JOB_ID|FILE`:
// the Markdown output of conversion job JOB_ID, or the Markdown file FILE (which a person named,
// so the job may read it wherever it is), on the device.
func (f *Family) SubmitEligibility(ctx context.Context, arg string) (job.Job, error) {
	return f.SubmitEligibilityOn(ctx, job.TargetDevice, arg)
}

// SubmitEligibilityOn is SubmitEligibility on target: job.TargetDevice or job.TargetCloud (as
// app.JobTarget decides; "" is the device).
func (f *Family) SubmitEligibilityOn(ctx context.Context, target, arg string) (job.Job, error) {
	src, err := f.eligibilitySource(ctx, arg)
	if err != nil {
		return job.Job{}, err
	}
	in, _ := json.Marshal(src)
	j, _, err := f.host.Queue.Enqueue(ctx, queue.Params{Type: aijob.TypeEligibility, Name: filepath.Base(src.Path), Input: in, Target: target})
	return j, err
}

// eligibilitySource resolves `extract-eligibility JOB|FILE` to a Markdown file: the Markdown
// output of the conversion job with that number (12 or #12, as the window and `jobdesk ls` show
// it), or the file itself.
func (f *Family) eligibilitySource(ctx context.Context, arg string) (aijob.FileInput, error) {
	if n, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64); err == nil && n > 0 {
		j, err := f.host.Queue.GetByNumber(ctx, n)
		if err != nil {
			return aijob.FileInput{}, err
		}
		var res struct {
			OutputPath string `json:"output_path"`
		}
		if len(j.Result) == 0 || json.Unmarshal(j.Result, &res) != nil || res.OutputPath == "" {
			return aijob.FileInput{}, job.Errorf(job.E014, "job %s has no converted document (convert the file first)", j.Ref()).
				WithJa(fmt.Sprintf("ジョブ %s には変換済みの文書がありません。先に文書を変換してください。", j.Ref()))
		}
		return aijob.FileInput{Path: res.OutputPath, SourceJobID: j.ID}, nil
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return aijob.FileInput{}, err
	}
	if _, err := os.Stat(abs); err != nil {
		return aijob.FileInput{}, job.Wrap(job.E014, err, arg+" does not exist or cannot be read").WithJa(arg + " が見つからないか、読み取れません。")
	}
	// A person named this file: the job may read it wherever it is.
	if err := f.host.Grant(ctx, []string{abs}); err != nil {
		return aijob.FileInput{}, err
	}
	return aijob.FileInput{Path: abs}, nil
}
