package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"jobdesk/app"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// flowCommand is `jobdesk flow validate|start|history`.
var flowCommand = Command{
	Name:  "flow",
	Usage: flowUsage,
	Help:  "validate and run Amazon States Language workflows; show an execution's history",
	Run:   runFlow,
}

const flowUsage = "flow validate FILE | flow test-state FILE STATE [--input JSON|@file] [--variables JSON] [--inspection-level INFO|DEBUG|TRACE] [--json] | flow start FILE|NAME [--input JSON|@file] [--name N] [--target device|cloud|auto] [--wait] [--json] | flow history JOB|ARN [--json] | flow redrive JOB|ARN | flow retry JOB|ARN (JOB: the job's number, 12 or #12, as ls and the window show it)"

func runFlow(c *CLI, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(c.Stderr, "usage: jobdesk "+flowUsage)
		return ExitUsage
	}
	switch args[0] {
	case "validate":
		return flowValidate(c, args[1:])
	case "test-state":
		return flowTestState(c, args[1:])
	case "start":
		return flowStart(c, args[1:])
	case "history":
		return flowHistory(c, args[1:])
	case "redrive", "retry":
		return flowRerun(c, args[0], args[1:])
	}
	return c.Usage(fmt.Sprintf("flow: unknown subcommand %q (validate, test-state, start, history, redrive, retry)", args[0]),
		fmt.Sprintf("flow: %q というサブコマンドはありません（validate・test-state・start・history・redrive・retry）。", args[0]))
}

// flowError turns an engine APIError into a coded error people can read.
func flowError(err error) error {
	var ae *flow.APIError
	if !errors.As(err, &ae) {
		return err
	}
	switch ae.Type {
	case "InvalidDefinition":
		return job.Errorf(job.E014, "the workflow definition is not valid: %s", ae.Message).WithJa("ワークフロー定義が正しくありません。")
	case "ExecutionAlreadyExists":
		return job.Errorf(job.E014, "an execution with this name already exists (finished, or running with other input): %s; choose another --name", ae.Message).
			WithJa("同じ名前の実行がすでに存在します（終了済み、または別の入力で実行中）。--name で別の名前を指定してください。")
	case "ExecutionNotRedrivable":
		return job.Errorf(job.E014, "%s", ae.Message).WithJa("この実行は再開（redrive）できません。")
	case "ExecutionDoesNotExist", "StateMachineDoesNotExist", "InvalidArn":
		return job.Errorf(job.E014, "%s", ae.Message).WithJa("指定されたワークフローまたは実行が見つかりません。")
	case "InvalidExecutionInput", "InvalidName", "ValidationException":
		return job.Errorf(job.E014, "%s", ae.Message).WithJa("入力または名前が正しくありません。")
	}
	return job.Errorf(job.E015, "%s: %s", ae.Type, ae.Message)
}

func flowValidate(c *CLI, args []string) int {
	fs := c.Flags("flow validate")
	asJSON := fs.Bool("json", false, "print the diagnostics as JSON")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return c.Usage("flow validate: name one workflow file", "flow validate: ワークフローのファイルを 1 つ指定してください。")
	}
	def, err := os.ReadFile(pos[0])
	if err != nil {
		return c.Fail(job.Wrap(job.E014, err, "cannot read "+pos[0]).WithJa("ファイルを読み込めません。"))
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ds := a.ValidateWorkflow(a.DeviceDefinition(def))
	errs := 0
	for _, d := range ds {
		if d.Severity == "ERROR" {
			errs++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		if ds == nil {
			ds = []flow.Diagnostic{}
		}
		enc.Encode(ds)
	} else {
		for _, d := range ds {
			fmt.Fprintf(c.Stdout, "%s %s %s: %s\n", d.Severity, d.Location, d.Code, d.Message)
			if ja := diagnosticJa(d); ja != "" {
				fmt.Fprintf(c.Stdout, "    %s\n", ja)
			}
		}
		if errs == 0 {
			fmt.Fprintf(c.Stdout, "%s: valid\n", pos[0])
		}
	}
	if errs > 0 {
		fmt.Fprintf(c.Stderr, "jobdesk: E014: %s has %d error(s)\n         ワークフロー定義にエラーが %d 件あります。\n", pos[0], errs, errs)
		return ExitFailed
	}
	return ExitOK
}

// flowTestState is `jobdesk flow test-state FILE STATE --input JSON`: state STATE of the
// workflow FILE run once with the input, as Step Functions' TestState does (Task functions run
// here, Wait states do not wait, Retry is reported as RETRIABLE rather than applied).
func flowTestState(c *CLI, args []string) int {
	fs := c.Flags("flow test-state")
	input := fs.String("input", "{}", "the state's input: JSON, or @file to read it from a file")
	variables := fs.String("variables", "", "the workflow variables the state sees: a JSON object")
	level := fs.String("inspection-level", "INFO", "INFO, DEBUG or TRACE: DEBUG and TRACE also print the data after each processing step")
	asJSON := fs.Bool("json", false, "print the answer as JSON, as the TestState API gives it")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 2 {
		return c.Usage("flow test-state: name a workflow file and one of its states", "flow test-state: ワークフローのファイルと、その中の状態を 1 つ指定してください。")
	}
	def, err := os.ReadFile(pos[0])
	if err != nil {
		return c.Fail(job.Wrap(job.E014, err, "cannot read "+pos[0]).WithJa("ファイルを読み込めません。"))
	}
	in := []byte(*input)
	if strings.HasPrefix(*input, "@") {
		if in, err = os.ReadFile((*input)[1:]); err != nil {
			return c.Fail(job.Wrap(job.E014, err, "cannot read the input file").WithJa("入力ファイルを読み込めません。"))
		}
	}
	if err := checkFlowInput(in); err != nil {
		return c.Fail(err)
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	def = a.DeviceDefinition(def)
	req := flow.TestStateInput{Definition: string(def), StateName: pos[1], Input: in, InspectionLevel: strings.ToUpper(*level)}
	if *variables != "" {
		req.Variables = json.RawMessage(*variables)
	}
	out, err := a.TestWorkflowState(context.Background(), req)
	if err != nil {
		return c.Fail(flowError(err))
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(out)
	} else {
		fmt.Fprintf(c.Stdout, "status    %s\n", out.Status)
		if out.NextState != "" {
			fmt.Fprintf(c.Stdout, "next      %s\n", out.NextState)
		}
		if out.Output != nil {
			fmt.Fprintf(c.Stdout, "output    %s\n", out.Output)
		}
		if out.Error != "" {
			fmt.Fprintf(c.Stdout, "error     %s\ncause     %s\n", out.Error, out.Cause)
		}
		for _, k := range []string{"input", "afterInputPath", "afterParameters", "afterArguments", "result", "afterResultSelector", "afterResultPath", "variables"} {
			if v, ok := out.InspectionData[k]; ok {
				fmt.Fprintf(c.Stdout, "%-20s %s\n", k, v)
			}
		}
	}
	if out.Status == "FAILED" || out.Status == "RETRIABLE" {
		return ExitFailed
	}
	return ExitOK
}

// diagnosticsJa says in Japanese what each kind of definition diagnostic means.
var diagnosticsJa = map[string]string{
	"SCHEMA_VALIDATION_FAILED":   "定義の形式が正しくありません",
	"INVALID_JSONATA":            "JSONata の式が正しくありません",
	"INVALID_VARIABLE_NAME":      "変数名が正しくありません（先頭は英字か _、以降は英数字か _、80 文字まで。states は使えません）",
	"INVALID_JSON_PATH":          "JSONPath が正しくありません",
	"INVALID_REFERENCE_PATH":     "参照パスが正しくありません",
	"INVALID_INTRINSIC_FUNCTION": "組み込み関数の呼び出しが正しくありません",
	"MISSING_TRANSITION_TARGET":  "遷移先の状態が定義にありません",
	"UNREACHABLE_STATE":          "どこからも遷移しない状態があります",
	"INVALID_RESOURCE":           "Task のリソースがこの端末で使えません",
}

// diagnosticJa is diagnostic d in Japanese, naming its state: 状態「X」: …
func diagnosticJa(d flow.Diagnostic) string {
	ja, ok := diagnosticsJa[d.Code]
	if !ok {
		return ""
	}
	if i := strings.LastIndex(d.Location, "/States/"); i >= 0 {
		name, _, _ := strings.Cut(d.Location[i+len("/States/"):], "/")
		return fmt.Sprintf("状態「%s」: %s（%s）", name, ja, d.Location)
	}
	return fmt.Sprintf("%s（%s）", ja, d.Location)
}

// machineName is the state machine name of a workflow file: its base name without .asl.json or
// .json, made a valid name.
func machineName(file string) string {
	base := filepath.Base(file)
	for _, ext := range []string{".asl.json", ".json", ".yaml", ".yml"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	return flow.ExecutionNameFromFile(base+".x", time.Time{})
}

func flowStart(c *CLI, args []string) int {
	fs := c.Flags("flow start")
	input := fs.String("input", "{}", "the execution's input: JSON, or @file to read it from a file")
	name := fs.String("name", "", "the execution's name (default: a UUID); the same name and input starts nothing new")
	wait := fs.Bool("wait", false, "wait for the execution, showing progress on stderr")
	asJSON := fs.Bool("json", false, "print the execution as JSON")
	target := fs.String("target", "device", "where the execution runs: device, cloud (the state machine cloud.json's state_machines names for the workflow) or auto (a workflow's input is never large: the device)")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return c.Usage("flow start: name one workflow file (or a stored workflow's name)", "flow start: ワークフローのファイル（または登録済みの名前）を 1 つ指定してください。")
	}
	in := []byte(*input)
	if strings.HasPrefix(*input, "@") {
		if in, err = os.ReadFile((*input)[1:]); err != nil {
			return c.Fail(job.Wrap(job.E014, err, "cannot read the input file").WithJa("入力ファイルを読み込めません。"))
		}
	}
	if err := checkFlowInput(in); err != nil {
		return c.Fail(err)
	}
	switch strings.ToLower(strings.TrimSpace(*target)) {
	case "", app.TargetDevice, app.TargetAuto:
	case app.TargetCloud:
		return flowStartCloud(c, pos[0], *name, in, *wait, *asJSON)
	default:
		return c.Usage(fmt.Sprintf("flow start: --target %q must be device, cloud or auto", *target),
			"flow start: --target には device、cloud、auto のいずれかを指定してください。")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var smARN, jobName string
	if def, err := os.ReadFile(pos[0]); err == nil {
		def = a.DeviceDefinition(def)
		// As `flow validate`: a Task naming a function this device does not have is refused now,
		// not found out when the execution reaches it.
		errs := 0
		for _, d := range a.ValidateWorkflow(def) {
			if d.Severity == "ERROR" {
				errs++
				fmt.Fprintf(c.Stderr, "%s %s %s: %s\n", d.Severity, d.Location, d.Code, d.Message)
			}
		}
		if errs > 0 {
			return c.Fail(job.Errorf(job.E014, "%s has %d error(s); nothing was started", pos[0], errs).
				WithJa(fmt.Sprintf("ワークフロー定義にエラーが %d 件あるため、開始しませんでした。", errs)))
		}
		sm, err := a.PutWorkflow(ctx, machineName(pos[0]), def)
		if err != nil {
			return c.Fail(flowError(err))
		}
		smARN, jobName = sm.ARN, filepath.Base(pos[0])
	} else {
		sm, err2 := a.Workflow(ctx, pos[0])
		if err2 != nil {
			return c.Fail(job.Wrap(job.E014, err, "cannot read "+pos[0]+" (and no stored workflow has that name)").WithJa("ワークフローのファイルが読み込めません。"))
		}
		smARN, jobName = sm.ARN, sm.Name
	}
	x, err := a.StartWorkflow(ctx, smARN, json.RawMessage(in), flow.StartOptions{Name: *name, JobName: jobName})
	if err != nil {
		return c.Fail(flowError(err))
	}
	j, err := a.Get(ctx, x.JobID)
	if err != nil {
		return c.Fail(err)
	}
	if *wait {
		if _, err := c.RunAndWait(ctx, a, []job.Job{j}); err != nil {
			return c.Fail(err)
		}
		if x, err = a.WaitExecution(ctx, x.ARN); err != nil {
			return c.Fail(err)
		}
	}
	if !*wait {
		// The execution is RUNNING to Step Functions, but until an engine takes its job nothing
		// runs: say PENDING, as `jobdesk ls` does.
		if j.Status == job.Pending && x.Status == flow.StatusRunning {
			x.Status = string(job.Pending)
		}
		printExecution(c, x, j, *asJSON)
		return ExitOK
	}
	printExecution(c, x, j, *asJSON)
	if x.Status == flow.StatusSucceeded {
		return ExitOK
	}
	return ExitFailed
}

// flowStartCloud is `flow start --target cloud`: an execution of the workflow's state machine in
// the cloud (a file names its workflow by its base name, as on the device; the state machine is
// the one deployed, which cloud.json's state_machines names).
func flowStartCloud(c *CLI, workflow, name string, in []byte, wait, asJSON bool) int {
	if _, err := os.Stat(workflow); err == nil {
		workflow = machineName(workflow)
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	x, err := a.StartCloudExecution(ctx, workflow, name, json.RawMessage(in), wait)
	if err != nil {
		return c.Fail(err)
	}
	if asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]any{"executionArn": x.ARN, "name": x.Name, "status": x.Status, "output": x.Output,
			"error": x.Error, "cause": x.Cause, "target": app.TargetCloud})
	} else {
		fmt.Fprintf(c.Stdout, "execution %s\nstatus    %s\n", x.ARN, x.Status)
		if len(x.Output) > 0 {
			fmt.Fprintf(c.Stdout, "output    %s\n", x.Output)
		}
		if x.Error != "" {
			fmt.Fprintf(c.Stdout, "error     %s\ncause     %s\n", x.Error, x.Cause)
		}
	}
	if wait && x.Status != "SUCCEEDED" {
		return ExitFailed
	}
	return ExitOK
}

// maxFlowInput is Step Functions' limit on an execution's input.
const maxFlowInput = 256 << 10

// checkFlowInput refuses, in both languages, an execution input the engine would refuse: not
// JSON, nested deeper than JSON is read, or larger than 256 KiB once compacted.
func checkFlowInput(in []byte) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, in); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth") {
			return job.Errorf(job.E014, "the input is nested too deeply: JSON is read to a depth of 10000").
				WithJa("入力の JSON の入れ子が深すぎます（読み取れるのは 10000 段までです）。")
		}
		return job.Wrap(job.E014, err, "the input is not valid JSON").WithJa("入力が正しい JSON ではありません。")
	}
	if n := compact.Len(); n > maxFlowInput {
		return job.Errorf(job.E014, "the input is %d bytes; a workflow's input may be at most 256 KiB (%d bytes)", n, maxFlowInput).
			WithJa(fmt.Sprintf("入力が %d バイトあります。ワークフローの入力は 256 KiB（%d バイト）までです。", n, maxFlowInput))
	}
	return nil
}

// printExecution prints execution x, whose job is j.
func printExecution(c *CLI, x flow.Execution, j job.Job, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]any{"executionArn": x.ARN, "name": x.Name, "stateMachineArn": x.StateMachineARN, "jobId": x.JobID,
			"jobNumber": j.Number, "status": x.Status, "input": x.Input, "output": x.Output, "error": x.Error, "cause": x.Cause,
			"startDate": x.StartDate, "stopDate": x.StopDate, "redriveCount": x.RedriveCount})
		return
	}
	fmt.Fprintf(c.Stdout, "execution %s\njob       %s\nstatus    %s\n", x.ARN, jobRef(j), x.Status)
	if len(x.Output) > 0 {
		fmt.Fprintf(c.Stdout, "output    %s\n", x.Output)
	}
	if x.Error != "" {
		fmt.Fprintf(c.Stdout, "error     %s\ncause     %s\n", x.Error, x.Cause)
	}
}

func flowHistory(c *CLI, args []string) int {
	fs := c.Flags("flow history")
	asJSON := fs.Bool("json", false, "print the events as JSON, one per line")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return c.Usage("flow history: name one execution (its job's number or its ARN)", "flow history: 実行を 1 つ（ジョブ番号か ARN で）指定してください。")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx := context.Background()
	x, err := execution(ctx, a, pos[0])
	if err != nil {
		return c.Fail(flowError(err))
	}
	if x.Cloud {
		err = printCloudHistory(c, a, x.ARN, *asJSON)
	} else {
		err = printFlowHistory(c, a, x.ARN, *asJSON)
	}
	if err != nil {
		return c.Fail(flowError(err))
	}
	return ExitOK
}

// execution reads an execution named by a job's number (the job a person sees — a CSV import,
// a conversion, an AI generation — or the execution's own job; see parseJobRef) or by its ARN:
// the device's, or else the cloud's when the cloud is configured.
func execution(ctx context.Context, a *app.App, jobOrARN string) (app.ExecutionRef, error) {
	if _, _, ok := parseJobRef(jobOrARN); ok {
		j, err := FindJob(ctx, a, jobOrARN)
		if err != nil {
			return app.ExecutionRef{}, err
		}
		return a.ExecutionOf(ctx, j.ID)
	}
	_, err := a.Execution(ctx, jobOrARN)
	var ae *flow.APIError
	if errors.As(err, &ae) && (ae.Type == "ExecutionDoesNotExist" || ae.Type == "InvalidArn") {
		if _, cerr := a.CloudHistory(ctx, jobOrARN); cerr == nil {
			return app.ExecutionRef{ARN: jobOrARN, Cloud: true}, nil
		}
	}
	return app.ExecutionRef{ARN: jobOrARN}, err
}

// flowRerun is `flow redrive` (the same execution continues from the state that failed; what
// succeeded is not run again, and the job waits for it again) and `flow retry` (a new execution
// with the same input, linked to the original).
func flowRerun(c *CLI, verb string, args []string) int {
	fs := c.Flags("flow " + verb)
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return c.Usage("flow "+verb+": name one execution (its job's number or its ARN)", "flow "+verb+": 実行を 1 つ（ジョブ番号か ARN で）指定してください。")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx := context.Background()
	if verb == "redrive" {
		return redrive(c, a, pos[0])
	}
	ref, err := execution(ctx, a, pos[0])
	if err != nil {
		return c.Fail(flowError(err))
	}
	if ref.Cloud {
		return c.Fail(job.Errorf(job.E014, "flow retry runs the device's executions; retry a cloud job with jobdesk retry ID").
			WithJa("クラウドのジョブは jobdesk retry ID で再実行してください。"))
	}
	x, err := a.RetryExecution(ctx, ref.ARN)
	if err != nil {
		return c.Fail(flowError(err))
	}
	if x, err = a.Execution(ctx, x.ARN); err != nil {
		return c.Fail(flowError(err))
	}
	fmt.Fprintf(c.Stdout, "job %s\t%s\t%s\n", executionJob(ctx, a, x), x.Status, x.ARN)
	return ExitOK
}

// executionJob is how the command line prints the job of execution x (jobRef).
func executionJob(ctx context.Context, a *app.App, x flow.Execution) string {
	if j, err := a.Get(ctx, x.JobID); err == nil {
		return jobRef(j)
	}
	return job.Ref(x.JobID, 0)
}

// redrive is `jobdesk flow redrive JOB|ARN`: the job (see parseJobRef), or the execution with
// that ARN, goes on from the state that failed. It prints the job, its status and the execution.
func redrive(c *CLI, a *app.App, jobOrARN string) int {
	if _, _, ok := parseJobRef(jobOrARN); ok {
		j, err := FindJob(context.Background(), a, jobOrARN)
		if err != nil {
			return c.Fail(err)
		}
		return redriveJob(c, a, j)
	}
	j, err := a.RedriveARN(context.Background(), jobOrARN)
	if err != nil {
		return c.Fail(flowError(err))
	}
	if j.ID == 0 { // a cloud execution no job here waits on
		fmt.Fprintf(c.Stdout, "execution %s redriven\n", jobOrARN)
		return ExitOK
	}
	return printRedriven(c, a, j)
}

// redriveJob is `jobdesk redrive JOB`: job j goes on from the state that failed.
func redriveJob(c *CLI, a *app.App, j job.Job) int {
	j, err := a.Redrive(context.Background(), j.ID)
	if err != nil {
		return c.Fail(flowError(err))
	}
	return printRedriven(c, a, j)
}

// printRedriven prints redriven job j, its execution's status and the execution.
func printRedriven(c *CLI, a *app.App, j job.Job) int {
	ctx := context.Background()
	ref, err := a.ExecutionOf(ctx, j.ID)
	if err != nil {
		return c.Fail(flowError(err))
	}
	status := string(j.Status)
	if !ref.Cloud {
		if x, err := a.Execution(ctx, ref.ARN); err == nil {
			status = x.Status
		}
	}
	fmt.Fprintf(c.Stdout, "job %s\t%s\t%s\n", jobRef(j), status, ref.ARN)
	return ExitOK
}

// printCloudHistory prints the history events of the cloud execution arn: a table, or JSON lines.
func printCloudHistory(c *CLI, a *app.App, arn string, asJSON bool) error {
	evs, err := a.CloudHistory(context.Background(), arn)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.Stdout)
	enc.SetEscapeHTML(false)
	tw := newTable(c.Stdout)
	if !asJSON {
		fmt.Fprintln(tw, "ID\tTIME\tTYPE\tDETAIL")
	}
	for _, ev := range evs {
		if asJSON {
			enc.Encode(map[string]any{"id": ev.ID, "type": ev.Type, "timestamp": ev.Timestamp, "state": ev.State})
			continue
		}
		detail := ""
		if ev.State != "" {
			detail = "name=" + ev.State
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", ev.ID, ev.Timestamp.Local().Format("15:04:05.000"), ev.Type, detail)
	}
	return tw.Flush()
}

// printFlowHistory prints the history events of the execution arn: a table, or JSON lines.
// `jobdesk show --history` of a workflow job can call it too.
func printFlowHistory(c *CLI, a *app.App, arn string, asJSON bool) error {
	ctx := context.Background()
	enc := json.NewEncoder(c.Stdout)
	enc.SetEscapeHTML(false)
	tw := newTable(c.Stdout)
	if !asJSON {
		fmt.Fprintln(tw, "ID\tTIME\tTYPE\tDETAIL")
	}
	token := ""
	for {
		evs, next, err := a.ExecutionHistory(ctx, arn, 1000, token)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if asJSON {
				enc.Encode(map[string]any{"id": ev.ID, "previousEventId": ev.PreviousEventID, "type": ev.Type, "timestamp": ev.Timestamp, "details": ev.Details})
				continue
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", ev.ID, ev.Timestamp.Local().Format("15:04:05.000"), ev.Type, summary(ev.Details))
		}
		if next == "" {
			break
		}
		token = next
	}
	return tw.Flush()
}

// flowHistoryOfJob prints the workflow history of job id when it is a workflow execution's job,
// and reports whether it was one, for `jobdesk show --history`.
func flowHistoryOfJob(c *CLI, a *app.App, id int64) bool {
	x, err := a.ExecutionByJob(context.Background(), id)
	if err != nil {
		return false
	}
	fmt.Fprintf(c.Stdout, "\nWorkflow history (%s):\n", x.ARN)
	return printFlowHistory(c, a, x.ARN, false) == nil
}

// summary prints an event's details on one line: name, error, cause, input or output, shortened.
func summary(d map[string]any) string {
	var parts []string
	for _, v := range d {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"name", "index", "resource", "error", "cause", "input", "output", "mapRunArn", "redriveCount"} {
			if x, ok := m[k]; ok {
				s := fmt.Sprint(x)
				if len(s) > 80 {
					s = s[:80] + "…"
				}
				parts = append(parts, k+"="+s)
			}
		}
	}
	return strings.Join(parts, " ")
}
