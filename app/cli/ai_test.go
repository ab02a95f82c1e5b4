package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"jobdesk/app"
	"jobdesk/app/aifamily"
	"jobdesk/assets"
	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// aiEnv points the AI family at a loopback OpenAI-compatible server.
func aiEnv(t *testing.T, url string) {
	t.Setenv(aifamily.EnvEndpoint, url)
	t.Setenv(aifamily.EnvModel, "loopback-model")
	t.Setenv(aifamily.EnvProvider, "openai")
}

func decodeJob(t *testing.T, out string) job.Job {
	t.Helper()
	var j job.Job
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return j
}

func TestAIGenerateChartThroughCLI(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	aiEnv(t, "http://127.0.0.1:1/v1") // overridden by the flag below
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "--data-dir", dir, "generate", "subgoals", "--title", "英語で商談できるようになる",
		"--description", "1年で", "--deadline", "2027-03-31", "--wait", "--json", "--ai-endpoint", srv.URL)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	j := decodeJob(t, out)
	var sub aijob.SubgoalResult
	json.Unmarshal(j.Result, &sub)
	if j.Type != aijob.TypeSubgoals || j.Status != job.Succeeded || j.Progress != 100 || sub.GoalID == 0 || len(sub.Subgoals) != 8 {
		t.Fatalf("%s", out)
	}
	if sub.Usage == nil || sub.Usage.Calls != 1 {
		t.Fatalf("usage %+v", sub.Usage)
	}
	if want := "8 sub-goals generated for goal " + itoa(sub.GoalID); j.Message != want {
		t.Errorf("message %q, want %q", j.Message, want)
	}
	id := itoa(sub.GoalID)
	// Tasks for a goal without actions generates the actions first, then every action's tasks.
	code, out, errOut = runCLI(t, "--data-dir", dir, "generate", "tasks", "--goal", id, "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	j = decodeJob(t, out)
	var tr aijob.TaskResult
	json.Unmarshal(j.Result, &tr)
	if tr.GoalID != sub.GoalID || tr.GoalStatus != "active" || tr.SuccessCount != 64 || tr.Tasks != 192 {
		t.Fatalf("%s", j.Result)
	}
	// The finished job's message is what ls says of it: its result's headline.
	if j.Message != "64 succeeded · 0 failed" {
		t.Errorf("message %q", j.Message)
	}
	code, out, _ = runCLI(t, "--data-dir", dir, "goals", "show", id)
	if code != ExitOK || !strings.Contains(out, "英語で商談") || !strings.Contains(out, "サブ目標8") ||
		!strings.Contains(out, "8 sub-goals, 64 actions, 192 tasks") || strings.Count(out, "‖\n") != 9 {
		t.Fatalf("goals show:\n%s", out)
	}
	code, out, _ = runCLI(t, "--data-dir", dir, "goals", "show", id, "--json")
	var g aijob.Goal
	if code != ExitOK || json.Unmarshal([]byte(out), &g) != nil || len(g.Actions()) != 64 || g.Status != "active" {
		t.Fatalf("goals show --json: %d %.200s", code, out)
	}
}

func TestAIStartIsIdempotentWhileRunning(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	aiEnv(t, srv.URL)
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	first, err := a.SubmitGoal(ctx, app.GoalRequest{Title: "毎日運動する", Deadline: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var in aijob.GoalInput
	json.Unmarshal(first.Input, &in)
	if first.Type != aijob.TypeSubgoals || in.GoalID == 0 {
		t.Fatalf("%+v", first)
	}
	// Tasks twice for the same goal while the first is pending: the same job.
	t1, err := aiOf(a).SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: in.GoalID})
	if err != nil {
		t.Fatal(err)
	}
	t2, _ := aiOf(a).SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: in.GoalID})
	if t1.ID != t2.ID {
		t.Fatalf("two jobs %d and %d for one goal", t1.ID, t2.ID)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, id := range []int64{first.ID, t1.ID} {
		j, err := a.Wait(wctx, id)
		if err != nil || j.Status != job.Succeeded {
			t.Fatalf("job %d: %v %s %v", id, err, j.Status, j.Error)
		}
	}
	// Once it finished, starting again is a new job, and the tasks are not duplicated.
	t3, _ := aiOf(a).SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: in.GoalID})
	if t3.ID == t1.ID {
		t.Fatal("a finished job was returned")
	}
	a.Wait(wctx, t3.ID)
	var n int
	openDB(t, a.DataDir()).R.QueryRow(`SELECT COUNT(*) FROM goal_tasks`).Scan(&n)
	if n != 64*3 {
		t.Fatalf("%d tasks, want %d", n, 64*3)
	}
}

func TestAIOfflineWaitsThenStartsByItself(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	aiEnv(t, "http://"+addr+"/v1")
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := aiOf(a).SubmitGeneration(ctx, aijob.TypeSubgoals, aijob.GoalInput{Title: "オフラインの目標"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		j, _ = a.Get(ctx, j.ID)
		if j.Status == job.Pending && j.Message == aijob.OfflineMessage {
			break
		}
		if j.Status.Final() || ctx.Err() != nil {
			t.Fatalf("job ended %s: %v", j.Status, j.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if j.Attempts != 0 && j.Attempts >= j.MaxAttempts {
		t.Fatalf("an offline provider used up attempts: %+v", j)
	}
	aitest.NewOpenAIAt(t, addr, nil)
	j, err = a.Wait(ctx, j.ID)
	if err != nil || j.Status != job.Succeeded {
		t.Fatalf("%v %s %v", err, j.Status, j.Error)
	}
}

func TestAIThrottledThenRetriedByTheQueue(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(c aitest.Call) aitest.Step {
		if c.N == 1 {
			return aitest.Step{Status: 429, ErrorType: "rate_limit_exceeded"}
		}
		return aitest.Step{Text: aitest.Answer(c)}
	})
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "--data-dir", dir, "generate", "subgoals", "--title", "目標", "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	j := decodeJob(t, out)
	calls := srv.Calls()
	// The call retries by itself inside the execution, after its backoff's first 1 s (the server
	// sent no Retry-After).
	if j.Status != job.Succeeded || len(calls) != 2 {
		t.Fatalf("%s: %d calls", j.Status, len(calls))
	}
	if d := calls[1].At.Sub(calls[0].At); d < 700*time.Millisecond {
		t.Fatalf("retried after %s, want about 1 s", d)
	}
}

func TestAIBadRequestFailsAtOnceAndRetryLinksANewJob(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(c aitest.Call) aitest.Step { return aitest.Step{Status: 400, Message: "model not found"} })
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	code, out, _ := runCLI(t, "--data-dir", dir, "generate", "subgoals", "--title", "目標", "--wait", "--json")
	j := decodeJob(t, out)
	if code != ExitFailed || j.Status != job.Failed || j.Attempts != 1 || j.Error == nil || j.Error.Code != job.E007 {
		t.Fatalf("exit %d: %s", code, out)
	}
	a, err := app.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	assertGoalFailed(t, a, j, "E007")
	a.Close()
	srv.SetScript(nil)
	code, out, errOut := runCLI(t, "--data-dir", dir, "generate", "retry", itoa(j.Number), "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	nj := decodeJob(t, out)
	if nj.ID == j.ID || nj.RetryOf != j.ID || nj.Status != job.Succeeded {
		t.Fatalf("%s", out)
	}
	// The retry that worked clears the failure.
	a, err = app.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if g, _ := aiOf(a).Service().LoadGoal(context.Background(), goalOf(nj)); g.Status != "draft" || len(g.Subgoals) != 8 {
		t.Fatalf("after the retry: goal %q with %d sub-goals", g.Status, len(g.Subgoals))
	}
}

func TestAICaptionByDetection(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	img := filepath.Join(t.TempDir(), "会議室.jpg")
	os.WriteFile(img, jpegOf(t, 10, 8), 0o600)
	code, out, errOut := runCLI(t, "--data-dir", dir, "run", "--wait", "--json", img)
	if code != ExitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	j := decodeJob(t, out)
	var res aijob.CaptionResult
	json.Unmarshal(j.Result, &res)
	if j.Type != aijob.TypeCaption || res.Description == "" || !srv.Calls()[0].HasImage {
		t.Fatalf("%s", out)
	}
	srv.SetScript(func(aitest.Call) aitest.Step {
		return aitest.Step{Status: 400, Message: "model does not support image input"}
	})
	// The same image again is the job that captioned it; another image meets the model's refusal.
	if code, out, _ = runCLI(t, "--data-dir", dir, "caption", "--wait", "--json", img); decodeJob(t, out).ID != j.ID {
		t.Fatalf("the same image again: exit %d %s", code, out)
	}
	img2 := filepath.Join(t.TempDir(), "廊下.jpg")
	os.WriteFile(img2, jpegOf(t, 12, 8), 0o600)
	code, out, _ = runCLI(t, "--data-dir", dir, "caption", "--wait", "--json", img2)
	j = decodeJob(t, out)
	if code != ExitFailed || j.Error == nil || !strings.Contains(j.Error.Message, "cannot read images") {
		t.Fatalf("exit %d %s", code, out)
	}
}

func TestAIExtractEligibilityFromFile(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	md := filepath.Join(t.TempDir(), "公募要領.md")
	os.WriteFile(md, []byte("# 公募要領\n## 要件\n- 中小企業であること\n"), 0o600)
	code, out, errOut := runCLI(t, "--data-dir", dir, "extract-eligibility", md, "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	j := decodeJob(t, out)
	var res aijob.EligibilityResult
	json.Unmarshal(j.Result, &res)
	if j.Type != aijob.TypeEligibility || res.MustCount != 1 || res.MissingKeysCount != 1 || res.ContentHash == "" {
		t.Fatalf("%s", out)
	}
	// From a conversion job: its Markdown output.
	txt := filepath.Join(t.TempDir(), "要領.txt")
	os.WriteFile(txt, []byte("補助対象者の要件\n中小企業であること\n"), 0o600)
	code, out, errOut = runCLI(t, "--data-dir", dir, "run", "--type", "convert", "--wait", "--json", txt)
	if code != ExitOK {
		t.Fatalf("convert: exit %d %s %s", code, out, errOut)
	}
	conv := decodeJob(t, out)
	code, out, errOut = runCLI(t, "--data-dir", dir, "extract-eligibility", itoa(conv.Number), "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	j = decodeJob(t, out)
	json.Unmarshal(j.Result, &res)
	if res.SourceJobID != conv.ID || !strings.HasSuffix(res.Path, ".md") {
		t.Fatalf("%s", out)
	}
	code, _, errOut = runCLI(t, "--data-dir", dir, "extract-eligibility", "999")
	if code != ExitUsage || !strings.Contains(errOut, "E014") {
		t.Fatalf("exit %d %s", code, errOut)
	}
}

func TestAIGenerateUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"generate"}, {"generate", "everything", "--title", "x"}, {"generate", "subgoals"},
		{"generate", "subgoals", "--goal", "1", "--title", "x"}, {"caption"}, {"goals"},
	} {
		if code, _, _ := runCLI(t, append([]string{"--data-dir", dir}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	code, _, errOut := runCLI(t, "--data-dir", dir, "generate", "subgoals", "--title", "x", "--deadline", "来年")
	if code != ExitUsage || !strings.Contains(errOut, "YYYY-MM-DD") {
		t.Fatalf("exit %d %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "--data-dir", dir, "goals", "show", "42")
	if code != ExitUsage || !strings.Contains(errOut, "目標が見つかりません") {
		t.Fatalf("exit %d %s", code, errOut)
	}
}

// The TASK_GENERATION job runs the task-generation workflow: nested Maps, a failed action caught
// and listed, the job PARTIAL, the goal partial, the notification published and recorded.
func TestAITaskWorkflowPartial(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	aiEnv(t, srv.URL)
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	j, _ := aiOf(a).SubmitGeneration(ctx, aijob.TypeActions, aijob.GoalInput{Title: "部分成功の目標"})
	if j, err = a.Wait(ctx, j.ID); err != nil || j.Status != job.Succeeded {
		t.Fatalf("%v %s %v", err, j.Status, j.Error)
	}
	actionJob := j.ID
	var ar aijob.ActionResult
	json.Unmarshal(j.Result, &ar)
	svc := aiOf(a).Service()
	g, _ := svc.LoadGoal(ctx, ar.GoalID)
	bad := g.Actions()[5]
	srv.SetScript(func(c aitest.Call) aitest.Step {
		if c.SchemaName == "tasks" && strings.Contains(c.Prompt, "アクション: "+bad.Title+"（") {
			return aitest.Step{Status: 400, Message: "bad request"}
		}
		return aitest.Step{Text: aitest.Answer(c)}
	})
	j, _ = aiOf(a).SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: ar.GoalID})
	t0 := time.Now()
	if j, err = a.Wait(ctx, j.ID); err != nil || j.Status != job.Partial {
		t.Fatalf("%v %s %v", err, j.Status, j.Error)
	}
	badCalls := 0
	for _, c := range srv.Calls() {
		if strings.Contains(c.Prompt, "アクション: "+bad.Title+"（") {
			badCalls++
		}
	}
	if badCalls != 1 {
		t.Fatalf("a bad request was sent %d times; it must fail at once", badCalls)
	}
	t.Logf("64 actions through the workflow: %s", time.Since(t0))
	var res map[string]any
	json.Unmarshal(j.Result, &res)
	if res["goal_status"] != "partial" || res["failed_count"].(float64) != 1 || res["success_count"].(float64) != 63 ||
		res["failed_actions"].([]any)[0].(float64) != float64(bad.ID) {
		t.Fatalf("%s", j.Result)
	}
	g, _ = svc.LoadGoal(ctx, ar.GoalID)
	for _, act := range g.Actions() {
		if (act.ID == bad.ID) != (len(act.Tasks) == 0) {
			t.Fatalf("action %d: %d tasks", act.ID, len(act.Tasks))
		}
	}
	if g.Status != "partial" {
		t.Fatal(g.Status)
	}
	notes, _ := svc.Notifications(ctx)
	if len(notes) != 1 || notes[0].Level != "partial" || notes[0].JobID != j.ID {
		t.Fatalf("%+v (want the notification linked to job %d)", notes, j.ID)
	}
	// Every row links to the user's AI job that made it, never to the workflow's execution or
	// function jobs: the sub-goals and actions to ACTION_GENERATION, the tasks to
	// TASK_GENERATION, each llm_usage row to one of the two.
	linked := func(query string, want ...int64) {
		t.Helper()
		rows, err := openDB(t, a.DataDir()).R.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id, count int64
			rows.Scan(&id, &count)
			n++
			if !slices.Contains(want, id) {
				t.Errorf("%s: %d rows link to job %d, want %v", query, count, id, want)
			}
		}
		if n == 0 {
			t.Errorf("%s: no rows", query)
		}
	}
	linked(`SELECT COALESCE(job_id,0), COUNT(*) FROM subgoals GROUP BY 1`, actionJob)
	linked(`SELECT COALESCE(job_id,0), COUNT(*) FROM goal_actions GROUP BY 1`, actionJob)
	linked(`SELECT COALESCE(job_id,0), COUNT(*) FROM goal_tasks GROUP BY 1`, j.ID)
	linked(`SELECT COALESCE(job_id,0), COUNT(*) FROM goals GROUP BY 1`, actionJob)
	linked(`SELECT COALESCE(job_id,0), COUNT(*) FROM llm_usage GROUP BY 1`, actionJob, j.ID)
	kids, _ := a.List(ctx, app.ListFilter{ParentID: j.ID})
	if len(kids) != 1 {
		t.Fatalf("%d children", len(kids))
	}
	x, err := a.ExecutionByJob(ctx, kids[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	hist, _, _ := a.ExecutionHistory(ctx, x.ARN, 1000, "")
	kinds := map[string]int{}
	for _, h := range hist {
		kinds[h.Type]++
	}
	if kinds["MapIterationStarted"] < 8+64 || kinds["TaskFailed"] < 1 || kinds["ExecutionSucceeded"] != 1 {
		t.Fatalf("history %v", kinds)
	}
	// Property 9: every state transition is recorded, in order of event id.
	for i := 1; i < len(hist); i++ {
		if hist[i].ID <= hist[i-1].ID {
			t.Fatalf("history out of order at %d", i)
		}
	}
}

// BenchmarkTaskWorkflow64 runs TASK_GENERATION for 64 actions through the task-generation
// workflow against a loopback server answering in 50 ms (target ≤ 0.5 s: the 3 × 8 Maps must
// overlap; one call after another would take 3.2 s).
func BenchmarkTaskWorkflow64(b *testing.B) {
	benchTaskWorkflow64(b, func(slow aitest.Script) aitest.Script { return slow })
}

// benchTaskWorkflow64 runs TASK_GENERATION for 64 actions b.N times; before each run the
// loopback server's script becomes script(an answer in 50 ms).
func benchTaskWorkflow64(b *testing.B, script func(slow aitest.Script) aitest.Script) {
	srv := aitest.NewOpenAI(b, nil)
	b.Setenv(aifamily.EnvEndpoint, srv.URL)
	b.Setenv(aifamily.EnvProvider, "openai")
	a, err := app.Open(app.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	a.StartEngine(ctx)
	j, _ := aiOf(a).SubmitGeneration(ctx, aijob.TypeActions, aijob.GoalInput{Title: "ベンチマーク"})
	j, _ = a.Wait(ctx, j.ID)
	var ar aijob.ActionResult
	json.Unmarshal(j.Result, &ar)
	slow := func(c aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(c), Delay: 50 * time.Millisecond}
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		srv.SetScript(script(slow))
		start := time.Now()
		j, err := aiOf(a).SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: ar.GoalID, Regenerate: true})
		if err != nil {
			b.Fatal(err)
		}
		if j, err = a.Wait(ctx, j.ID); err != nil || j.Status != job.Succeeded {
			b.Fatalf("%v %s %v", err, j.Status, j.Error)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/64actions")
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkTaskWorkflow64CLI is BenchmarkTaskWorkflow64 through the command line: each run is
// `jobdesk generate tasks --goal 1 --regenerate --wait --json`, which opens the data folder,
// starts the engine, waits for the job drawing its progress, and closes, as a person's command
// does (only the process start is left out). The difference to BenchmarkTaskWorkflow64 is what
// the command line adds.
func BenchmarkTaskWorkflow64CLI(b *testing.B) {
	srv := aitest.NewOpenAI(b, nil)
	b.Setenv(aifamily.EnvEndpoint, srv.URL)
	b.Setenv(aifamily.EnvProvider, "openai")
	dir := b.TempDir()
	var out, errOut bytes.Buffer
	if code := Main([]string{"--data-dir", dir, "generate", "actions", "--title", "ベンチマーク", "--wait"}, &out, &errOut); code != ExitOK {
		b.Fatalf("generate actions: %d %s %s", code, out.String(), errOut.String())
	}
	srv.SetScript(func(c aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(c), Delay: 50 * time.Millisecond}
	})
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out.Reset()
		errOut.Reset()
		start := time.Now()
		code := Main([]string{"--data-dir", dir, "generate", "tasks", "--goal", "1", "--regenerate", "--wait", "--json"}, &out, &errOut)
		var j job.Job
		if err := json.Unmarshal(out.Bytes(), &j); code != ExitOK || err != nil || j.Status != job.Succeeded {
			b.Fatalf("generate tasks: %d %v %s %s", code, err, out.String(), errOut.String())
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/64actions")
	}
	// The processor time of the whole process per command (engine, loopback server and command
	// line alike): on a loaded machine it varies less than the wall time.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// The shipped AI workflows validate against the ASL rules and name only registered functions.
func TestAIWorkflowsValidate(t *testing.T) {
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for typ, name := range aijob.Workflows {
		def, err := assets.Workflow(name)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for _, d := range a.ValidateWorkflow(def) {
			if d.Severity == "ERROR" {
				t.Errorf("%s: %s %s: %s", name, d.Location, d.Code, d.Message)
			}
		}
		if _, err := a.Workflow(context.Background(), name); err != nil {
			t.Errorf("%s was not loaded: %v", name, err)
		}
	}
}

// Seed 000: a generation that outlives the Task's TimeoutSeconds ends TIMED_OUT with the seed's
// message. The shipped definition is run with its 300 s shortened to 1 s.
func TestAISubgoalWorkflowTimeout(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return aitest.Step{Hang: true} })
	a, ctx := appWithShortWorkflow(t, srv.URL, "subgoal-generation",
		`"TimeoutSeconds": 300`, `"TimeoutSeconds": 2`, `"HeartbeatSeconds": 60`, `"HeartbeatSeconds": 1`)
	j, err := aiOf(a).SubmitGeneration(ctx, aijob.TypeSubgoals, aijob.GoalInput{Title: "時間切れ"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	j, err = a.Wait(ctx, j.ID)
	if err != nil || j.Status != job.TimedOut || j.Error == nil || j.Error.MessageJa != "処理時間が制限を超えました" {
		t.Fatalf("%v %s %+v", err, j.Status, j.Error)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
	assertGoalFailed(t, a, j, "処理時間が制限を超えました")
}

// assertGoalFailed checks that the goal of AI job j is failed, with one local notification of
// level failed linked to j whose message contains want.
func assertGoalFailed(t *testing.T, a *app.App, j job.Job, want string) {
	t.Helper()
	ctx := context.Background()
	var in aijob.GoalInput
	json.Unmarshal(j.Input, &in)
	svc := aiOf(a).Service()
	g, err := svc.LoadGoal(ctx, in.GoalID)
	if err != nil || g.Status != "failed" {
		t.Fatalf("goal %d: %v status %q, want failed", in.GoalID, err, g.Status)
	}
	notes, _ := svc.Notifications(ctx)
	if len(notes) != 1 || notes[0].Level != "failed" || notes[0].GoalID != g.ID || notes[0].JobID != j.ID ||
		!strings.Contains(notes[0].Message, want) {
		t.Fatalf("notifications %+v, want one failed for job %d saying %q", notes, j.ID, want)
	}
}

// Seed 001: a task generation that outlives the whole execution's TimeoutSeconds ends TIMED_OUT
// and its goal, processing until then, becomes failed with a notification. The shipped
// definition is run with its 900 s shortened to 1 s.
func TestAITaskWorkflowExecutionTimeoutFailsTheGoal(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	a, ctx := appWithShortWorkflow(t, srv.URL, "task-generation", `"TimeoutSeconds": 900`, `"TimeoutSeconds": 1`)
	var err error
	j, _ := aiOf(a).SubmitGeneration(ctx, aijob.TypeActions, aijob.GoalInput{Title: "時間切れのタスク"})
	if j, err = a.Wait(ctx, j.ID); err != nil || j.Status != job.Succeeded {
		t.Fatalf("%v %s %v", err, j.Status, j.Error)
	}
	srv.SetScript(func(c aitest.Call) aitest.Step { return aitest.Step{Hang: true} })
	j, _ = aiOf(a).SubmitGeneration(ctx, aijob.TypeTasks, aijob.GoalInput{GoalID: goalOf(j)})
	if j, err = a.Wait(ctx, j.ID); err != nil || j.Status != job.TimedOut {
		t.Fatalf("%v %s %v", err, j.Status, j.Error)
	}
	assertGoalFailed(t, a, j, "処理時間が制限を超えました")
}

func goalOf(j job.Job) int64 {
	var in aijob.GoalInput
	json.Unmarshal(j.Input, &in)
	return in.GoalID
}

// With provider "auto" and nothing on the device, the same workflow runs on Amazon Bedrock
// (a loopback Converse server through the real SDK), credentials from the AWS default chain.
func TestAIAutoFallsBackToBedrock(t *testing.T) {
	br := aitest.NewBedrock(t, nil)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	offline := ln.Addr().String()
	ln.Close()
	aiEnv(t, "http://"+offline+"/v1")
	t.Setenv(aifamily.EnvProvider, "auto")
	t.Setenv("JOBDESK_BEDROCK_ENDPOINT", br.URL)
	t.Setenv("JOBDESK_BEDROCK_REGION", "ap-northeast-1")
	t.Setenv("JOBDESK_BEDROCK_MODEL", "anthropic.claude-loopback")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOOPBACK")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "loopback")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "--data-dir", dir, "generate", "actions", "--title", "クラウドで生成", "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	j := decodeJob(t, out)
	var res aijob.ActionResult
	json.Unmarshal(j.Result, &res)
	if res.Actions != 64 || len(br.Calls()) != 9 || br.Calls()[0].Model != "anthropic.claude-loopback" {
		t.Fatalf("%d actions, %d Bedrock calls", res.Actions, len(br.Calls()))
	}
	if res.Usage == nil || res.Usage.Calls != 9 || res.Usage.Model != "anthropic.claude-loopback" {
		t.Fatalf("usage %+v", res.Usage)
	}
}

// `jobdesk retry ID` on a finished AI job does what `generate retry` does (seed 000): a new job
// linked to the old one, which stays FAILED; other job types are re-queued as before
// (TestCLI's retry of a checksum job keeps its id).
func TestAIRetryCommandStartsALinkedJob(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(c aitest.Call) aitest.Step { return aitest.Step{Status: 400, Message: "model not found"} })
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	code, out, _ := runCLI(t, "--data-dir", dir, "generate", "subgoals", "--title", "目標", "--wait", "--json")
	old := decodeJob(t, out)
	if code != ExitFailed || old.Status != job.Failed {
		t.Fatalf("exit %d: %s", code, out)
	}
	srv.SetScript(nil)
	code, out, errOut := runCLI(t, "--data-dir", dir, "retry", itoa(old.Number))
	if code != ExitOK || !strings.Contains(out, "a new job retrying job #"+itoa(old.Number)) {
		t.Fatalf("exit %d %q %q", code, out, errOut)
	}
	a, ctx := openTestApp(t, dir)
	var err error
	kids, _ := a.List(ctx, app.ListFilter{})
	var nj job.Job
	for _, k := range kids {
		if k.RetryOf == old.ID {
			nj = k
		}
	}
	if nj.ID == 0 || nj.ID == old.ID || nj.Type != aijob.TypeSubgoals || goalOf(nj) != goalOf(old) {
		t.Fatalf("no new job linked to %d: %+v", old.ID, nj)
	}
	if got, _ := a.Get(ctx, old.ID); got.Status != job.Failed {
		t.Fatalf("the old job is %s; it must stay FAILED", got.Status)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	if nj, err = a.Wait(ctx, nj.ID); err != nil || nj.Status != job.Succeeded {
		t.Fatalf("%v %s %v", err, nj.Status, nj.Error)
	}
}

// A file that is no PNG or JPEG image is refused when `caption` submits it (E004, both
// languages), even with the provider offline; and a CAPTION_GENERATION job queued for one
// anyway fails with E004 at once instead of waiting PENDING for the provider.
func TestAICaptionRefusesANonImageWhileOffline(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	aiEnv(t, "http://"+addr+"/v1")
	dir := t.TempDir()
	txt := filepath.Join(t.TempDir(), "notimage.txt")
	os.WriteFile(txt, []byte("just some text"), 0o600)
	code, out, errOut := runCLI(t, "--data-dir", dir, "caption", "--json", txt)
	if code != ExitFailed || out != "" || !strings.Contains(errOut, "E004: notimage.txt is not a PNG or JPEG image") ||
		!strings.Contains(errOut, "PNG または JPEG の画像ではありません") {
		t.Fatalf("exit %d %q %q", code, out, errOut)
	}
	a, ctx := openTestApp(t, dir)
	var err error
	if js, _ := a.List(ctx, app.ListFilter{}); len(js) != 0 {
		t.Fatalf("a job was made for a non-image: %+v", js)
	}
	in, _ := json.Marshal(aijob.FileInput{Path: txt})
	j := enqueueRaw(t, ctx, dir, queue.Params{Type: aijob.TypeCaption, Name: "notimage.txt", Input: in})
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	if j, err = a.Wait(ctx, j.ID); err != nil || j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E004 || j.Attempts != 1 {
		t.Fatalf("%v %s %+v (attempts %d)", err, j.Status, j.Error, j.Attempts)
	}
}

// `generate --wait` without a terminal says why the job waits while the provider is offline,
// once, then goes on when it comes back.
func TestAIWaitSaysTheProviderIsOffline(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	aiEnv(t, "http://"+addr+"/v1")
	dir := t.TempDir()
	errb := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"--data-dir", dir, "generate", "subgoals", "--title", "待つ目標", "--wait"}, io.Discard, errb)
	}()
	guard := time.Now().Add(30 * time.Second) // a hang, not a speed limit
	for !strings.Contains(errb.String(), "PENDING 0% · "+aijob.OfflineMessage) {
		if time.Now().After(guard) {
			t.Fatalf("no offline line in:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	aitest.NewOpenAIAt(t, addr, nil)
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("--wait did not end:\n%s", errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("%q printed twice:\n%s", l, errb.String())
		}
		seen[l] = true
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "SUCCEEDED 100% · 8 sub-goals generated") {
		t.Fatalf("last line %q", last)
	}
}

// appWithShortWorkflow opens an App on a fresh data folder using the AI server at url, stores
// the shipped workflow name as the device fills it (App.DeviceDefinition) with each old text
// replaced by its new one (old, new, …), starts the engine and returns the App and a context
// for the test.
func appWithShortWorkflow(t *testing.T, url, name string, oldNew ...string) (*app.App, context.Context) {
	t.Helper()
	aiEnv(t, url)
	a, ctx := openTestApp(t, t.TempDir())
	def, err := assets.Workflow(name)
	if err != nil {
		t.Fatal(err)
	}
	short := string(a.DeviceDefinition(def))
	for i := 0; i+1 < len(oldNew); i += 2 {
		if !strings.Contains(short, oldNew[i]) {
			t.Fatalf("the shipped %s has no %s", name, oldNew[i])
		}
		short = strings.Replace(short, oldNew[i], oldNew[i+1], 1)
	}
	if _, err := a.PutWorkflow(ctx, name, []byte(short)); err != nil {
		t.Fatal(err)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	return a, ctx
}

// openTestApp opens an App on dir, closed when the test ends, and a context of 30 s.
func openTestApp(t *testing.T, dir string) (*app.App, context.Context) {
	t.Helper()
	a, err := app.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return a, ctx
}

// A service that throttles every call once (HTTP 429, Retry-After: 0) still completes the whole
// chain through the shipped workflows: 8 sub-goals, 64 actions, 192 tasks. Each AI call retries
// by itself, so no Task spends its retry budget on one sub-goal after another.
func TestAIThrottlingServiceCompletesTheChain(t *testing.T) {
	srv := aitest.NewOpenAI(t, aitest.ThrottleOnce("0", nil))
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	run := func(args ...string) job.Job {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"--data-dir", dir, "generate"}, append(args, "--wait", "--json")...)...)
		if code != ExitOK {
			t.Fatalf("generate %v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return decodeJob(t, out)
	}
	j := run("subgoals", "--title", "混雑したサービスでも達成する")
	var sub aijob.SubgoalResult
	json.Unmarshal(j.Result, &sub)
	if j.Status != job.Succeeded || len(sub.Subgoals) != 8 {
		t.Fatalf("sub-goals: %s %s", j.Status, j.Result)
	}
	id := itoa(sub.GoalID)
	j = run("actions", "--goal", id)
	var ar aijob.ActionResult
	json.Unmarshal(j.Result, &ar)
	if j.Status != job.Succeeded || ar.Actions != 64 {
		t.Fatalf("actions: %s %s", j.Status, j.Result)
	}
	j = run("tasks", "--goal", id)
	var tr aijob.TaskResult
	json.Unmarshal(j.Result, &tr)
	if j.Status != job.Succeeded || tr.GoalStatus != "active" || tr.SuccessCount != 64 || tr.Tasks != 192 {
		t.Fatalf("tasks: %s %s", j.Status, j.Result)
	}
	// The server's log: 1 + 8 + 64 distinct requests, each throttled once and then answered
	// once, the answer right after its own 429.
	calls := srv.Calls()
	if len(calls) != 2*(1+8+64) {
		t.Fatalf("%d calls, want %d", len(calls), 2*(1+8+64))
	}
	seen := map[string]int{}
	for _, c := range calls {
		seen[string(c.Body)]++
	}
	for body, n := range seen {
		if n != 2 {
			t.Fatalf("a request was sent %d times, want 2 (once throttled, once answered): %.120s", n, body)
		}
	}
}

// After its retries, a call the service keeps throttling fails for good, and says so: the error
// is not retryable, names the tries the server saw and what to do, in English and Japanese, and
// promises no retry that will not come.
func TestAIThrottledForGoodSaysSo(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step {
		return aitest.Step{Status: 429, ErrorType: "rate_limit_exceeded", RetryAfter: "0"}
	})
	aiEnv(t, srv.URL)
	code, out, _ := runCLI(t, "--data-dir", t.TempDir(), "generate", "subgoals", "--title", "混雑", "--wait", "--json")
	j := decodeJob(t, out)
	e := j.Error
	if code != ExitFailed || j.Status != job.Failed || e == nil || e.Code != job.E002 {
		t.Fatalf("exit %d: %s", code, out)
	}
	n := len(srv.Calls())
	if e.Retryable {
		t.Fatalf("the final error is retryable: %+v", e)
	}
	if strings.Contains(e.MessageJa, "しばらくして再試行します") || strings.Contains(e.Message, "will be tried again") {
		t.Fatalf("a final error promises a retry: %q / %q", e.Message, e.MessageJa)
	}
	if !strings.Contains(e.Message, "after "+itoa(int64(n))+" tries") || !strings.Contains(e.Message, "retry the job") ||
		!strings.Contains(e.MessageJa, itoa(int64(n))+" 回") || !strings.Contains(e.MessageJa, "再試行してください") {
		t.Fatalf("the final error does not say it failed after the %d tries and what to do: %q / %q", n, e.Message, e.MessageJa)
	}
}

// An empty image fails CAPTION_GENERATION with E004 "the file is empty", in both languages: when
// `caption` submits it, and when a job for it is queued anyway.
func TestAICaptionEmptyImage(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	aiEnv(t, srv.URL)
	dir := t.TempDir()
	for _, name := range []string{"空.png", "空.jpg"} {
		img := filepath.Join(t.TempDir(), name)
		os.WriteFile(img, nil, 0o600)
		code, out, errOut := runCLI(t, "--data-dir", dir, "caption", "--json", img)
		if code != ExitFailed || out != "" || !strings.Contains(errOut, "E004") || !strings.Contains(errOut, "the file is empty") ||
			!strings.Contains(errOut, "ファイルが空です") {
			t.Fatalf("%s: exit %d %q %q", name, code, out, errOut)
		}
		a, ctx := openTestApp(t, dir)
		in, _ := json.Marshal(aijob.FileInput{Path: img})
		j := enqueueRaw(t, ctx, dir, queue.Params{Type: aijob.TypeCaption, Name: name, Input: in})
		if err := a.StartEngine(ctx); err != nil {
			t.Fatal(err)
		}
		j, err := a.Wait(ctx, j.ID)
		if err != nil || j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E004 ||
			!strings.Contains(j.Error.Message, "the file is empty") || !strings.Contains(j.Error.MessageJa, "ファイルが空です") {
			t.Fatalf("%s: %v %s %+v", name, err, j.Status, j.Error)
		}
		a.Close()
	}
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("an empty image was sent to the model %d times", n)
	}
}

// BenchmarkTaskWorkflow64Throttled is BenchmarkTaskWorkflow64 against a service that throttles
// every call once (429, Retry-After: 0) and answers in 50 ms (target < 1.5 s: each call retries by
// itself at once instead of waiting for the Task's 2 s Retry).
func BenchmarkTaskWorkflow64Throttled(b *testing.B) {
	// Every request of a run is new to ThrottleOnce.
	benchTaskWorkflow64(b, func(slow aitest.Script) aitest.Script { return aitest.ThrottleOnce("0", slow) })
}

// jpegOf is a real JPEG image of w × h pixels (a caption reads its size from its header).
func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// An AI job that was running when JobDesk was upgraded has an execution under the name earlier
// releases gave it (<workflow>-<job id>-<attempt>). When the job runs again under its current
// name, that execution is stopped: two executions never generate for one job.
func TestAIExecutionUnderTheEarlierNameIsStopped(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(c aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(c), Delay: 2 * time.Second}
	})
	aiEnv(t, srv.URL)
	a, ctx := openTestApp(t, t.TempDir())
	first, err := a.SubmitGoal(ctx, app.GoalRequest{Title: "毎日運動する", Deadline: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	wf := aijob.Workflows[first.Type]
	sm, err := a.Workflow(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	earlier, err := a.StartWorkflow(ctx, sm.ARN, first.Input, flow.StartOptions{Name: fmt.Sprintf("%s-%d-1", wf, first.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	if j, err := a.Wait(ctx, first.ID); err != nil || j.Status != job.Succeeded {
		t.Fatalf("the job: %v %s %v", err, j.Status, j.Error)
	}
	x, err := a.WaitExecution(ctx, earlier.ARN)
	if err != nil || x.Status != flow.StatusAborted {
		t.Fatalf("the execution under the earlier name ended %q (%v), want ABORTED", x.Status, err)
	}
}
