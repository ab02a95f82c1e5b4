package cloudconfig_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudops"
)

// templateOutputKeys reads the output names of assets/deploy/template.yaml.
func templateOutputKeys(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../assets/deploy/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "Outputs:":
			in = true
		case in && len(line) > 0 && line[0] != ' ' && line[0] != '#':
			in = false
		case in && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(line, ":"):
			keys = append(keys, strings.TrimSuffix(strings.TrimSpace(line), ":"))
		}
	}
	if len(keys) == 0 {
		t.Fatal("no Outputs in the template")
	}
	return keys
}

// The template's outputs, as describe-stacks prints them, become a cloud.json naming every
// workflow file's state machine and every job type's queue and dead-letter queue.
func TestConfigFromTheTemplatesOutputs(t *testing.T) {
	type output struct{ OutputKey, OutputValue string }
	var outs []output
	for _, k := range templateOutputKeys(t) {
		outs = append(outs, output{k, "value-of-" + k})
	}
	b, _ := json.Marshal(map[string]any{"Stacks": []any{map[string]any{"StackName": "jobdesk", "Outputs": outs}}})
	c, err := cloudconfig.ConfigFromStackOutputs(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../assets/workflows/*.asl.json")
	var workflows []string
	for _, f := range files {
		workflows = append(workflows, strings.TrimSuffix(filepath.Base(f), ".asl.json"))
	}
	if got := keysOf(c.StateMachines); !reflect.DeepEqual(got, workflows) {
		t.Errorf("state machines %v; want the workflow files %v", got, workflows)
	}
	if got := keysOf(c.Queues); !reflect.DeepEqual(got, cloudops.JobTypes()) {
		t.Errorf("queues %v; want every job type %v", got, cloudops.JobTypes())
	}
	if got := keysOf(c.DeadLetterQueues); !reflect.DeepEqual(got, cloudops.JobTypes()) {
		t.Errorf("dead-letter queues %v; want every job type %v", got, cloudops.JobTypes())
	}
	if c.StateMachines["csv-processing"] != "value-of-StateMachineCsvProcessing" || c.Queues["ATTACHMENT_CONVERT"] != "value-of-QueueAttachmentConvert" ||
		c.Region != "value-of-Region" || c.Bucket != "value-of-Bucket" || c.Prefix != "value-of-Prefix" ||
		c.StatusQueue != "value-of-StatusQueue" || c.DesktopRoleArn != "value-of-DesktopRoleArn" ||
		c.BedrockModel != "value-of-BedrockModelId" || c.BedrockRegion != "value-of-BedrockRegion" {
		t.Errorf("config %+v", c)
	}

	dir := t.TempDir()
	if err := cloudconfig.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	back, err := cloudconfig.Load(dir, func(string) string { return "" }, nil)
	c.Prefix += "/" // Load ends a prefix with a slash
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if st, _ := os.Stat(cloudconfig.Path(dir)); st.Mode().Perm() != 0o600 {
		t.Errorf("cloud.json mode %v; want 0600", st.Mode().Perm())
	}
}

func TestConfigFromStackOutputsRefusesOtherStacks(t *testing.T) {
	for _, in := range []string{`not json`, `{"Stacks":[]}`, `{"Stacks":[{"Outputs":[{"OutputKey":"Region","OutputValue":"r"}]}]}`} {
		if _, err := cloudconfig.ConfigFromStackOutputs(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
	if err := cloudconfig.NotFound("cloud.json"); !strings.Contains(err.Error(), "--from-stack-outputs") {
		t.Errorf("missing cloud.json: %v; want a hint to write it", err)
	}
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
