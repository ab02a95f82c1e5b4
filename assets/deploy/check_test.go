package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/awslabs/goformation/v7"

	"jobdesk/assets"
	"jobdesk/engine/flow"
)

// The check below reads the template twice: goformation parses it into typed resources (a
// misspelt property or a wrong type fails there), and our own YAML reading keeps every
// intrinsic function (goformation's processing turns !GetAtt into nil), so references and IAM
// scopes are checked on what CloudFormation will see.

// pseudoParameters are the Refs CloudFormation itself defines.
var pseudoParameters = map[string]bool{
	"AWS::AccountId": true, "AWS::NotificationARNs": true, "AWS::NoValue": true, "AWS::Partition": true,
	"AWS::Region": true, "AWS::StackId": true, "AWS::StackName": true, "AWS::URLSuffix": true,
}

// wildcardActions may only be granted on Resource "*": AWS does not scope them to a resource.
// Step Functions' CloudWatch Logs delivery (vended logs) is the only such need here.
var wildcardActions = map[string]bool{
	"logs:CreateLogDelivery": true, "logs:GetLogDelivery": true, "logs:UpdateLogDelivery": true,
	"logs:DeleteLogDelivery": true, "logs:ListLogDeliveries": true, "logs:PutResourcePolicy": true,
	"logs:DescribeResourcePolicies": true, "logs:DescribeLogGroups": true,
	// The desktop's question whether the Bedrock model is enabled (cloud status): it reveals
	// nothing but that, and AWS documents no resource type to scope it to.
	"bedrock:GetFoundationModelAvailability": true,
}

// externalResources are the IAM resources outside this stack a statement may name, each exact:
// the Bedrock model the AI functions call (chosen by a parameter).
var externalResources = map[string]bool{
	"arn:${AWS::Partition}:bedrock:${ModelRegion}::foundation-model/${BedrockModelId}": true,
}

// knownWorkflowARNs are ARNs written into a workflow file that do not belong to this stack:
// none. A workflow names a stack's resource through a ${Placeholder} its state machine's
// DefinitionSubstitutions fills (and assets.DeviceSubstitutions on the device).
var knownWorkflowARNs = map[string]bool{}

// jobQueue is one queue of the specifications: seed 003 1-2 (visibility timeout, 4 days) and
// seed 002 (caption generation, which gives no timeout: its function's 300 s).
type jobQueue struct {
	jobType    string
	name       string // <name>-queue, dlq-<name>
	visibility int
	consumer   string // the function an SQS event source mapping feeds, if any
}

var jobQueues = []jobQueue{
	{"SUBSIDY_SYNC", "subsidy-sync", 300, ""},
	{"ATTACHMENT_INGEST", "attachment-ingest", 600, ""},
	{"ATTACHMENT_CONVERT", "attachment-convert", 900, "document-converter"},
	{"ELIGIBILITY_EXTRACT", "eligibility-extract", 900, "ai-eligibility-extract"},
	{"EVALUATION", "evaluation", 300, ""},
	{"NOTIFICATION", "notification", 120, ""},
	{"CAPTION_GENERATION", "caption-generation", 300, "ai-caption-generation"},
}

const (
	queueRetention = 345600  // 4 days
	dlqRetention   = 1209600 // 14 days
	maxReceives    = 3
	codeURI        = "../../dist/lambda-arm64.zip"
)

// pascal turns csv-processing or ATTACHMENT_CONVERT into CsvProcessing / AttachmentConvert:
// the logical IDs and output keys are built from it.
func pascal(s string) string {
	var b strings.Builder
	for _, p := range regexp.MustCompile(`[-_]`).Split(strings.ToLower(s), -1) {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// ---- the check ----

type checker struct {
	t         *tmpl
	workflows map[string][]byte
	device    map[string]string // the placeholders' values on the device
	errs      []string
}

func (c *checker) errorf(format string, a ...any) { c.errs = append(c.errs, fmt.Sprintf(format, a...)) }

// checkTemplate runs every check on a template and the workflow files it must deploy
// (name → ASL); it returns one message per problem.
func checkTemplate(data []byte, workflows map[string][]byte) []string {
	return checkTemplateDevice(data, workflows, assets.DeviceSubstitutions("local", "000000000000"))
}

// checkTemplateDevice is checkTemplate with the device's placeholder values given.
func checkTemplateDevice(data []byte, workflows map[string][]byte, device map[string]string) []string {
	c := &checker{workflows: workflows, device: device}
	c.goformation(data)
	t, err := parseTemplate(data)
	if err != nil {
		return append(c.errs, "YAML: "+err.Error())
	}
	c.t = t
	c.references()
	c.iam()
	functions := c.functions()
	c.stateMachines(functions)
	c.queues()
	c.lifecycle()
	c.bucket()
	c.alarms()
	c.outputs()
	return c.errs
}

// goformation parses the template into typed resources; it rejects an unknown or misspelt
// property and a value of the wrong type.
func (c *checker) goformation(data []byte) {
	ft, err := goformation.ParseYAML(data)
	if err != nil {
		c.errorf("goformation: %v", err)
		return
	}
	if ft.Transform == nil || ft.Transform.String == nil || *ft.Transform.String != "AWS::Serverless-2016-10-31" {
		c.errorf("goformation: the template must use the AWS::Serverless-2016-10-31 transform")
	}
}

// references: every Ref, GetAtt, Sub variable, condition and DependsOn names something that exists.
func (c *checker) references() {
	for _, sec := range []string{"Resources", "Outputs", "Conditions", "Globals"} {
		c.walkRefs(sec, c.t.root[sec], nil)
	}
	for id, r := range c.t.resources {
		if cond, ok := r["Condition"].(string); ok && c.t.conditions[cond] == nil {
			c.errorf("%s: Condition %q is not defined", id, cond)
		}
		deps := r["DependsOn"]
		if s, ok := deps.(string); ok {
			deps = []any{s}
		}
		ds, _ := deps.([]any)
		for _, d := range ds {
			if _, ok := c.t.resources[fmt.Sprint(d)]; !ok {
				c.errorf("%s: DependsOn %v is not a resource", id, d)
			}
		}
	}
}

// subRefs returns the ${…} names of a Sub string (${!Literal} excluded).
func subRefs(s string) []string {
	var out []string
	for _, m := range subVar.FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "!") {
			out = append(out, m[1])
		}
	}
	return out
}

func (c *checker) refExists(where, name string, local map[string]any) {
	if _, ok := local[name]; ok {
		return
	}
	if pseudoParameters[name] || c.t.parameters[name] != nil || c.t.resources[name] != nil {
		return
	}
	c.errorf("%s: Ref %q names no resource, parameter or pseudo parameter", where, name)
}

func (c *checker) getAttExists(where, id, attr string) {
	r, ok := c.t.resources[id]
	if !ok {
		c.errorf("%s: GetAtt %s.%s names no resource", where, id, attr)
		return
	}
	typ, _ := r["Type"].(string)
	attrs, known := attributes[typ]
	if !known {
		c.errorf("%s: GetAtt %s.%s on a %s, whose attributes this check does not know", where, id, attr, typ)
		return
	}
	if !slices.Contains(attrs, attr) {
		c.errorf("%s: GetAtt %s.%s: a %s has no attribute %q (it has %s)", where, id, attr, typ, attr, strings.Join(attrs, ", "))
	}
}

// attributes are the GetAtt attributes of the resource types the template may use.
var attributes = map[string][]string{
	"AWS::S3::Bucket":                 {"Arn", "DomainName", "RegionalDomainName", "WebsiteURL", "DualStackDomainName"},
	"AWS::SQS::Queue":                 {"Arn", "QueueName", "QueueUrl"},
	"AWS::IAM::Role":                  {"Arn", "RoleId"},
	"AWS::IAM::ManagedPolicy":         {"PolicyArn"},
	"AWS::Logs::LogGroup":             {"Arn"},
	"AWS::Events::Rule":               {"Arn"},
	"AWS::SNS::Topic":                 {"TopicArn", "TopicName"},
	"AWS::Serverless::Function":       {"Arn"},
	"AWS::Serverless::StateMachine":   {"Arn", "Name"},
	"AWS::Lambda::EventSourceMapping": {"Id"},
	"AWS::CloudWatch::Alarm":          {"Arn"},
}

func (c *checker) walkRefs(where string, v any, local map[string]any) {
	switch v := v.(type) {
	case []any:
		for i, x := range v {
			c.walkRefs(fmt.Sprintf("%s[%d]", where, i), x, local)
		}
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				switch k {
				case "Ref":
					c.refExists(where, fmt.Sprint(arg), local)
					return
				case "Fn::GetAtt":
					a, _ := arg.([]any)
					if len(a) != 2 {
						c.errorf("%s: GetAtt needs RESOURCE.ATTRIBUTE, got %v", where, arg)
						return
					}
					c.getAttExists(where, fmt.Sprint(a[0]), fmt.Sprint(a[1]))
					return
				case "Fn::Sub":
					str, vars := arg, map[string]any(nil)
					if a, ok := arg.([]any); ok && len(a) == 2 {
						str = a[0]
						vars, _ = a[1].(map[string]any)
						c.walkRefs(where+".Sub", a[1], local)
					}
					s, ok := str.(string)
					if !ok {
						c.errorf("%s: Sub needs a string", where)
						return
					}
					for _, name := range subRefs(s) {
						if _, ok := vars[name]; ok {
							continue
						}
						if id, attr, ok := strings.Cut(name, "."); ok {
							c.getAttExists(where, id, attr)
						} else {
							c.refExists(where, name, local)
						}
					}
					return
				case "Fn::If", "Condition":
					name := arg
					if a, ok := arg.([]any); ok && k == "Fn::If" {
						if len(a) != 3 {
							c.errorf("%s: If needs [condition, then, else]", where)
							return
						}
						name = a[0]
						c.walkRefs(where+".If", a[1:], local)
					}
					if c.t.conditions[fmt.Sprint(name)] == nil {
						c.errorf("%s: condition %v is not defined", where, name)
					}
					return
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c.walkRefs(where+"."+k, v[k], local)
		}
	}
}

// ---- IAM ----

// statements returns every policy statement of the template with where it sits.
func (c *checker) statements() map[string]map[string]any {
	out := map[string]map[string]any{}
	add := func(where string, doc any) {
		d, _ := doc.(map[string]any)
		sts, _ := d["Statement"].([]any)
		for i, s := range sts {
			m, _ := s.(map[string]any)
			name := fmt.Sprintf("%s statement %d", where, i)
			if sid, ok := m["Sid"].(string); ok {
				name = where + " " + sid
			}
			out[name] = m
		}
	}
	for id, r := range c.t.resources {
		p := c.t.props(id)
		switch r["Type"] {
		case "AWS::IAM::Role":
			pols, _ := p["Policies"].([]any)
			for _, pol := range pols {
				m, _ := pol.(map[string]any)
				add(id, m["PolicyDocument"])
			}
			if _, ok := p["ManagedPolicyArns"]; ok {
				for _, a := range list(p["ManagedPolicyArns"]) {
					if !c.isStackResource(a) {
						c.errorf("%s: ManagedPolicyArns %v is not a policy of this stack (AWS managed policies grant on \"*\")", id, a)
					}
				}
			}
		case "AWS::IAM::ManagedPolicy", "AWS::IAM::Policy", "AWS::SQS::QueuePolicy", "AWS::S3::BucketPolicy":
			add(id, p["PolicyDocument"])
		case "AWS::Serverless::Function", "AWS::Serverless::StateMachine":
			if _, ok := p["Policies"]; ok {
				c.errorf("%s: SAM Policies would create a role this check cannot see; give it a Role", id)
			}
			if _, ok := p["Role"]; !ok {
				c.errorf("%s: needs an explicit Role (SAM would create one)", id)
			}
		}
	}
	return out
}

func (c *checker) isStackResource(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if r, ok := m["Ref"].(string); ok {
		return c.t.resources[r] != nil
	}
	if a, ok := m["Fn::GetAtt"].([]any); ok && len(a) == 2 {
		return c.t.resources[fmt.Sprint(a[0])] != nil
	}
	return false
}

// scoped tells whether an IAM Resource entry names this stack's resources only.
func (c *checker) scoped(v any, actions []string) (bool, string) {
	switch v := v.(type) {
	case string:
		if v == "*" {
			for _, a := range actions {
				if !wildcardActions[a] {
					return false, fmt.Sprintf("Resource \"*\" for %s, which AWS scopes to resources", a)
				}
			}
			return true, ""
		}
		return false, fmt.Sprintf("literal Resource %q is not one of this stack's resources", v)
	case map[string]any:
		if c.isStackResource(v) {
			return true, ""
		}
		if a, ok := v["Fn::If"].([]any); ok && len(a) == 3 {
			for _, b := range a[1:] {
				if ok, why := c.scoped(b, actions); !ok {
					return false, why
				}
			}
			return true, ""
		}
		if sub, ok := v["Fn::Sub"]; ok {
			s, _ := sub.(string)
			if a, ok := sub.([]any); ok && len(a) == 2 {
				s, _ = a[0].(string)
			}
			if externalResources[s] {
				return true, ""
			}
			// The first reference to a resource of this stack (or to the stack's name, which
			// prefixes every name it gives) must come before any wildcard.
			firstOwn, star := -1, strings.Index(s, "*")
			for _, m := range subVar.FindAllStringSubmatchIndex(s, -1) {
				name := s[m[2]:m[3]]
				id, _, _ := strings.Cut(name, ".")
				if name == "AWS::StackName" || c.t.resources[id] != nil {
					firstOwn = m[0]
					break
				}
			}
			if firstOwn < 0 {
				return false, fmt.Sprintf("Resource %q names nothing of this stack", s)
			}
			if star >= 0 && star < firstOwn {
				return false, fmt.Sprintf("Resource %q has a wildcard before the stack's own name", s)
			}
			return true, ""
		}
		if r, ok := v["Ref"].(string); ok {
			return false, fmt.Sprintf("Resource Ref %q is a parameter, not a resource of this stack", r)
		}
	}
	return false, fmt.Sprintf("Resource %v is not one of this stack's resources", v)
}

func strs(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func (c *checker) iam() {
	stmts := c.statements()
	for _, where := range slices.Sorted(maps.Keys(stmts)) {
		st := stmts[where]
		if _, ok := st["NotResource"]; ok {
			c.errorf("%s: NotResource is not allowed", where)
		}
		if _, ok := st["NotAction"]; ok {
			c.errorf("%s: NotAction is not allowed", where)
		}
		deny := st["Effect"] == "Deny"
		actions := strs(st["Action"])
		if len(actions) == 0 {
			c.errorf("%s: no Action", where)
		}
		for _, a := range actions {
			if !deny && (a == "*" || strings.HasSuffix(a, ":*")) {
				c.errorf("%s: Action %q grants a whole service", where, a)
			}
		}
		if p, ok := st["Principal"]; ok && !deny {
			if p == "*" || fmt.Sprint(p) == "map[AWS:*]" {
				c.errorf("%s: Principal \"*\" in an Allow statement", where)
			}
		}
		res := list(st["Resource"])
		if len(res) == 0 {
			c.errorf("%s: no Resource", where)
		}
		for _, r := range res {
			if ok, why := c.scoped(r, actions); !ok {
				c.errorf("%s: %s", where, why)
			}
		}
	}
}

// ---- functions and state machines ----

// functions checks the Lambda functions and returns them by name (JOBDESK_FUNCTION) → logical ID.
func (c *checker) functions() map[string]string {
	g, _ := c.t.root["Globals"].(map[string]any)
	gf, _ := g["Function"].(map[string]any)
	want := map[string]any{"Runtime": "provided.al2023", "Handler": "bootstrap"}
	for k, v := range want {
		if gf[k] != v {
			c.errorf("Globals.Function.%s = %v, want %v", k, gf[k], v)
		}
	}
	// `aws cloudformation package` reads no Globals: a CodeUri there is never uploaded, and a
	// function without its own is packaged as the template's folder.
	if _, ok := gf["CodeUri"]; ok {
		c.errorf("Globals.Function.CodeUri: `aws cloudformation package` does not read Globals; give each function CodeUri %s", codeURI)
	}
	if a := strs(gf["Architectures"]); !slices.Equal(a, []string{"arm64"}) {
		c.errorf("Globals.Function.Architectures = %v, want [arm64]", a)
	}
	out := map[string]string{}
	for _, id := range c.t.ofType("AWS::Serverless::Function") {
		p := c.t.props(id)
		for k := range want {
			if _, ok := p[k]; ok {
				c.errorf("%s: %s must come from Globals (one zip backs every function)", id, k)
			}
		}
		if p["CodeUri"] != codeURI {
			c.errorf("%s: CodeUri %v, want %s (the one zip; package reads no Globals)", id, p["CodeUri"], codeURI)
		}
		// The function is known by the name it serves (JOBDESK_FUNCTION, the device's name for
		// it); it is deployed as STACK-NAME so that two stacks share an account and region.
		env, _ := p["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		name, ok := vars["JOBDESK_FUNCTION"].(string)
		if !ok || name == "" {
			c.errorf("%s: Environment JOBDESK_FUNCTION must name the function the bootstrap serves", id)
			continue
		}
		if id != pascal(name)+"Function" {
			c.errorf("%s: a function named %s has the logical ID %sFunction", id, name, pascal(name))
		}
		if fn, _ := p["FunctionName"].(map[string]any); fmt.Sprint(fn["Fn::Sub"]) != "${AWS::StackName}-"+name {
			c.errorf("%s: FunctionName %v, want !Sub \"${AWS::StackName}-%s\" (a fixed name collides with a second stack)", id, p["FunctionName"], name)
		}
		lg := c.t.props(id + "LogGroup")
		if c.t.resources[id+"LogGroup"]["Type"] != "AWS::Logs::LogGroup" {
			c.errorf("%s: needs its log group %sLogGroup", id, id)
		} else if n, _ := lg["LogGroupName"].(map[string]any); fmt.Sprint(n["Fn::Sub"]) != "/aws/lambda/${AWS::StackName}-"+name {
			c.errorf("%sLogGroup: LogGroupName %v, want !Sub \"/aws/lambda/${AWS::StackName}-%s\" (the group Lambda writes to)", id, lg["LogGroupName"], name)
		}
		if to, ok := p["Timeout"].(int); !ok || to < 1 || to > 900 {
			c.errorf("%s: Timeout %v must be 1–900 seconds", id, p["Timeout"])
		}
		out[name] = id
	}
	for _, id := range c.t.ofType("AWS::Lambda::Function") {
		c.errorf("%s: use AWS::Serverless::Function with the shared Globals", id)
	}
	return out
}

// workflowUses is what one workflow file needs from the stack.
type workflowUses struct {
	functions    map[string]bool // the lambda:invoke FunctionNames, as written ("${CsvProcessorFunction}")
	sns, s3Read  bool
	distributed  bool
	hardcodedARN []string
}

func readWorkflow(def []byte) (workflowUses, error) {
	var root any
	if err := json.Unmarshal(def, &root); err != nil {
		return workflowUses{}, err
	}
	u := workflowUses{functions: map[string]bool{}}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["Type"] == "Task" {
				res, _ := v["Resource"].(string)
				switch {
				case res == "arn:aws:states:::lambda:invoke":
					p, _ := v["Parameters"].(map[string]any)
					if name, ok := p["FunctionName"].(string); ok {
						u.functions[name] = true
					} else {
						u.functions["(FunctionName not a literal)"] = true
					}
				case strings.HasPrefix(res, "arn:aws:lambda:"):
					// A function named in the Resource is fixed: it cannot follow the stack.
					u.hardcodedARN = append(u.hardcodedARN, res)
				case res == "arn:aws:states:::sns:publish":
					u.sns = true
				}
			}
			if r, ok := v["ItemReader"].(map[string]any); ok && r["Resource"] == "arn:aws:states:::s3:getObject" {
				u.s3Read = true
			}
			if pc, ok := v["ProcessorConfig"].(map[string]any); ok && pc["Mode"] == "DISTRIBUTED" {
				u.distributed = true
			}
			for k, x := range v {
				if s, ok := x.(string); ok && k != "Resource" && strings.HasPrefix(s, "arn:") {
					u.hardcodedARN = append(u.hardcodedARN, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return u, nil
}

func (c *checker) stateMachines(functions map[string]string) {
	fnByID := map[string]string{}
	for name, id := range functions {
		fnByID[id] = name
	}
	machines := map[string]string{} // workflow → logical ID
	for _, id := range c.t.ofType("AWS::Serverless::StateMachine") {
		p := c.t.props(id)
		for _, inline := range []string{"Definition", "DefinitionString", "DefinitionS3Location"} {
			if _, ok := p[inline]; ok {
				c.errorf("%s: %s: the definition must come from its assets/workflows file through DefinitionUri", id, inline)
			}
		}
		uri, _ := p["DefinitionUri"].(string)
		wf, ok := strings.CutSuffix(strings.TrimPrefix(uri, "../workflows/"), ".asl.json")
		if !ok || !strings.HasPrefix(uri, "../workflows/") {
			c.errorf("%s: DefinitionUri %v is not ../workflows/NAME.asl.json", id, p["DefinitionUri"])
			continue
		}
		if _, ok := c.workflows[wf]; !ok {
			c.errorf("%s: DefinitionUri names %s, which is not a file of assets/workflows", id, uri)
			continue
		}
		if prev, dup := machines[wf]; dup {
			c.errorf("%s and %s both deploy workflow %s", prev, id, wf)
		}
		machines[wf] = id
		if id != pascal(wf)+"StateMachine" {
			c.errorf("%s: the state machine of %s has the logical ID %sStateMachine", id, wf, pascal(wf))
		}
		if name, _ := p["Name"].(map[string]any); fmt.Sprint(name["Fn::Sub"]) != "${AWS::StackName}-"+wf {
			c.errorf("%s: Name must be !Sub \"${AWS::StackName}-%s\" (the roles build its ARN from it)", id, wf)
		}
	}
	for _, id := range c.t.ofType("AWS::StepFunctions::StateMachine") {
		c.errorf("%s: use AWS::Serverless::StateMachine with DefinitionUri", id)
	}
	stmts := c.statements()
	for _, wf := range slices.Sorted(maps.Keys(c.workflows)) {
		id, ok := machines[wf]
		if !ok {
			c.errorf("workflow %s has no state machine in the template", wf)
			continue
		}
		def := c.workflows[wf]
		for _, d := range flow.Validate(def, func(r string) error {
			if strings.HasPrefix(r, "arn:aws:lambda:") {
				parts := strings.Split(r, ":")
				if _, ok := functions[parts[len(parts)-1]]; !ok {
					return fmt.Errorf("the template deploys no function %q", parts[len(parts)-1])
				}
				return nil
			}
			if r == "arn:aws:states:::lambda:invoke" || r == "arn:aws:states:::sns:publish" {
				return nil
			}
			return fmt.Errorf("the template grants nothing for %q", r)
		}) {
			if d.Severity == "ERROR" {
				c.errorf("workflow %s: %s: %s at %s", wf, d.Code, d.Message, d.Location)
			}
		}
		uses, err := readWorkflow(def)
		if err != nil {
			c.errorf("workflow %s: %v", wf, err)
			continue
		}
		for _, a := range uses.hardcodedARN {
			if !knownWorkflowARNs[wf+" "+a] {
				c.errorf("workflow %s names %s, which is not a resource of this stack (use a DefinitionSubstitutions ${…})", wf, a)
			}
		}
		// Placeholders: the state machine substitutes exactly the workflow's, each with a
		// resource of this stack, and the device has a value for each.
		subs, _ := c.t.props(id)["DefinitionSubstitutions"].(map[string]any)
		used := assets.Placeholders(def)
		device := c.device
		for _, name := range used {
			v, ok := subs[name]
			if !ok {
				c.errorf("%s: workflow %s names ${%s}, which its DefinitionSubstitutions does not fill", id, wf, name)
			} else if !c.isStackResource(v) {
				c.errorf("%s: DefinitionSubstitutions %s = %v is not a resource of this stack", id, name, v)
			}
			if _, ok := device[name]; !ok {
				c.errorf("workflow %s names ${%s}, which the device cannot fill (assets.DeviceSubstitutions)", wf, name)
			}
		}
		for name := range subs {
			if !slices.Contains(used, name) {
				c.errorf("%s: DefinitionSubstitutions %s is not a placeholder of workflow %s", id, name, wf)
			}
		}
		// The role: exactly the functions the workflow calls, and what its other states need.
		role := ""
		if r, ok := c.t.props(id)["Role"].(map[string]any); ok {
			if a, ok := r["Fn::GetAtt"].([]any); ok {
				role = fmt.Sprint(a[0])
			}
		}
		if c.t.resources[role]["Type"] != "AWS::IAM::Role" {
			c.errorf("%s: Role must be !GetAtt ROLE.Arn of a role in this template", id)
			continue
		}
		invokes, actions := map[string]bool{}, map[string]bool{}
		for where, st := range stmts {
			if !strings.HasPrefix(where, role+" ") || st["Effect"] != "Allow" {
				continue
			}
			for _, a := range strs(st["Action"]) {
				actions[a] = true
				if a != "lambda:InvokeFunction" {
					continue
				}
				for _, r := range list(st["Resource"]) {
					m, _ := r.(map[string]any)
					ga, _ := m["Fn::GetAtt"].([]any)
					if len(ga) != 2 || fnByID[fmt.Sprint(ga[0])] == "" {
						c.errorf("%s: lambda:InvokeFunction on %v, not on one of the template's functions", role, r)
						continue
					}
					invokes[fnByID[fmt.Sprint(ga[0])]] = true
				}
			}
		}
		// Each lambda:invoke names its function through a placeholder that the state machine
		// fills with this stack's function and the device with the same function's name.
		called := map[string]bool{}
		for raw := range uses.functions {
			ph := strings.TrimSuffix(strings.TrimPrefix(raw, "${"), "}")
			if !slices.Equal(assets.Placeholders([]byte(raw)), []string{ph}) || raw != "${"+ph+"}" {
				c.errorf("workflow %s calls function %q: name it through a placeholder, ${LogicalIdOfTheFunction}, its state machine's DefinitionSubstitutions fills (a fixed name collides with a second stack)", wf, raw)
				continue
			}
			v, filled := subs[ph]
			if !filled {
				continue // said above
			}
			target := ""
			if m, ok := v.(map[string]any); ok {
				if r, ok := m["Ref"].(string); ok {
					target = r
				} else if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) == 2 && ga[1] == "Arn" {
					target = fmt.Sprint(ga[0])
				}
			}
			name, isFn := fnByID[target]
			if !isFn {
				c.errorf("%s: workflow %s calls function %s, which the template does not deploy (DefinitionSubstitutions gives %v)", id, wf, raw, v)
				continue
			}
			if target != ph {
				c.errorf("%s: DefinitionSubstitutions fills ${%s} with %s; a function's placeholder is its logical ID", id, ph, target)
			}
			if dev, ok := device[ph]; ok && dev != name {
				c.errorf("workflow %s: the device fills ${%s} with %q, but the stack with its function %s", wf, ph, dev, name)
			}
			called[name] = true
		}
		for f := range called {
			if !invokes[f] {
				c.errorf("%s: workflow %s calls %s, which its role may not invoke", role, wf, f)
			}
		}
		for f := range invokes {
			if !called[f] {
				c.errorf("%s: may invoke %s, which workflow %s never calls", role, f, wf)
			}
		}
		need := map[string]bool{"sns:Publish": uses.sns, "s3:GetObject": uses.s3Read, "states:StartExecution": uses.distributed}
		for a, needed := range need {
			if needed != actions[a] {
				c.errorf("%s: %s granted=%v but workflow %s needs it=%v", role, a, actions[a], wf, needed)
			}
		}
	}
	// The status rule listens to exactly these state machines.
	rule := c.t.props("ExecutionStatusRule")
	pat, _ := rule["EventPattern"].(map[string]any)
	det, _ := pat["detail"].(map[string]any)
	var listened []string
	for _, a := range list(det["stateMachineArn"]) {
		m, _ := a.(map[string]any)
		listened = append(listened, fmt.Sprint(m["Ref"]))
	}
	sort.Strings(listened)
	want := slices.Sorted(maps.Values(machines))
	if !slices.Equal(listened, want) || fmt.Sprint(pat["source"]) != "[aws.states]" ||
		fmt.Sprint(pat["detail-type"]) != "[Step Functions Execution Status Change]" {
		c.errorf("ExecutionStatusRule must match aws.states \"Step Functions Execution Status Change\" of %v, got %v", want, pat)
	}
	targets := list(rule["Targets"])
	if len(targets) != 1 || !refersTo(targets[0].(map[string]any)["Arn"], "StatusQueue") {
		c.errorf("ExecutionStatusRule must target the StatusQueue")
	}
	pol := c.t.props("StatusQueuePolicy")
	if !refersTo(list(pol["Queues"]), "StatusQueue") || !strings.Contains(fmt.Sprint(pol["PolicyDocument"]), "events.amazonaws.com") {
		c.errorf("StatusQueuePolicy must let events.amazonaws.com send to the StatusQueue")
	}
}

// refersTo tells whether v (or an element of it) is a Ref or GetAtt of the resource id.
func refersTo(v any, id string) bool {
	for _, x := range list(v) {
		m, _ := x.(map[string]any)
		if m["Ref"] == id {
			return true
		}
		if a, ok := m["Fn::GetAtt"].([]any); ok && len(a) == 2 && a[0] == id {
			return true
		}
	}
	return false
}

// ---- queues, bucket, alarms, outputs ----

func (c *checker) queue(id string, vis, retention int, dlq string) {
	p := c.t.props(id)
	if c.t.resources[id]["Type"] != "AWS::SQS::Queue" {
		c.errorf("queue %s is missing", id)
		return
	}
	if vis > 0 && p["VisibilityTimeout"] != vis {
		c.errorf("%s: VisibilityTimeout %v, the specification says %d", id, p["VisibilityTimeout"], vis)
	}
	if p["MessageRetentionPeriod"] != retention {
		c.errorf("%s: MessageRetentionPeriod %v, the specification says %d", id, p["MessageRetentionPeriod"], retention)
	}
	if _, fifo := p["FifoQueue"]; fifo {
		c.errorf("%s: the specifications name no FIFO queue", id)
	}
	if p["SqsManagedSseEnabled"] != true && p["KmsMasterKeyId"] == nil {
		c.errorf("%s: not encrypted", id)
	}
	if dlq == "" {
		return
	}
	rp, _ := p["RedrivePolicy"].(map[string]any)
	if rp["maxReceiveCount"] != maxReceives || !refersTo(rp["deadLetterTargetArn"], dlq) {
		c.errorf("%s: RedrivePolicy must send to %s after %d receives, got %v", id, dlq, maxReceives, rp)
	}
	c.queue(dlq, 0, dlqRetention, "")
}

func (c *checker) queues() {
	mappings := map[string]map[string]any{}
	for _, id := range c.t.ofType("AWS::Lambda::EventSourceMapping") {
		p := c.t.props(id)
		m, _ := p["EventSourceArn"].(map[string]any)
		a, _ := m["Fn::GetAtt"].([]any)
		if len(a) == 2 {
			mappings[fmt.Sprint(a[0])] = p
		}
	}
	for _, q := range jobQueues {
		id := pascal(q.name) + "Queue"
		c.queue(id, q.visibility, queueRetention, pascal(q.name)+"DeadLetterQueue")
		esm, ok := mappings[id]
		delete(mappings, id)
		if q.consumer == "" {
			if ok {
				c.errorf("%s: no function of this stack serves %s, yet an event source mapping reads it", id, q.jobType)
			}
			continue
		}
		fn := pascal(q.consumer) + "Function"
		if !ok || !refersTo(esm["FunctionName"], fn) {
			c.errorf("%s: needs an event source mapping to %s", id, fn)
			continue
		}
		if !slices.Contains(strs(esm["FunctionResponseTypes"]), "ReportBatchItemFailures") {
			c.errorf("%s: the event source mapping must report batch item failures", id)
		}
		if to, _ := c.t.props(fn)["Timeout"].(int); to > q.visibility {
			c.errorf("%s: %s runs up to %d s, longer than the queue's visibility timeout %d s", id, fn, to, q.visibility)
		}
	}
	for id := range mappings {
		c.errorf("an event source mapping reads %s, which is not a job queue of the specifications", id)
	}
	c.queue("StatusQueue", 0, queueRetention, "StatusDeadLetterQueue")
}

// lifecycle: queues and log groups say what deleting or replacing the stack does to them
// (DeletionPolicy and UpdateReplacePolicy chosen, not left to CloudFormation's default).
func (c *checker) lifecycle() {
	for _, typ := range []string{"AWS::SQS::Queue", "AWS::Logs::LogGroup", "AWS::S3::Bucket"} {
		for _, id := range c.t.ofType(typ) {
			r := c.t.resources[id]
			for _, k := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
				if v, _ := r[k].(string); v != "Delete" && v != "Retain" && v != "RetainExceptOnCreate" {
					c.errorf("%s: %s must be chosen (Delete or Retain), got %v", id, k, r[k])
				}
			}
		}
	}
}

func (c *checker) bucket() {
	p := c.t.props("Bucket")
	if c.t.resources["Bucket"]["Type"] != "AWS::S3::Bucket" {
		c.errorf("the template has no Bucket")
		return
	}
	if !strings.Contains(fmt.Sprint(p["BucketEncryption"]), "SSEAlgorithm") {
		c.errorf("Bucket: no server-side encryption")
	}
	pab, _ := p["PublicAccessBlockConfiguration"].(map[string]any)
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if pab[k] != true {
			c.errorf("Bucket: PublicAccessBlockConfiguration.%s must be true", k)
		}
	}
	lc, _ := p["LifecycleConfiguration"].(map[string]any)
	expires := map[string]any{}
	for _, r := range list(lc["Rules"]) {
		m, _ := r.(map[string]any)
		if pre, ok := m["Prefix"].(map[string]any); ok && m["Status"] == "Enabled" {
			expires[fmt.Sprint(pre["Fn::Sub"])] = m["ExpirationInDays"]
		}
	}
	for pre, param := range map[string]string{"${Prefix}inputs/": "InputRetentionDays", "${Prefix}history/": "HistoryRetentionDays"} {
		if !refersTo(expires[pre], param) {
			c.errorf("Bucket: objects under %s must expire after %s days", pre, param)
		} else if d, _ := c.t.parameters[param].(map[string]any); d["Default"] != 90 {
			c.errorf("parameter %s must default to the specifications' 90 days", param)
		}
	}
}

func (c *checker) alarms() {
	var alarms []map[string]any
	for _, id := range c.t.ofType("AWS::CloudWatch::Alarm") {
		alarms = append(alarms, c.t.props(id))
	}
	// metric finds an alarm on metric name for the resource id, and returns its threshold.
	metric := func(name, id string) (any, bool) {
		for _, a := range alarms {
			if a["MetricName"] == name && strings.Contains(fmt.Sprint(a["Dimensions"]), "["+id+" ") {
				return a["Threshold"], true
			}
		}
		return nil, false
	}
	rate := func(part, id string) (any, bool) {
		for _, a := range alarms {
			ms := fmt.Sprint(a["Metrics"])
			if strings.Contains(ms, "MetricName:"+part+" ") && strings.Contains(ms, "Ref:"+id+"]") &&
				strings.Contains(ms, "Expression:") {
				return a["Threshold"], true
			}
		}
		return nil, false
	}
	dlqs := []string{"StatusDeadLetterQueue"}
	for _, q := range jobQueues {
		id := pascal(q.name) + "Queue"
		dlqs = append(dlqs, pascal(q.name)+"DeadLetterQueue")
		if _, ok := metric("ApproximateAgeOfOldestMessage", id); !ok {
			c.errorf("%s: no alarm on the age of its oldest message", id)
		}
		if q.consumer != "" {
			fn := pascal(q.consumer) + "Function"
			if th, ok := rate("Errors", fn); !ok || th != 5 {
				c.errorf("%s: needs an error-rate alarm (metric math, > 5 %%)", fn)
			}
		}
	}
	for _, d := range dlqs {
		if th, ok := metric("ApproximateNumberOfMessagesVisible", d); !ok || th != 0 {
			c.errorf("%s: needs an alarm on ApproximateNumberOfMessagesVisible > 0", d)
		}
	}
	// alarm finds an alarm on namespace/metric with statistic stat whose dimensions mention id
	// ("" for none), and returns its threshold.
	alarm := func(namespace, name, stat, id string) (any, bool) {
		for _, a := range alarms {
			dims := fmt.Sprint(a["Dimensions"])
			if a["Namespace"] == namespace && a["MetricName"] == name && a["Statistic"] == stat &&
				((id == "" && a["Dimensions"] == nil) || (id != "" && strings.Contains(dims, id))) {
				return a["Threshold"], true
			}
		}
		return nil, false
	}
	for _, id := range c.t.ofType("AWS::Serverless::StateMachine") {
		// Seed 000: average processing time > 5 minutes (in 5 minutes).
		if th, ok := alarm("AWS/States", "ExecutionTime", "Average", "Ref:"+id+"]"); !ok || th != 300000 {
			c.errorf("%s: needs an alarm on the average ExecutionTime > 300000 ms (seed 000: 平均処理時間 > 5分), got %v", id, th)
		}
	}
	// Seed 001: the generation workflows' execution time > 10 minutes.
	for _, wf := range []string{"subgoal-generation", "action-generation", "task-generation"} {
		id := pascal(wf) + "StateMachine"
		if th, ok := alarm("AWS/States", "ExecutionTime", "Maximum", "Ref:"+id+"]"); !ok || th != 600000 {
			c.errorf("%s: needs an alarm on the maximum ExecutionTime > 600000 ms (seed 001: 実行時間 > 10分), got %v", id, th)
		}
	}
	// Seed 001: AI latency > 5 s (Bedrock's InvocationLatency of the model) and Lambda
	// concurrency > 80 % of the account's limit (metric math over a parameter).
	if th, ok := alarm("AWS/Bedrock", "InvocationLatency", "Average", "Ref:BedrockModelId]"); !ok || th != 5000 {
		c.errorf("needs an alarm on Bedrock InvocationLatency > 5000 ms of BedrockModelId (seed 001: AI API レイテンシ > 5秒), got %v", th)
	}
	concurrency := false
	for _, a := range alarms {
		ms := fmt.Sprint(a["Metrics"])
		if strings.Contains(ms, "MetricName:ConcurrentExecutions") && strings.Contains(ms, "LambdaConcurrencyLimit") && a["Threshold"] == 80 {
			concurrency = true
		}
	}
	if !concurrency {
		c.errorf("needs an alarm on Lambda ConcurrentExecutions > 80 %% of LambdaConcurrencyLimit (seed 001: Lambda同時実行数 > 80%%)")
	}
	for _, id := range c.t.ofType("AWS::Serverless::StateMachine") {
		if th, ok := rate("ExecutionsFailed", id); !ok || th != 5 {
			c.errorf("%s: needs an error-rate alarm (metric math, > 5 %% in 5 minutes)", id)
		}
		if th, ok := rate("ExecutionsTimedOut", id); !ok || th != 10 {
			c.errorf("%s: needs a timeout-rate alarm (metric math, > 10 %% in 5 minutes)", id)
		}
	}
	for _, a := range alarms {
		if !refersTo(a["AlarmActions"], "AlarmTopic") {
			c.errorf("alarm %v does not notify the AlarmTopic", a["AlarmDescription"])
		}
	}
}

// requiredOutputs are the fixed outputs cloud.json is written from (the state machines and
// queues follow the StateMachine<Workflow>, Queue<JobType> and DeadLetterQueue<JobType> scheme).
var requiredOutputs = map[string]string{
	"Region": "AWS::Region", "Bucket": "Bucket", "Prefix": "Prefix", "StatusQueue": "StatusQueue",
	"DeadLetterQueueStatus": "StatusDeadLetterQueue", "DesktopRoleArn": "DesktopRole", "DesktopPolicyArn": "DesktopPolicy",
}

func (c *checker) outputs() {
	value := func(key string) any {
		o, _ := c.t.outputs[key].(map[string]any)
		if o == nil {
			c.errorf("output %s is missing", key)
		}
		return o["Value"]
	}
	for k, id := range requiredOutputs {
		if v := value(k); v != nil && !refersTo(v, id) {
			c.errorf("output %s must be the value of %s, got %v", k, id, v)
		}
	}
	for wf := range c.workflows {
		if v := value("StateMachine" + pascal(wf)); v != nil && !refersTo(v, pascal(wf)+"StateMachine") {
			c.errorf("output StateMachine%s must be the ARN of %sStateMachine", pascal(wf), pascal(wf))
		}
	}
	for _, q := range jobQueues {
		if v := value("Queue" + pascal(q.jobType)); v != nil && !refersTo(v, pascal(q.name)+"Queue") {
			c.errorf("output Queue%s must be the URL of %sQueue", pascal(q.jobType), pascal(q.name))
		}
		if v := value("DeadLetterQueue" + pascal(q.jobType)); v != nil && !refersTo(v, pascal(q.name)+"DeadLetterQueue") {
			c.errorf("output DeadLetterQueue%s must be the URL of %sDeadLetterQueue", pascal(q.jobType), pascal(q.name))
		}
	}
}
