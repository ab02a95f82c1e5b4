package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"jobdesk/app"
	"jobdesk/assets"
)

const testWorkflow = `{
  "Comment": "totals per user",
  "StartAt": "Prepare",
  "States": {
    "Prepare": {"Type": "Pass", "Parameters": {"users.$": "$.users", "threshold": 10}, "Next": "Each"},
    "Each": {
      "Type": "Map", "ItemsPath": "$.users", "MaxConcurrency": 2,
      "ItemSelector": {"name.$": "$$.Map.Item.Value.name", "logins.$": "$$.Map.Item.Value.logins", "threshold.$": "$.threshold"},
      "ItemProcessor": {"StartAt": "Active?", "States": {
        "Active?": {"Type": "Choice", "Choices": [{"Variable": "$.logins", "NumericGreaterThanEqualsPath": "$.threshold", "Next": "Active"}], "Default": "Idle"},
        "Active": {"Type": "Pass", "Parameters": {"name.$": "$.name", "active": true}, "End": true},
        "Idle": {"Type": "Pass", "Parameters": {"name.$": "$.name", "active": false}, "End": true}}},
      "ResultPath": "$.result", "Next": "Wait"
    },
    "Wait": {"Type": "Wait", "Seconds": 1, "OutputPath": "$.result", "End": true}
  }
}`

func TestFlowCLIStartWaitHistory(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(t.TempDir(), "user-activity.asl.json")
	os.WriteFile(wf, []byte(testWorkflow), 0o644)
	in := filepath.Join(t.TempDir(), "input.json")
	os.WriteFile(in, []byte(`{"users":[{"name":"佐藤","logins":12},{"name":"鈴木","logins":3}]}`), 0o644)

	code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "validate", wf)
	if code != ExitOK || !strings.Contains(out, "valid") {
		t.Fatalf("validate: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "--data-dir", dir, "flow", "start", wf, "--input", "@"+in, "--name", "run-1", "--wait", "--json")
	if code != ExitOK {
		t.Fatalf("start: %d\n%s\n%s", code, out, errOut)
	}
	var x map[string]any
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if x["status"] != "SUCCEEDED" || x["executionArn"] != "arn:aws:states:local:000000000000:execution:user-activity:run-1" {
		t.Fatalf("%v", x)
	}
	outJSON, _ := json.Marshal(x["output"])
	if string(outJSON) != `[{"active":true,"name":"佐藤"},{"active":false,"name":"鈴木"}]` {
		t.Fatalf("output %s", outJSON)
	}
	jobID := itoa(int64(x["jobId"].(float64)))
	number := itoa(int64(x["jobNumber"].(float64)))
	if number != "1" {
		t.Fatalf("the first execution's job is number %s, want 1", number)
	}

	// A closed execution with the same name is ExecutionAlreadyExists, as in Step Functions.
	code, _, errOut = runCLI(t, "--data-dir", dir, "flow", "start", wf, "--input", "@"+in, "--name", "run-1")
	if code != ExitUsage || !strings.Contains(errOut, "already exists") {
		t.Fatalf("restart of a closed execution: %d %s", code, errOut)
	}

	code, out, _ = runCLI(t, "--data-dir", dir, "flow", "history", number)
	for _, want := range []string{"ExecutionStarted", "PassStateEntered", "MapStateEntered", "MapIterationSucceeded", "ChoiceStateEntered", "WaitStateExited", "ExecutionSucceeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %s:\n%s", want, out)
		}
	}
	if code != ExitOK {
		t.Fatalf("history: %d", code)
	}
	// The hook for `show --history`: a workflow job prints its workflow history.
	var buf bytes.Buffer
	c := &CLI{Stdout: &buf, Stderr: &buf, dataDir: dir}
	a, ok := c.Open()
	if !ok {
		t.Fatal(buf.String())
	}
	id, _ := strconv.ParseInt(jobID, 10, 64)
	if !flowHistoryOfJob(c, a, id) || !strings.Contains(buf.String(), "MapIterationSucceeded") {
		t.Fatalf("flowHistoryOfJob: %s", buf.String())
	}
	if flowHistoryOfJob(c, a, 999) {
		t.Fatal("a job that is no execution has no workflow history")
	}
	a.Close()
	// The execution is a job: ls and show see it.
	code, out, _ = runCLI(t, "--data-dir", dir, "ls", "--json")
	if code != ExitOK || !strings.Contains(out, `"type":"flow.execution"`) || !strings.Contains(out, `"name":"user-activity.asl.json"`) {
		t.Fatalf("ls: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "--data-dir", dir, "show", number)
	if code != ExitOK || !strings.Contains(out, "SUCCEEDED") {
		t.Fatalf("show: %d %s", code, out)
	}
}

func TestFlowCLIFailures(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.asl.json")
	os.WriteFile(bad, []byte(`{"StartAt":"ValidateCSV","States":{"ValidateCSV":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:no-such-function",
		"Retry":[{"ErrorEquals":["States.ALL"],"BackoffRate":0.5}],"Next":"Nowhere"}}}`), 0o644)
	code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "validate", bad)
	if code != ExitFailed {
		t.Fatalf("validate: %d", code)
	}
	for _, want := range []string{"/States/ValidateCSV/Retry/0/BackoffRate", "/States/ValidateCSV/Next", "/States/ValidateCSV/Resource"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "E014") || !strings.Contains(errOut, "エラー") {
		t.Errorf("stderr %s", errOut)
	}
	// start checks as validate does: nothing runs, every error is named.
	code, out, errOut = runCLI(t, "--data-dir", dir, "flow", "start", bad, "--wait")
	if code == ExitOK || !strings.Contains(errOut, "no-such-function") || !strings.Contains(errOut, "nothing was started") {
		t.Fatalf("start of an invalid workflow: %d %s %s", code, out, errOut)
	}
	if _, list, _ := runCLI(t, "--data-dir", dir, "ls"); strings.Contains(list, "bad.asl.json") {
		t.Fatalf("an invalid workflow made a job:\n%s", list)
	}
	failing := filepath.Join(t.TempDir(), "fails.asl.json")
	os.WriteFile(failing, []byte(`{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"BusinessError","Cause":"the total is negative"}}}`), 0o644)
	code, out, _ = runCLI(t, "--data-dir", dir, "flow", "start", failing, "--wait")
	if code != ExitFailed || !strings.Contains(out, "BusinessError") || !strings.Contains(out, "FAILED") {
		t.Fatalf("failing run: %d %s", code, out)
	}
	// retry: a new execution of the same input, linked to the failed one; redrive: the same one.
	_, list, _ := runCLI(t, "--data-dir", dir, "ls", "--json")
	var failedID string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		var j struct {
			Number int64
			Name   string
		}
		if json.Unmarshal([]byte(line), &j) == nil && j.Name == "fails.asl.json" {
			failedID = strconv.FormatInt(j.Number, 10)
		}
	}
	code, out, errOut = runCLI(t, "--data-dir", dir, "flow", "retry", failedID)
	if code != ExitOK || !strings.Contains(out, ":execution:fails:") || strings.Contains(out, "job "+failedID+"\t") {
		t.Fatalf("flow retry %s: %d %s %s", failedID, code, out, errOut)
	}
	code, out, errOut = runCLI(t, "--data-dir", dir, "flow", "redrive", failedID)
	if code != ExitOK || !strings.HasPrefix(out, "job "+failedID+"\t") {
		t.Fatalf("flow redrive %s: %d %s %s", failedID, code, out, errOut)
	}
	code, _, errOut = runCLI(t, "--data-dir", dir, "flow", "start", failing, "--input", "{not json")
	if code != ExitUsage || !strings.Contains(errOut, "E014") {
		t.Fatalf("bad input: %d %s", code, errOut)
	}
	if code, _, _ = runCLI(t, "--data-dir", dir, "flow", "history", "999"); code != ExitUsage {
		t.Fatalf("history of nothing: %d", code)
	}
	if code, _, _ = runCLI(t, "--data-dir", dir, "flow", "frobnicate"); code != ExitUsage {
		t.Fatalf("unknown subcommand: %d", code)
	}
}

func TestFlowEngineSharedAndWorkflowsLoaded(t *testing.T) {
	a, err := app.Open(app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sms, err := a.Workflows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]bool{}
	for _, sm := range sms {
		loaded[sm.Name] = true
		// One engine, created once and kept: what one call lists, the next finds.
		if got, err := a.Workflow(t.Context(), sm.Name); err != nil || got.ARN != sm.ARN {
			t.Fatal("the App must create the workflow engine once and keep it")
		}
	}
	for _, name := range assets.Workflows() {
		def, _ := assets.Workflow(name)
		ds := a.ValidateWorkflow(def)
		if !loaded[name] {
			t.Logf("shipped workflow %s is not loaded yet: %+v", name, ds)
		}
	}
}

func TestFlowValidateJSONataAndVariables(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.asl.json")
	os.WriteFile(bad, []byte(`{"QueryLanguage":"JSONata","StartAt":"Prepare","States":{
		"Prepare":{"Type":"Pass","Assign":{"1st":1},"Output":"{% $states.input. %}","Next":"Check"},
		"Check":{"Type":"Pass","Parameters":{"a":1},"End":true}}}`), 0o644)
	code, out, _ := runCLI(t, "--data-dir", dir, "flow", "validate", bad)
	if code != ExitFailed {
		t.Fatalf("validate: %d\n%s", code, out)
	}
	for _, want := range []string{`INVALID_JSONATA: state "Prepare"`, `INVALID_VARIABLE_NAME: state "Prepare"`, `state "Check": the field 'Parameters' is not supported`,
		"状態「Prepare」: JSONata の式が正しくありません", "状態「Check」"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	jsonPath := filepath.Join(t.TempDir(), "vars.asl.json")
	os.WriteFile(jsonPath, []byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"ok":1,"bad-name":2},"End":true}}}`), 0o644)
	if code, out, _ := runCLI(t, "--data-dir", dir, "flow", "validate", jsonPath); code != ExitFailed || !strings.Contains(out, `INVALID_VARIABLE_NAME: state "A"`) {
		t.Errorf("JSONPath variables: %d\n%s", code, out)
	}
}

func TestFlowTestState(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(t.TempDir(), "wf.asl.json")
	os.WriteFile(wf, []byte(`{"QueryLanguage":"JSONata","StartAt":"A","States":{
		"A":{"Type":"Pass","Output":{"total":"{% $sum($states.input.xs) %}"},"Assign":{"n":"{% $count($states.input.xs) %}"},"Next":"B"},
		"B":{"Type":"Choice","Choices":[{"Condition":"{% $states.input.total > 10 %}","Next":"Big"}],"Default":"Small"},
		"Big":{"Type":"Succeed"},"Small":{"Type":"Fail","Error":"TooSmall"}}}`), 0o644)
	code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "test-state", wf, "A", "--input", `{"xs":[5,7]}`, "--inspection-level", "DEBUG")
	if code != ExitOK || !strings.Contains(out, "status    SUCCEEDED") || !strings.Contains(out, `output    {"total":12}`) ||
		!strings.Contains(out, "next      B") || !strings.Contains(out, `{"n":2}`) {
		t.Fatalf("test-state A: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "--data-dir", dir, "flow", "test-state", wf, "B", "--input", `{"total":3}`, "--json")
	var res map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || res["nextState"] != "Small" || res["status"] != "SUCCEEDED" {
		t.Fatalf("test-state B: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "--data-dir", dir, "flow", "test-state", wf, "Small")
	if code != ExitFailed || !strings.Contains(out, "status    FAILED") || !strings.Contains(out, "error     TooSmall") {
		t.Fatalf("test-state Small: %d %s", code, out)
	}
	code, _, errOut = runCLI(t, "--data-dir", dir, "flow", "test-state", wf, "Nope")
	if code == ExitOK || !strings.Contains(errOut, "E014") {
		t.Fatalf("test-state of a missing state: %d %s", code, errOut)
	}
}

// TestFlowValidateShippedWorkflowFiles: every workflow file JobDesk ships validates from the
// command line as it is, its placeholders (functions, topic) filled with the device's values.
func TestFlowValidateShippedWorkflowFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range assets.Workflows() {
		def, err := assets.Workflow(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(assets.Placeholders(def)) == 0 {
			t.Errorf("%s names no placeholder: the test would not see them filled", name)
		}
		f := filepath.Join(t.TempDir(), name+".asl.json")
		os.WriteFile(f, def, 0o644)
		if code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "validate", f); code != ExitOK {
			t.Errorf("flow validate %s: %d\n%s%s", name, code, out, errOut)
		}
	}
	// and runs: the shipped conversion workflow started from its file calls the device's
	// converter (not a function named "${DocumentConverterFunction}")
	def, _ := assets.Workflow("document-conversion")
	f := filepath.Join(t.TempDir(), "conversion.asl.json")
	os.WriteFile(f, def, 0o644)
	txt := filepath.Join(dir, "メモ.txt") // inside the data folder, which a workflow may read
	os.WriteFile(txt, []byte("会議は10時からです。\n"), 0o644)
	in, _ := json.Marshal(map[string]any{"path": txt, "force": false, "furigana": false, "no_ocr": true, "max_pages": 0})
	code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "start", f, "--input", string(in), "--wait", "--json")
	if code != ExitOK || !strings.Contains(out, `"status":"SUCCEEDED"`) {
		t.Fatalf("flow start of the shipped conversion workflow: %d\n%s\n%s", code, out, errOut)
	}
}
