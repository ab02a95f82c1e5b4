package deploy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Stack names a deployment of the template, so its policies can be read as AWS would evaluate
// them: every Ref, GetAtt and Sub resolved to this stack's names and ARNs.
type Stack struct {
	Name, Region, Account string
	Bucket                string // the bucket's name (CloudFormation generates it)
	Prefix                string // the Prefix parameter
	BedrockModelID        string // "" takes the parameter's default
}

// DesktopPrincipal is the principal of the desktop (DesktopPolicy, also DesktopRole's).
const DesktopPrincipal = "desktop"

// FunctionPrincipal is the principal of the Lambda function that serves name ("csv-processor",
// its JOBDESK_FUNCTION; deployed as STACK-csv-processor).
func FunctionPrincipal(name string) string { return "function:" + name }

// Grant is one allowed (action, resource pattern) of a principal.
type Grant struct {
	Action, Resource string
	Where            string // the statement, for messages
}

// Policy is what each principal of a stack may do: every Allow statement without a Condition,
// resolved. A statement with a Condition is left out: it does not hold for every request (an
// s3:ListBucket limited by s3:prefix does not let S3 answer 404 for a missing key).
type Policy struct {
	Stack  Stack
	Grants map[string][]Grant // principal → grants
}

// ReadPolicy reads the policies of template data deployed as stack s.
func ReadPolicy(data []byte, s Stack) (*Policy, error) {
	t, err := parseTemplate(data)
	if err != nil {
		return nil, err
	}
	if s.BedrockModelID == "" {
		d, _ := t.parameters["BedrockModelId"].(map[string]any)
		s.BedrockModelID = fmt.Sprint(d["Default"])
	}
	r := &resolver{t: t, s: s}
	p := &Policy{Stack: s, Grants: map[string][]Grant{}}
	addDoc := func(principal, where string, doc any) error {
		d, _ := doc.(map[string]any)
		for i, st := range list(d["Statement"]) {
			m, _ := st.(map[string]any)
			if m["Effect"] != "Allow" || m["Condition"] != nil {
				continue
			}
			name := fmt.Sprintf("%s statement %d", where, i)
			if sid, ok := m["Sid"].(string); ok {
				name = where + " " + sid
			}
			for _, res := range list(m["Resource"]) {
				arn, err := r.value(res, nil)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				for _, a := range list(m["Action"]) {
					p.Grants[principal] = append(p.Grants[principal], Grant{Action: fmt.Sprint(a), Resource: arn, Where: name})
				}
			}
		}
		return nil
	}
	addRole := func(principal, role string) error {
		props := t.props(role)
		for _, pol := range list(props["Policies"]) {
			m, _ := pol.(map[string]any)
			if err := addDoc(principal, role, m["PolicyDocument"]); err != nil {
				return err
			}
		}
		for _, ref := range list(props["ManagedPolicyArns"]) {
			m, _ := ref.(map[string]any)
			id, _ := m["Ref"].(string)
			if t.resources[id]["Type"] != "AWS::IAM::ManagedPolicy" {
				return fmt.Errorf("%s: managed policy %v is not one of the template's", role, ref)
			}
			if err := addDoc(principal, id, t.props(id)["PolicyDocument"]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := addDoc(DesktopPrincipal, "DesktopPolicy", t.props("DesktopPolicy")["PolicyDocument"]); err != nil {
		return nil, err
	}
	for _, id := range t.ofType("AWS::Serverless::Function") {
		props := t.props(id)
		role, _ := props["Role"].(map[string]any)
		ga, _ := role["Fn::GetAtt"].([]any)
		if len(ga) != 2 {
			return nil, fmt.Errorf("%s: Role is not !GetAtt ROLE.Arn", id)
		}
		if err := addRole(FunctionPrincipal(r.served(id)), fmt.Sprint(ga[0])); err != nil {
			return nil, err
		}
	}
	for _, id := range t.ofType("AWS::Serverless::StateMachine") {
		role, _ := t.props(id)["Role"].(map[string]any)
		ga, _ := role["Fn::GetAtt"].([]any)
		if len(ga) != 2 {
			return nil, fmt.Errorf("%s: Role is not !GetAtt ROLE.Arn", id)
		}
		if err := addRole(StateMachinesPrincipal, fmt.Sprint(ga[0])); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// StateMachinesPrincipal is the state machines' roles taken together: what Step Functions itself
// reads and writes for a Map's ItemReader and ResultWriter.
const StateMachinesPrincipal = "state-machines"

// Allowed reports whether principal may call action on resource (an ARN), and names the
// statement that allows it.
func (p *Policy) Allowed(principal, action, resource string) (bool, string) {
	for _, g := range p.Grants[principal] {
		if wildMatch(strings.ToLower(g.Action), strings.ToLower(action)) && wildMatch(g.Resource, resource) {
			return true, g.Where
		}
	}
	return false, ""
}

// wildMatch is IAM's matching: * any run of characters (slashes included), ? one character.
func wildMatch(pattern, s string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	ok, _ := regexp.MatchString(re, s)
	return ok
}

// resolver turns the template's intrinsics into the stack's names.
type resolver struct {
	t *tmpl
	s Stack
}

// functionName is the deployed name of function id: its FunctionName resolved for this stack
// (STACK-csv-processor), or CloudFormation's generated STACK-LogicalId(-RANDOM).
func (r *resolver) functionName(id string) string {
	if n, err := r.value(r.t.props(id)["FunctionName"], nil); err == nil && n != "" {
		return n
	}
	return r.s.Name + "-" + id
}

// served is the function function id's bootstrap serves (its JOBDESK_FUNCTION, csv-processor):
// the name the tests record a function's calls under, whatever the stack.
func (r *resolver) served(id string) string {
	env, _ := r.t.props(id)["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	if n, ok := vars["JOBDESK_FUNCTION"].(string); ok && n != "" {
		return n
	}
	return r.functionName(id)
}

func (r *resolver) arn(service, rest string) string {
	return "arn:aws:" + service + ":" + r.s.Region + ":" + r.s.Account + ":" + rest
}

// ref is what !Ref id gives.
func (r *resolver) ref(id string) (string, error) {
	switch id {
	case "AWS::Region":
		return r.s.Region, nil
	case "AWS::AccountId":
		return r.s.Account, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::StackName":
		return r.s.Name, nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	case "Prefix":
		return r.s.Prefix, nil
	case "BedrockModelId":
		return r.s.BedrockModelID, nil
	}
	if p, ok := r.t.parameters[id].(map[string]any); ok {
		return fmt.Sprint(p["Default"]), nil
	}
	res, ok := r.t.resources[id]
	if !ok {
		return "", fmt.Errorf("Ref %s names nothing", id)
	}
	switch res["Type"] {
	case "AWS::S3::Bucket":
		return r.s.Bucket, nil
	case "AWS::SQS::Queue":
		name, err := r.getAtt(id, "QueueName")
		return "https://sqs." + r.s.Region + ".amazonaws.com/" + r.s.Account + "/" + name, err
	case "AWS::SNS::Topic":
		return r.arn("sns", r.s.Name+"-"+id), nil
	case "AWS::Serverless::StateMachine":
		name, err := r.getAtt(id, "Name")
		return r.arn("states", "stateMachine:"+name), err
	case "AWS::Serverless::Function":
		return r.functionName(id), nil
	case "AWS::IAM::ManagedPolicy":
		return "arn:aws:iam::" + r.s.Account + ":policy/" + r.s.Name + "-" + id, nil
	}
	return r.s.Name + "-" + id, nil
}

// getAtt is what !GetAtt id.attr gives.
func (r *resolver) getAtt(id, attr string) (string, error) {
	res, ok := r.t.resources[id]
	if !ok {
		return "", fmt.Errorf("GetAtt %s.%s names nothing", id, attr)
	}
	p := r.t.props(id)
	named := func(prop string) (string, error) {
		if v, ok := p[prop]; ok {
			return r.value(v, nil)
		}
		return r.s.Name + "-" + id, nil
	}
	switch res["Type"].(string) + "." + attr {
	case "AWS::S3::Bucket.Arn":
		return "arn:aws:s3:::" + r.s.Bucket, nil
	case "AWS::SQS::Queue.QueueName":
		return named("QueueName")
	case "AWS::SQS::Queue.Arn":
		n, err := named("QueueName")
		return r.arn("sqs", n), err
	case "AWS::Serverless::StateMachine.Name":
		return named("Name")
	case "AWS::Serverless::StateMachine.Arn":
		n, err := named("Name")
		return r.arn("states", "stateMachine:"+n), err
	case "AWS::Serverless::Function.Arn":
		return r.arn("lambda", "function:"+r.functionName(id)), nil
	case "AWS::Logs::LogGroup.Arn":
		n, err := named("LogGroupName")
		return r.arn("logs", "log-group:"+n+":*"), err
	case "AWS::SNS::Topic.TopicArn":
		return r.arn("sns", r.s.Name+"-"+id), nil
	case "AWS::Events::Rule.Arn":
		return r.arn("events", "rule/"+r.s.Name+"-"+id), nil
	case "AWS::IAM::Role.Arn":
		return "arn:aws:iam::" + r.s.Account + ":role/" + r.s.Name + "-" + id, nil
	}
	return "", fmt.Errorf("GetAtt %s.%s: not resolved here", id, attr)
}

// value resolves v (a string or an intrinsic) with the Sub variables vars.
func (r *resolver) value(v any, vars map[string]string) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	case map[string]any:
		for k, arg := range v {
			switch k {
			case "Ref":
				return r.ref(fmt.Sprint(arg))
			case "Fn::GetAtt":
				a, _ := arg.([]any)
				if len(a) != 2 {
					return "", fmt.Errorf("GetAtt %v", arg)
				}
				return r.getAtt(fmt.Sprint(a[0]), fmt.Sprint(a[1]))
			case "Fn::If":
				a, _ := arg.([]any)
				if len(a) != 3 {
					return "", fmt.Errorf("If %v", arg)
				}
				// The conditions this template has are about optional parameters left empty.
				return r.value(a[2], vars)
			case "Fn::Sub":
				str, local := arg, map[string]string{}
				if a, ok := arg.([]any); ok && len(a) == 2 {
					str = a[0]
					m, _ := a[1].(map[string]any)
					for name, x := range m {
						val, err := r.value(x, vars)
						if err != nil {
							return "", err
						}
						local[name] = val
					}
				}
				s, _ := str.(string)
				var firstErr error
				out := subVar.ReplaceAllStringFunc(s, func(m string) string {
					name := m[2 : len(m)-1]
					if strings.HasPrefix(name, "!") {
						return "${" + name[1:] + "}"
					}
					if val, ok := local[name]; ok {
						return val
					}
					var val string
					var err error
					if id, attr, ok := strings.Cut(name, "."); ok {
						val, err = r.getAtt(id, attr)
					} else {
						val, err = r.ref(name)
					}
					if err != nil && firstErr == nil {
						firstErr = err
					}
					return val
				})
				return out, firstErr
			}
		}
	}
	return "", fmt.Errorf("cannot resolve %v", v)
}

// Call is one AWS operation a principal made, as the tests record it: the service's SDK id
// ("S3", "SQS", "SFN", "Bedrock Runtime"), the operation ("PurgeQueue") and what it named
// (a bucket and key, a queue URL, an ARN, a model id).
type Call struct {
	Principal, Service, Operation string
	Bucket, Key, QueueURL, ARN    string
	ModelID                       string
}

// Need is one permission a call needs.
type Need struct{ Action, Resource string }

// Needs returns the permissions call needs on stack s. S3 answers HeadObject and GetObject of a
// missing key with 404 only when s3:ListBucket is allowed on the bucket for the request; the
// code reads that 404 as "not there yet", so those calls need ListBucket too.
func (s Stack) Needs(c Call) ([]Need, error) {
	bucket := "arn:aws:s3:::" + c.Bucket
	object := bucket + "/" + c.Key
	queue := ""
	if c.QueueURL != "" {
		// https://sqs.REGION.amazonaws.com/ACCOUNT/NAME (GetQueueUrl: /ACCOUNT/NAME, the account
		// may be empty: the caller's).
		acct := path.Base(path.Dir(c.QueueURL))
		if len(acct) != 12 {
			acct = s.Account
		}
		queue = "arn:aws:sqs:" + s.Region + ":" + acct + ":" + path.Base(c.QueueURL)
	}
	one := func(action, res string) ([]Need, error) { return []Need{{action, res}}, nil }
	switch c.Service {
	case "S3":
		switch c.Operation {
		case "HeadObject", "GetObject":
			if c.Principal == StateMachinesPrincipal {
				// A Map's ItemReader: a missing manifest fails the execution, 403 or 404.
				return one("s3:GetObject", object)
			}
			return []Need{{"s3:GetObject", object}, {"s3:ListBucket", bucket}}, nil
		case "PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload", "CopyObject":
			return one("s3:PutObject", object)
		case "AbortMultipartUpload":
			return one("s3:AbortMultipartUpload", object)
		case "ListParts":
			return one("s3:ListMultipartUploadParts", object)
		case "DeleteObject":
			return one("s3:DeleteObject", object)
		case "ListObjectsV2", "ListObjects", "HeadBucket":
			return one("s3:ListBucket", bucket)
		case "ListMultipartUploads":
			return one("s3:ListBucketMultipartUploads", bucket)
		}
	case "SQS":
		op := strings.TrimSuffix(c.Operation, "Batch")
		switch op {
		case "StartMessageMoveTask", "ListMessageMoveTasks":
			// Named by the source (the DLQ's) ARN.
			return one("sqs:"+op, c.ARN)
		case "CancelMessageMoveTask":
			return one("sqs:"+op, c.ARN)
		case "ListQueues":
			return one("sqs:"+op, "arn:aws:sqs:"+s.Region+":"+s.Account+":*")
		}
		return one("sqs:"+op, queue)
	case "SFN":
		return one("states:"+c.Operation, c.ARN)
	case "Bedrock Runtime":
		if c.Operation == "Converse" || c.Operation == "InvokeModel" {
			return one("bedrock:InvokeModel", "arn:aws:bedrock:"+s.Region+"::foundation-model/"+c.ModelID)
		}
	case "STS":
		if c.Operation == "GetCallerIdentity" {
			return nil, nil // needs no permission
		}
	}
	return nil, fmt.Errorf("%s %s: no rule says which permission it needs", c.Service, c.Operation)
}

// Check returns one sentence per call the policy does not allow (each call once).
func (p *Policy) Check(calls []Call) []string {
	errs, _ := p.Use(calls)
	return errs
}

// Use is Check, and also returns the grants the calls used, each once, sorted, as
// "PRINCIPAL ACTION STATEMENT" lines (the statement as "POLICY_OR_ROLE SID"): what the code
// needs, in the template's own names, independent of the stack's.
func (p *Policy) Use(calls []Call) (errs, used []string) {
	var out []string
	seen, usedSet := map[string]bool{}, map[string]bool{}
	for _, c := range calls {
		needs, err := p.Stack.Needs(c)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		for _, n := range needs {
			k := c.Principal + " " + n.Action + " " + n.Resource
			if seen[k] {
				continue
			}
			seen[k] = true
			if ok, where := p.Allowed(c.Principal, n.Action, n.Resource); !ok {
				out = append(out, fmt.Sprintf("%s calls %s %s, which needs %s on %s: the template does not allow it",
					c.Principal, c.Service, c.Operation, n.Action, n.Resource))
			} else {
				usedSet[c.Principal+" "+n.Action+" "+where] = true
			}
		}
	}
	slices.Sort(out)
	for k := range usedSet {
		used = append(used, k)
	}
	slices.Sort(used)
	return out, used
}

// GrantKeys returns every grant of the policy as Use names them, sorted, each once.
func (p *Policy) GrantKeys() []string {
	set := map[string]bool{}
	for principal, gs := range p.Grants {
		for _, g := range gs {
			set[principal+" "+g.Action+" "+g.Where] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
