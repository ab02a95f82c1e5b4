package deploy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"jobdesk/assets"
)

// nameProperty is, for each resource type the template may use, the property that gives the
// resource its name in the account and region ("" for a type that has none), and AWS's
// limit on that name's length. A resource without that property gets a name CloudFormation
// generates from the stack's (STACK-LogicalId-RANDOM), which no other stack shares.
var nameProperty = map[string]struct {
	prop string
	max  int
}{
	"AWS::Serverless::Function":       {"FunctionName", 64},
	"AWS::Logs::LogGroup":             {"LogGroupName", 512},
	"AWS::SQS::Queue":                 {"QueueName", 80},
	"AWS::Serverless::StateMachine":   {"Name", 80},
	"AWS::CloudWatch::Alarm":          {"AlarmName", 255},
	"AWS::SNS::Topic":                 {"TopicName", 256},
	"AWS::S3::Bucket":                 {"BucketName", 63},
	"AWS::IAM::Role":                  {"RoleName", 64},
	"AWS::IAM::ManagedPolicy":         {"ManagedPolicyName", 128},
	"AWS::Events::Rule":               {"Name", 64},
	"AWS::Lambda::EventSourceMapping": {"", 0},
	"AWS::S3::BucketPolicy":           {"", 0},
	"AWS::SNS::Subscription":          {"", 0},
	"AWS::SQS::QueuePolicy":           {"", 0},
}

// deployedNames returns the names the template gives its resources when deployed as stack s,
// as "TYPE NAME" → logical ID, for every resource that sets its name.
func deployedNames(t *testing.T, data []byte, s Stack) map[string]string {
	t.Helper()
	tm, err := parseTemplate(data)
	if err != nil {
		t.Fatal(err)
	}
	r := &resolver{t: tm, s: s}
	out := map[string]string{}
	for id, res := range tm.resources {
		typ := fmt.Sprint(res["Type"])
		np, ok := nameProperty[typ]
		if !ok {
			t.Errorf("%s: type %s is not in nameProperty: say which property names it", id, typ)
			continue
		}
		v, named := tm.props(id)[np.prop]
		if np.prop == "" || !named {
			continue
		}
		name, err := r.value(v, nil)
		if err != nil {
			t.Errorf("%s.%s: %v", id, np.prop, err)
			continue
		}
		if len(name) > np.max {
			t.Errorf("stack %q: %s.%s %q is %d characters, AWS allows %d", s.Name, id, np.prop, name, len(name), np.max)
		}
		if prev, dup := out[typ+" "+name]; dup {
			t.Errorf("stack %q: %s and %s are both named %q", s.Name, prev, id, name)
		}
		out[typ+" "+name] = id
	}
	return out
}

func namedStack(name string) Stack {
	return Stack{Name: name, Region: "ap-northeast-1", Account: "123456789012", Bucket: strings.ToLower(name) + "-bucket-1a2b3c", Prefix: "jobdesk/"}
}

// TestTwoStacksShareNoName deploys the template's names for two stacks in one account and region
// and finds none shared: functions, their log groups, queues, state machines and their log
// groups are named after the stack; alarms, topics, the bucket and roles get generated names.
// The second stack is named adversarially too: the first's name followed by the start of one of
// its names' remainders ("jobdesk-ai", "jobdesk-dlq"…), where a name built as STACK-SUFFIX could
// meet another stack's. The longest stack name scripts/deploy-aws.sh accepts (40) keeps every
// name within AWS's limits.
func TestTwoStacksShareNoName(t *testing.T) {
	data := readTemplate(t)
	const first = "jobdesk"
	a := deployedNames(t, data, namedStack(first))
	if a["AWS::Serverless::Function jobdesk-csv-processor"] != "CsvProcessorFunction" ||
		a["AWS::Logs::LogGroup /aws/lambda/jobdesk-csv-processor"] != "CsvProcessorFunctionLogGroup" {
		t.Errorf("the functions and their log groups are not named after the stack: %v", a)
	}
	others := map[string]bool{"jobdesk-test": true, "prod": true, strings.Repeat("j", 40): true}
	for k := range a {
		_, name, _ := strings.Cut(k, " ")
		rest := name[strings.Index(name, first+"-")+len(first)+1:]
		parts := strings.Split(rest, "-")
		for i := 1; i < len(parts); i++ {
			others[first+"-"+strings.Join(parts[:i], "-")] = true
		}
	}
	if len(others) < 10 {
		t.Fatalf("only %d second stacks to try", len(others))
	}
	for _, other := range slices.Sorted(func(yield func(string) bool) {
		for k := range others {
			if !yield(k) {
				return
			}
		}
	}) {
		b := deployedNames(t, data, namedStack(other))
		if len(b) != len(a) {
			t.Errorf("stack %q names %d resources, stack %q %d", other, len(b), first, len(a))
		}
		for k, id := range b {
			if prev, shared := a[k]; shared {
				t.Errorf("stacks %q and %q share the name %s (%s, %s)", first, other, k, prev, id)
			}
		}
	}
}

// invokedFunctions returns the FunctionName of every lambda:invoke Task of a definition.
func invokedFunctions(t *testing.T, def []byte) []string {
	t.Helper()
	var root any
	if err := json.Unmarshal(def, &root); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["Type"] == "Task" && v["Resource"] == "arn:aws:states:::lambda:invoke" {
				p, _ := v["Parameters"].(map[string]any)
				out = append(out, fmt.Sprint(p["FunctionName"]))
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return out
}

// TestWorkflowsCallTheirStacksFunctions fills every workflow's placeholders as each of two
// stacks' DefinitionSubstitutions would and as the device does: on a stack every placeholder is
// filled, every lambda:invoke names a function that stack deploys (never the other's), and on
// the device every placeholder is filled with a function name the device registers.
func TestWorkflowsCallTheirStacksFunctions(t *testing.T) {
	data := readTemplate(t)
	tm, err := parseTemplate(data)
	if err != nil {
		t.Fatal(err)
	}
	deviceNames := map[string]bool{}
	for _, n := range assets.DeviceFunctions {
		deviceNames[n] = true
	}
	stacks := []Stack{namedStack("jobdesk"), namedStack("jobdesk-test")}
	deployed := make([]map[string]string, len(stacks))
	for i, s := range stacks {
		deployed[i] = deployedNames(t, data, s)
	}
	calls := 0
	for wf, def := range shippedWorkflows(t) {
		id := pascal(wf) + "StateMachine"
		subs, _ := tm.props(id)["DefinitionSubstitutions"].(map[string]any)
		for i, s := range stacks {
			r := &resolver{t: tm, s: s}
			vars := map[string]string{}
			for name, v := range subs {
				if vars[name], err = r.value(v, nil); err != nil {
					t.Fatalf("%s: %s: %v", id, name, err)
				}
			}
			out, err := assets.Substitute(def, vars)
			if err != nil {
				t.Errorf("workflow %s on stack %q: %v", wf, s.Name, err)
				continue
			}
			for _, fn := range invokedFunctions(t, out) {
				calls++
				if _, ok := deployed[i]["AWS::Serverless::Function "+fn]; !ok {
					t.Errorf("workflow %s on stack %q calls %q, which the stack does not deploy", wf, s.Name, fn)
				}
				if _, ok := deployed[1-i]["AWS::Serverless::Function "+fn]; ok {
					t.Errorf("workflow %s on stack %q calls %q, the other stack's function", wf, s.Name, fn)
				}
			}
		}
		out, err := assets.Substitute(def, assets.DeviceSubstitutions("local", "000000000000"))
		if err != nil {
			t.Errorf("workflow %s on the device: %v", wf, err)
			continue
		}
		for _, fn := range invokedFunctions(t, out) {
			if !deviceNames[fn] {
				t.Errorf("workflow %s on the device calls %q, which is not a device function", wf, fn)
			}
		}
	}
	if calls == 0 {
		t.Fatal("no workflow calls a function")
	}
}

// TestGrantsFollowTheStacksNames: the grants that name functions and log groups name this
// stack's (STACK-csv-processor, /aws/lambda/STACK-csv-processor), never a fixed name or another
// stack's.
func TestGrantsFollowTheStacksNames(t *testing.T) {
	p, err := ReadPolicy(readTemplate(t), namedStack("jobdesk"))
	if err != nil {
		t.Fatal(err)
	}
	fn := func(name string) string { return "arn:aws:lambda:ap-northeast-1:123456789012:function:" + name }
	logs := func(name string) string {
		return "arn:aws:logs:ap-northeast-1:123456789012:log-group:/aws/lambda/" + name + ":log-stream:2026/11/28/x"
	}
	cases := []struct {
		principal, action, resource string
		ok                          bool
	}{
		{StateMachinesPrincipal, "lambda:InvokeFunction", fn("jobdesk-csv-processor"), true},
		{StateMachinesPrincipal, "lambda:InvokeFunction", fn("jobdesk-ai-goal-status"), true},
		{StateMachinesPrincipal, "lambda:InvokeFunction", fn("csv-processor"), false},
		{StateMachinesPrincipal, "lambda:InvokeFunction", fn("jobdesk-test-csv-processor"), false},
		{FunctionPrincipal("csv-processor"), "logs:PutLogEvents", logs("jobdesk-csv-processor"), true},
		{FunctionPrincipal("csv-processor"), "logs:PutLogEvents", logs("csv-processor"), false},
		{FunctionPrincipal("csv-processor"), "logs:PutLogEvents", logs("jobdesk-test-csv-processor"), false},
		{FunctionPrincipal("ai-caption-generation"), "logs:CreateLogStream", logs("jobdesk-ai-caption-generation"), true},
	}
	for _, c := range cases {
		if ok, _ := p.Allowed(c.principal, c.action, c.resource); ok != c.ok {
			t.Errorf("%s %s %s: allowed=%v, want %v", c.principal, c.action, c.resource, ok, c.ok)
		}
	}
}
