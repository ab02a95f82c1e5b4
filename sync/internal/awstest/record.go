package awstest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"jobdesk/assets/deploy"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// Recorder notes every AWS operation the clients it is installed in make, with the principal
// making it and the resource it names, so a test can check each against the deploy template's
// policy for that principal (assets/deploy.Policy).
type Recorder struct {
	mu    sync.Mutex
	calls []deploy.Call
	// Rename maps a test server's names onto a deployed stack's (a state machine "csv-processing"
	// is "STACK-csv-processing" there); nil keeps them.
	Rename func(deploy.Call) deploy.Call
}

// Desktop is the principal of every call: the desktop.
func Desktop(context.Context) string { return deploy.DesktopPrincipal }

// Function is the principal of a call a Lambda function's handler makes: the function whose
// task is running (the stand-in runs each as a queue job of type lambda:NAME).
func Function(ctx context.Context) string {
	info, _ := job.InfoFrom(ctx)
	if name, ok := strings.CutPrefix(info.Type, flow.FunctionTypePrefix); ok {
		return deploy.FunctionPrincipal(name)
	}
	// Outside a function's task: Step Functions itself (a Map's ItemReader or ResultWriter).
	return deploy.StateMachinesPrincipal
}

// Option returns the SDK API option (aws.Config.APIOptions, or a client's) that records each
// operation under principal(ctx).
func (r *Recorder) Option(principal func(context.Context) string) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("JobDeskRecordCall",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c := deploy.Call{Principal: principal(ctx), Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx)}
				v := reflect.Indirect(reflect.ValueOf(in.Parameters))
				field := func(names ...string) string {
					if v.Kind() != reflect.Struct {
						return ""
					}
					for _, n := range names {
						if f := v.FieldByName(n); f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String {
							return f.Elem().String()
						}
					}
					return ""
				}
				c.Bucket, c.Key, c.QueueURL, c.ModelID = field("Bucket"), field("Key"), field("QueueUrl"), field("ModelId")
				if name := field("QueueName"); name != "" && c.QueueURL == "" {
					c.QueueURL = "/" + field("QueueOwnerAWSAccountId") + "/" + name
				}
				c.ARN = field("ExecutionArn", "MapRunArn", "StateMachineArn", "SourceArn")
				if r.Rename != nil {
					c = r.Rename(c)
				}
				r.mu.Lock()
				r.calls = append(r.calls, c)
				r.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// Calls returns what was recorded so far.
func (r *Recorder) Calls() []deploy.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]deploy.Call(nil), r.calls...)
}

var account = regexp.MustCompile(`([:/])[0-9]{12}([:/])`)

// StandInNames is a Rename for the test servers: the Step Functions stand-in names its state
// machines as the workflow files (the stack's are STACK-WORKFLOW), and each server has an
// account of its own (the stack's is s.Account).
func StandInNames(s deploy.Stack) func(deploy.Call) deploy.Call {
	stack := s.Name
	return func(c deploy.Call) deploy.Call {
		c.ARN = account.ReplaceAllString(c.ARN, "${1}"+s.Account+"${2}")
		c.QueueURL = account.ReplaceAllString(c.QueueURL, "${1}"+s.Account+"${2}")
		for _, kind := range []string{":stateMachine:", ":execution:", ":mapRun:"} {
			if i := strings.Index(c.ARN, kind); i >= 0 && !strings.HasPrefix(c.ARN[i+len(kind):], stack+"-") {
				c.ARN = c.ARN[:i+len(kind)] + stack + "-" + c.ARN[i+len(kind):]
			}
		}
		return c
	}
}

// Check returns one sentence per recorded call the deploy template, deployed as s, does not
// allow its principal.
func (r *Recorder) Check(s deploy.Stack) []string {
	p, err := deploy.ReadPolicy(deploy.Template, s)
	if err != nil {
		return []string{"the deploy template's policies: " + err.Error()}
	}
	return p.Check(r.Calls())
}

// ReportIAM prints what Check finds and returns the exit code a TestMain should end with: 0
// when the template allows every recorded call, 1 otherwise. After a run of the whole package
// (no -run), the grants its calls used must also be listed in
// assets/deploy/testdata/calls/NAME.txt, which the deploy check reads to find grants no code
// uses; JOBDESK_UPDATE_IAM=1 rewrites that file instead.
func ReportIAM(r *Recorder, s deploy.Stack, name string) int {
	p, err := deploy.ReadPolicy(deploy.Template, s)
	if err != nil {
		fmt.Println("FAIL: the deploy template's policies:", err)
		return 1
	}
	errs, used := p.Use(r.Calls())
	if len(errs) > 0 {
		fmt.Println("FAIL: AWS calls the deploy template's policy does not allow:")
		for _, e := range errs {
			fmt.Println("  " + e)
		}
		return 1
	}
	fmt.Printf("IAM: the deploy template allows all %d recorded AWS calls\n", len(r.Calls()))
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return 0 // a part of the package ran: its calls are not all the package's
	}
	file := filepath.Join(repoRoot(), "assets", "deploy", "testdata", "calls", name+".txt")
	if os.Getenv("JOBDESK_UPDATE_IAM") == "1" {
		if err := os.WriteFile(file, []byte(strings.Join(used, "\n")+"\n"), 0o644); err != nil {
			fmt.Println("FAIL:", err)
			return 1
		}
		return 0
	}
	old, _ := os.ReadFile(file)
	had := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(old)), "\n") {
		had[l] = true
	}
	// A grant used now and not listed fails (the deploy check would not know the code needs it);
	// a listed one this run did not use is only reported: some calls happen on failure paths
	// whose timing a run does not fix.
	var added []string
	for _, u := range used {
		if !had[u] {
			added = append(added, u)
		}
		delete(had, u)
	}
	for l := range had {
		if l != "" {
			fmt.Printf("IAM: %s lists %q, which this run did not use\n", file, l)
		}
	}
	if len(added) == 0 {
		return 0
	}
	fmt.Printf("FAIL: this package's AWS calls use grants %s does not list (JOBDESK_UPDATE_IAM=1 rewrites it):\n", file)
	for _, a := range added {
		fmt.Println("  + " + a)
	}
	return 1
}

// repoRoot is the folder holding go.mod, above the test's working directory.
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
