package app

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"jobdesk/assets"
	"jobdesk/engine/aijob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
)

func TestJobTarget(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	os.WriteFile(csv, []byte("a,b\n1,2\n"), 0o644)
	ctx := context.Background()
	for _, c := range []struct{ flag, want string }{{"", job.TargetDevice}, {"device", job.TargetDevice}, {"auto", job.TargetDevice}} {
		if got, err := JobTarget(ctx, dir, c.flag, "csv", csv); err != nil || got != c.want {
			t.Fatalf("%q: %q %v", c.flag, got, err)
		}
	}
	if _, err := JobTarget(ctx, dir, "cloud", "csv", csv); err == nil {
		t.Fatal("cloud without cloud.json was accepted")
	}
	if _, err := JobTarget(ctx, dir, "moon", "csv", csv); err == nil {
		t.Fatal("a bad --target was accepted")
	}
	cloudconfig.Save(dir, cloudconfig.Config{Bucket: "b", StateMachines: map[string]string{"csv-processing": "arn:aws:states:us-east-1:1:stateMachine:csv"}})
	if got, err := JobTarget(ctx, dir, "cloud", "csv", csv); err != nil || got != job.TargetCloud {
		t.Fatalf("cloud: %q %v", got, err)
	}
	// A small file stays on the device under auto.
	if got, err := JobTarget(ctx, dir, "auto", "csv", csv); err != nil || got != job.TargetDevice {
		t.Fatalf("auto, small: %q %v", got, err)
	}
	if c, stop, err := StartCloud(ctx, &App{cfg: Config{DataDir: t.TempDir()}}); c != nil || err != nil {
		t.Fatalf("StartCloud without cloud.json: %v %v", c, err)
	} else {
		stop()
	}
}

// TestDeviceWorkflowsNameTheDevicesTopic: the one task-generation file names its topic through
// a placeholder the deploy template substitutes on AWS; on the device the same file publishes
// to the device's own topic (its region and account), and no placeholder is left in any
// workflow the device loaded.
func TestDeviceWorkflowsNameTheDevicesTopic(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	ms, err := a.flow.ListStateMachines(ctx)
	if err != nil || len(ms) == 0 {
		t.Fatalf("state machines: %v %v", ms, err)
	}
	found := false
	for _, m := range ms {
		sm, err := a.flow.DescribeStateMachine(ctx, m.ARN)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(sm.Definition, "${") {
			t.Errorf("%s: a placeholder is left on the device", m.Name)
		}
		if m.Name == "task-generation" {
			found = true
			want := `"TopicArn": "arn:aws:sns:local:000000000000:workflow-notifications"`
			if strings.Count(sm.Definition, want) != 2 {
				t.Errorf("task-generation on the device does not publish to the device's topic twice:\n%s", sm.Definition)
			}
		}
	}
	if !found {
		t.Fatal("task-generation was not loaded")
	}
	raw, _ := assets.Workflow("task-generation")
	if strings.Contains(string(raw), "arn:aws:sns:local") {
		t.Error("the workflow file spells the device's topic; it must name ${WorkflowNotificationsTopicArn}")
	}
}

// TestDeviceWorkflowsCallTheDevicesFunctions: the workflows name their functions through
// placeholders the deploy template fills with its stack's functions; on the device each is
// filled with the name the device registers the handler under (csvjob.FunctionName,
// docjob.FunctionName, aijob's Fn* constants), so every lambda:invoke of every loaded workflow
// calls a registered function.
func TestDeviceWorkflowsCallTheDevicesFunctions(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	registered := map[string]bool{}
	for _, n := range a.flow.Functions() {
		registered[n] = true
	}
	for ph, n := range assets.DeviceFunctions {
		if !registered[n] {
			t.Errorf("${%s} is %q on the device, which registers no such function", ph, n)
		}
	}
	for _, n := range []string{csvjob.FunctionName, docjob.FunctionName, aijob.FnSubgoals, aijob.FnActions, aijob.FnCaption,
		aijob.FnEligibility, aijob.FnTaskValidate, aijob.FnTaskBatches, aijob.FnTaskGenerate, aijob.FnTaskSave,
		aijob.FnTaskAggr, aijob.FnGoalStatus} {
		if !slices.Contains(slices.Collect(maps.Values(assets.DeviceFunctions)), n) {
			t.Errorf("the device's function %s has no workflow placeholder in assets.DeviceFunctions", n)
		}
	}
	ctx := context.Background()
	ms, err := a.flow.ListStateMachines(ctx)
	if err != nil || len(ms) != len(assets.Workflows()) {
		t.Fatalf("state machines: %d of %d workflows loaded, %v", len(ms), len(assets.Workflows()), err)
	}
	calls := 0
	for _, m := range ms {
		sm, err := a.flow.DescribeStateMachine(ctx, m.ARN)
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range regexp.MustCompile(`"FunctionName": "([^"]*)"`).FindAllStringSubmatch(sm.Definition, -1) {
			calls++
			if !registered[fn[1]] {
				t.Errorf("%s calls %q, which the device does not register", m.Name, fn[1])
			}
		}
	}
	if calls == 0 {
		t.Fatal("no workflow calls a function")
	}
}
