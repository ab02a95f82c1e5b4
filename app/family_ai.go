package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/sync/bedrock"
)

// AISettings is the AI configuration: the settings file ai.json in the data folder, then the
// environment (JOBDESK_AI_*), then the command line's --ai-endpoint/--ai-model, each overriding
// the one before.
type AISettings struct {
	// Provider is "openai" (a server on the device; the default), "bedrock", or "auto" (the
	// device first, Bedrock when nothing answers on the device).
	Provider string `json:"provider,omitempty"`
	Endpoint string `json:"endpoint,omitempty"` // OpenAI-compatible base URL (…/v1)
	Model    string `json:"model,omitempty"`    // the model on that server
	APIKey   string `json:"api_key,omitempty"`  // only for servers that want one
	// FallbackModel answers ELIGIBILITY_EXTRACT's first fallback level.
	FallbackModel   string `json:"fallback_model,omitempty"`
	BedrockRegion   string `json:"bedrock_region,omitempty"`
	BedrockModel    string `json:"bedrock_model,omitempty"`
	BedrockEndpoint string `json:"bedrock_endpoint,omitempty"`
	BedrockProfile  string `json:"bedrock_profile,omitempty"`
	// Prices by model id, for the cost column of llm_usage.
	Prices map[string]aijob.Price `json:"prices,omitempty"`
}

// AI settings' environment variables.
const (
	EnvAIEndpoint = "JOBDESK_AI_ENDPOINT"
	EnvAIModel    = "JOBDESK_AI_MODEL"
	EnvAIProvider = "JOBDESK_AI_PROVIDER"
)

// DefaultAIModel is asked for when nothing names a model.
const DefaultAIModel = "llama3.2"

// LoadAISettings reads the settings of the data folder and the environment.
func LoadAISettings(dataDir string) (AISettings, error) {
	var s AISettings
	if b, err := os.ReadFile(filepath.Join(dataDir, "ai.json")); err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return s, job.Wrap(job.E014, err, "the AI settings file ai.json is not valid JSON").WithJa("AI 設定ファイル ai.json が正しい JSON ではありません。")
		}
	}
	env := map[string]*string{EnvAIEndpoint: &s.Endpoint, EnvAIModel: &s.Model, EnvAIProvider: &s.Provider,
		"JOBDESK_AI_FALLBACK_MODEL": &s.FallbackModel, "JOBDESK_BEDROCK_REGION": &s.BedrockRegion,
		"JOBDESK_BEDROCK_MODEL": &s.BedrockModel, "JOBDESK_BEDROCK_ENDPOINT": &s.BedrockEndpoint}
	for k, p := range env {
		if v := os.Getenv(k); v != "" {
			*p = v
		}
	}
	if s.Provider == "" {
		s.Provider = "openai"
	}
	if s.Endpoint == "" {
		s.Endpoint = aijob.DefaultEndpoint
	}
	if s.Model == "" {
		s.Model = DefaultAIModel
	}
	return s, nil
}

// providers builds the primary and fallback providers of s.
func (s AISettings) providers(ctx context.Context) (aijob.Provider, aijob.Provider, error) {
	local := &aijob.OpenAI{Endpoint: s.Endpoint, ModelID: s.Model, APIKey: s.APIKey}
	var fallback aijob.Provider
	if s.FallbackModel != "" {
		fallback = &aijob.OpenAI{Endpoint: s.Endpoint, ModelID: s.FallbackModel, APIKey: s.APIKey}
	}
	cloud := func() (aijob.Provider, error) {
		return bedrock.New(ctx, bedrock.Options{Region: s.BedrockRegion, ModelID: s.BedrockModel,
			Endpoint: s.BedrockEndpoint, Profile: s.BedrockProfile})
	}
	switch s.Provider {
	case "openai", "local":
		return local, fallback, nil
	case "bedrock":
		p, err := cloud()
		return p, fallback, err
	case "auto":
		p, err := cloud()
		if err != nil {
			return local, fallback, nil
		}
		return aijob.Chain{local, p}, fallback, nil
	}
	return nil, nil, job.Errorf(job.E014, "unknown AI provider %q (openai, bedrock or auto)", s.Provider).
		WithJa(fmt.Sprintf("AI プロバイダー %q は使えません（openai / bedrock / auto）。", s.Provider))
}

// The AI family: sub-goal, action and task generation (seeds 000, 001), image captions (seed
// 002) and eligibility extraction (seed 003 Job D), on a model on the device or Amazon Bedrock.
func init() {
	RegisterFamily(Family{
		Name:       "ai",
		Migrations: []store.Migrations{aisqlite.Migrations},
		Open:       openAIFamily,
		Register:   registerAIFamily,
		Types:      aijob.Types,
		Detect:     detectImage,
		Priority:   15,
		Submit:     submitAIFile,
		Commands:   aiCommands,
		Retry: func(ctx context.Context, a *App, j job.Job) (job.Job, error) {
			return RetryGeneration(ctx, a, j.ID)
		},
	})
	goalSubmitter = func(ctx context.Context, a *App, g GoalRequest) (job.Job, error) {
		in := aijob.GoalInput{Title: g.Title, Description: g.Description}
		if !g.Deadline.IsZero() {
			in.Deadline = g.Deadline.Format("2006-01-02")
		}
		return SubmitGeneration(ctx, a, aijob.TypeSubgoals, in)
	}
}

// aiState is the AI family's state in the App: the handlers' service and its SQLite store.
type aiState struct {
	svc   *aijob.Service
	store *aisqlite.Store
}

// AIService returns the AI family's service of a.
func AIService(a *App) *aijob.Service {
	if s, ok := a.State("ai").(*aiState); ok {
		return s.svc
	}
	return nil
}

// aiStore returns the AI family's SQLite store of a.
func aiStore(a *App) *aisqlite.Store {
	if s, ok := a.State("ai").(*aiState); ok {
		return s.store
	}
	return nil
}

func openAIFamily(a *App) error {
	set, err := LoadAISettings(a.DataDir())
	if err != nil {
		return err
	}
	p, fb, err := set.providers(context.Background())
	if err != nil {
		return err
	}
	st := aisqlite.New(a.DB)
	svc := aijob.NewService(st.State(), p)
	svc.Fallback = fb
	svc.Prices = set.Prices
	svc.Blobs = DeviceBlobs(a)
	a.SetState("ai", &aiState{svc: svc, store: st})
	// The workflows' Tasks call the same handlers as Lambda functions.
	if eng := FlowEngine(a); eng != nil {
		for _, f := range svc.Functions() {
			eng.RegisterFunction(f.Name, confined(f.Handler), f.Options)
		}
	}
	return nil
}

// registerAIFamily runs each AI job type as an execution of its shipped workflow (they are
// embedded, so always loaded).
func registerAIFamily(a *App, w *queue.Worker) {
	svc, eng := AIService(a), FlowEngine(a)
	if svc == nil || eng == nil {
		return
	}
	for _, typ := range aijob.Types {
		w.Handle(typ, aiWorkflowHandler(a, svc, eng, typ), queue.TypeOptions{Orchestrator: true, Concurrency: 64})
	}
}

// aiWorkflowHandler runs one AI job as an execution of its workflow (its child) and reports the
// outcome with the family's own statuses: PARTIAL for partly generated tasks or a fallback
// extraction, TIMED_OUT with seed 000's message, the failed function's coded error. While the
// provider is offline the job waits PENDING ("AI provider offline") before any execution starts.
// The execution is named after the job and attempt, so a job resumed after JobDesk stopped finds
// its execution again.
func aiWorkflowHandler(a *App, svc *aijob.Service, eng *flow.Engine, typ string) job.Handler {
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		if typ == aijob.TypeCaption {
			// A file that is no image fails now, not after waiting for an offline provider.
			var fi aijob.FileInput
			if err := json.Unmarshal(raw, &fi); err != nil {
				return nil, job.Errorf(job.E014, "the job input is not valid").WithJa("ジョブの入力が正しくありません。").Permanent()
			}
			if _, err := svc.CheckImage(ctx, fi.Path); err != nil {
				return nil, err
			}
		}
		if err := svc.DeferIfOffline(ctx); err != nil {
			return nil, err
		}
		info, _ := job.InfoFrom(ctx)
		in := raw
		var goalID int64
		if typ == aijob.TypeSubgoals || typ == aijob.TypeActions || typ == aijob.TypeTasks {
			var gi aijob.GoalInput
			if err := json.Unmarshal(raw, &gi); err != nil {
				return nil, job.Errorf(job.E014, "the job input is not valid").WithJa("ジョブの入力が正しくありません。")
			}
			if gi.GoalID == 0 {
				id, err := svc.CreateGoal(ctx, gi.Title, gi.Description, gi.Deadline)
				if err != nil {
					return nil, err
				}
				gi = aijob.GoalInput{GoalID: id, ActionIDs: gi.ActionIDs, Regenerate: gi.Regenerate}
			}
			if gi.ActionIDs == nil {
				gi.ActionIDs = []int64{}
			}
			in, _ = json.Marshal(gi)
			goalID = gi.GoalID
		}
		r.Progress(0, "starting the "+aijob.Workflows[typ]+" workflow")
		out, err := orchestrator.Run(ctx, eng.Executions(), orchestrator.Spec{
			Workflow: aijob.Workflows[typ], Name: fmt.Sprintf("%s-%d-%d", aijob.Workflows[typ], info.ID, info.Attempt), Input: in,
			What: "the generation", WhatJa: "生成",
			Outcome: func(ctx context.Context, x orchestrator.Execution) (json.RawMessage, error) {
				return aiOutcome(ctx, aiStore(a), typ, info.ID, x, r)
			},
			Failure: aiFailure,
		}, r)
		// A cancel by the user returns the goal from processing; a timeout (the Task's or the
		// whole execution's) or a failure for good does not leave the goal processing: it becomes
		// failed, with a local notification.
		svc.EndGeneration(ctx, goalID, typ, err)
		return out, err
	}
}

// aiOutcome turns a succeeded execution into the AI job's result: the workflow's output with
// the usage of every call made for the job, PARTIAL for partly generated tasks or a fallback
// extraction.
func aiOutcome(ctx context.Context, st *aisqlite.Store, typ string, jobID int64, x orchestrator.Execution, r job.Reporter) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(x.Output, &m); err != nil {
		return nil, job.Wrap(job.E015, err, "the AI workflow returned no result").WithJa("AI ワークフローの結果を読み取れませんでした。")
	}
	if u, err := st.TreeUsage(ctx, jobID); err == nil && u.Calls > 0 {
		m["usage"] = u
	}
	for _, k := range []string{"allSuccess", "partialSuccess", "notificationMessage"} {
		delete(m, k)
	}
	out, _ := json.Marshal(m)
	if msg := aiSummary(typ, m); msg != "" {
		r.Progress(100, msg) // the job's last word, instead of a workflow step's
	}
	if typ == aijob.TypeTasks && m["goal_status"] == "partial" {
		return out, job.PartialSuccess(out, fmt.Sprintf("%v of %v actions failed: %v", m["failed_count"], m["total_actions"], m["failed_actions"]))
	}
	if lvl, _ := m["fallback_level"].(float64); typ == aijob.TypeEligibility && lvl >= aijob.LevelHeadings {
		return out, job.PartialSuccess(out, fmt.Sprintf("the model's reply was unusable; fallback level %v (details need checking)", lvl))
	}
	return out, nil
}

// aiFailure words the ends the AI workflows give themselves (seed 000's timeout, seed 001's
// "no action got its tasks"); a task's coded error is kept as it is.
func aiFailure(_ context.Context, x orchestrator.Execution, e *job.Error) error {
	switch {
	case x.Status == orchestrator.TimedOut:
		return job.Errorf(job.E011, "the generation took longer than its limit").
			WithJa("処理時間が制限を超えました").WithName("States.Timeout").Permanent()
	case x.Error == "States.Timeout":
		return job.Errorf(job.E011, "the generation took longer than its limit").
			WithJa(x.Cause).WithName("States.Timeout").Permanent()
	case x.Error == "TaskGenerationFailed":
		return job.Errorf(job.E007, "no action got its tasks").WithJa(x.Cause).WithName(x.Error).Permanent()
	}
	return e
}

// detectImage takes PNG and JPEG files for CAPTION_GENERATION.
func detectImage(path string, head []byte) string {
	if aijob.ImageMIME(head) != "" {
		return aijob.TypeCaption
	}
	return ""
}

// submitAIFile submits CAPTION_GENERATION or ELIGIBILITY_EXTRACT for a file, or returns the job
// that already does it for the same bytes (submitOnce); goal generation starts from `jobdesk
// generate`, not from a file.
func submitAIFile(ctx context.Context, a *App, path, typ string, o SubmitOptions) (job.Job, error) {
	switch typ {
	case aijob.TypeCaption, aijob.TypeEligibility:
	default:
		return job.Job{}, job.Errorf(job.E014, "%s starts from a goal: use jobdesk generate", typ).
			WithJa("目標からの生成は jobdesk generate を使ってください。")
	}
	if svc := AIService(a); svc != nil && typ == aijob.TypeCaption {
		if _, err := svc.CheckImage(ctx, path); err != nil {
			return job.Job{}, err
		}
	}
	sha, err := fileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	in, _ := json.Marshal(aijob.FileInput{Path: path})
	return submitOnce(ctx, a, sha, struct{}{}, queue.Params{Type: typ, Name: filepath.Base(path), Input: in, Priority: o.Priority}, o.Force)
}

// SubmitGeneration starts SUBGOAL_GENERATION, ACTION_GENERATION or TASK_GENERATION for a goal
// (creating the goal first when in names none, so that the job's input and result carry its
// id). Starting the same type for the same goal while one is pending or running returns that job.
func SubmitGeneration(ctx context.Context, a *App, typ string, in aijob.GoalInput) (job.Job, error) {
	svc := AIService(a)
	if svc == nil {
		return job.Job{}, job.Errorf(job.E014, "AI generation is not available").WithJa("AI 生成を利用できません。")
	}
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
	id, existed, err := aiStore(a).EnqueueGeneration(ctx, a.Queue, in.GoalID, queue.Params{Type: typ, Name: title, Input: input})
	if err != nil {
		return job.Job{}, job.Wrap(job.E009, err, "the generation could not be started").WithJa("生成を開始できませんでした。")
	}
	if !existed {
		a.Queue.Notify(id)
	}
	return a.Queue.Get(ctx, id)
}

// RetryGeneration starts a new job with the input of finished job id, linked to it (seed 000:
// a retry is a new process with its own id).
func RetryGeneration(ctx context.Context, a *App, id int64) (job.Job, error) {
	old, err := a.Queue.Get(ctx, id)
	if err != nil {
		return job.Job{}, job.Errorf(job.E014, "there is no job %d", id).WithJa(fmt.Sprintf("ジョブ %d は存在しません。", id))
	}
	if !old.Status.Final() {
		return job.Job{}, job.Errorf(job.E014, "job %d is still %s", id, old.Status).WithJa(fmt.Sprintf("ジョブ %d はまだ終わっていません（%s）。", id, old.Status))
	}
	known := false
	for _, t := range aijob.Types {
		known = known || t == old.Type
	}
	if !known {
		return job.Job{}, job.Errorf(job.E014, "job %d is not an AI job", id).WithJa("AI のジョブではありません。")
	}
	j, _, err := a.Queue.Enqueue(ctx, queue.Params{Type: old.Type, Name: old.Name, Input: old.Input, RetryOf: old.ID, Priority: old.Priority})
	return j, err
}

// eligibilitySource resolves `extract-eligibility JOB_ID|FILE` to a Markdown file: a conversion
// job's Markdown output, or the file itself.
func eligibilitySource(ctx context.Context, a *App, arg string) (aijob.FileInput, error) {
	var id int64
	if _, err := fmt.Sscan(arg, &id); err == nil && id > 0 && !strings.ContainsAny(arg, "./\\") {
		j, err := a.Queue.Get(ctx, id)
		if err != nil {
			return aijob.FileInput{}, job.Errorf(job.E014, "there is no job %d", id).WithJa(fmt.Sprintf("ジョブ %d は存在しません。", id))
		}
		var res struct {
			OutputPath string `json:"output_path"`
		}
		if len(j.Result) == 0 || json.Unmarshal(j.Result, &res) != nil || res.OutputPath == "" {
			return aijob.FileInput{}, job.Errorf(job.E014, "job %d has no converted document (convert the file first)", id).
				WithJa("このジョブには変換済みの文書がありません。先に文書を変換してください。")
		}
		return aijob.FileInput{Path: res.OutputPath, SourceJobID: id}, nil
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return aijob.FileInput{}, err
	}
	if _, err := os.Stat(abs); err != nil {
		return aijob.FileInput{}, job.Wrap(job.E014, err, arg+" does not exist or cannot be read").WithJa(arg + " が見つからないか、読み取れません。")
	}
	// A person named this file: the job may read it wherever it is.
	if err := a.grantFiles(ctx, []string{abs}); err != nil {
		return aijob.FileInput{}, err
	}
	return aijob.FileInput{Path: abs}, nil
}

// aiSummary says in a few words what a finished AI workflow made, from its result.
func aiSummary(typ string, m map[string]any) string {
	count := func(k string) int {
		switch v := m[k].(type) {
		case []any:
			return len(v)
		case float64:
			return int(v)
		}
		return 0
	}
	switch typ {
	case aijob.TypeSubgoals:
		return fmt.Sprintf("%d sub-goals generated for goal %v", count("subgoals"), m["goal_id"])
	case aijob.TypeActions:
		return fmt.Sprintf("%d actions generated for goal %v", count("actions"), m["goal_id"])
	case aijob.TypeTasks:
		return fmt.Sprintf("%d tasks generated for %d of %d actions", count("tasks"), count("success_count"), count("total_actions"))
	case aijob.TypeCaption:
		return "caption written"
	case aijob.TypeEligibility:
		return "eligibility extracted"
	}
	return ""
}
