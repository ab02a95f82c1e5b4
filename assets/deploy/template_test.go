package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/assets"
)

func shippedWorkflows(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range assets.Workflows() {
		def, err := assets.Workflow(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = def
	}
	if len(out) == 0 {
		t.Fatal("no workflows in assets/workflows")
	}
	return out
}

func readTemplate(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTemplate(t *testing.T) {
	for _, e := range checkTemplate(readTemplate(t), shippedWorkflows(t)) {
		t.Error(e)
	}
}

// TestTemplateFilesExist: the paths `aws cloudformation package` uploads are where the template
// says (the zip itself is built by make lambda, so only its folder is known here).
func TestTemplateFilesExist(t *testing.T) {
	for _, name := range assets.Workflows() {
		if _, err := os.Stat(filepath.Join("..", "workflows", name+".asl.json")); err != nil {
			t.Error(err)
		}
	}
}

// TestCheckCatchesBrokenTemplates: each mutation of the template (or of the workflow set) must
// make the check fail with the expected message.
func TestCheckCatchesBrokenTemplates(t *testing.T) {
	good := string(readTemplate(t))
	cases := []struct {
		name, old, new string
		workflows      func(map[string][]byte)
		device         func(map[string]string)
		want           string
	}{
		{name: "dangling Ref", old: "Value: !Ref StatusQueue\n", new: "Value: !Ref StatusQueu\n",
			want: `Ref "StatusQueu" names no resource`},
		{name: "dangling GetAtt", old: "!GetAtt DesktopRole.Arn", new: "!GetAtt DesktopRoles.Arn",
			want: "GetAtt DesktopRoles.Arn names no resource"},
		{name: "unknown attribute", old: "!GetAtt DesktopRole.Arn", new: "!GetAtt DesktopRole.Url",
			want: `has no attribute "Url"`},
		{name: "dangling Sub variable", old: `Resource: !Sub "${Bucket.Arn}/${Prefix}inputs/*"`,
			new: `Resource: !Sub "${Bucket.Arn}/${Prefx}inputs/*"`, want: `Ref "Prefx" names no resource`},
		{name: "undefined condition", old: "Condition: HasAlarmEmail", new: "Condition: HasAlarmMail",
			want: `Condition "HasAlarmMail" is not defined`},
		{name: "star resource", old: "Resource: !GetAtt StatusQueue.Arn\n", new: "Resource: \"*\"\n",
			want: `Resource "*" for sqs:SendMessage`},
		{name: "hard-coded ARN", old: "Resource: !GetAtt StatusQueue.Arn\n", new: "Resource: arn:aws:sqs:us-east-1:123456789012:other\n",
			want: "is not one of this stack's resources"},
		{name: "wildcard before the stack", old: `Resource: !Sub "${Bucket.Arn}/${Prefix}inputs/*"`,
			new: `Resource: !Sub "arn:${AWS::Partition}:s3:::*/${Bucket}"`, want: "wildcard before the stack's own name"},
		{name: "parameter as resource", old: "Resource: !GetAtt StatusQueue.Arn\n", new: "Resource: !Ref Prefix\n",
			want: "is a parameter, not a resource"},
		{name: "service wildcard action", old: "Action: sns:Publish", new: "Action: sns:*",
			want: `Action "sns:*" grants a whole service`},
		{name: "missing workflow", workflows: func(w map[string][]byte) {
			w["extra-workflow"] = []byte(`{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`)
		}, want: "workflow extra-workflow has no state machine"},
		{name: "state machine of no workflow", workflows: func(w map[string][]byte) { delete(w, "caption-generation") },
			want: "not a file of assets/workflows"},
		{name: "inline definition", old: "      DefinitionUri: ../workflows/caption-generation.asl.json\n",
			new:  "      DefinitionUri: ../workflows/caption-generation.asl.json\n      DefinitionString: \"{}\"\n",
			want: "DefinitionString: the definition must come from its assets/workflows file"},
		{name: "function the workflow calls is missing", old: "AiGoalStatusFunction: !Ref AiGoalStatusFunction\n", new: "AiGoalStatusFunction: !Ref AiGoalStatusFunctionLogGroup\n",
			want: "calls function ${AiGoalStatusFunction}, which the template does not deploy"},
		{name: "fixed function name", old: `FunctionName: !Sub "${AWS::StackName}-csv-processor"`, new: "FunctionName: csv-processor",
			want: "a fixed name collides with a second stack"},
		{name: "fixed function log group", old: `LogGroupName: !Sub "/aws/lambda/${AWS::StackName}-csv-processor"`,
			new: "LogGroupName: /aws/lambda/csv-processor", want: "CsvProcessorFunctionLogGroup: LogGroupName"},
		{name: "function served differs from its name", old: "          JOBDESK_FUNCTION: csv-processor\n", new: "          JOBDESK_FUNCTION: csv-processer\n",
			want: "a function named csv-processer has the logical ID CsvProcesserFunction"},
		{name: "workflow spells a function", workflows: func(w map[string][]byte) {
			w["caption-generation"] = []byte(strings.Replace(string(w["caption-generation"]), "${AiCaptionGenerationFunction}", "ai-caption-generation", 1))
		}, want: `calls function "ai-caption-generation": name it through a placeholder`},
		{name: "placeholder filled with another function", old: "        AiCaptionGenerationFunction: !Ref AiCaptionGenerationFunction\n",
			new:  "        AiCaptionGenerationFunction: !Ref AiEligibilityExtractFunction\n",
			want: "fills ${AiCaptionGenerationFunction} with AiEligibilityExtractFunction"},
		{name: "device calls another function", device: func(d map[string]string) { d["AiCaptionGenerationFunction"] = "ai-eligibility-extract" },
			want: `the device fills ${AiCaptionGenerationFunction} with "ai-eligibility-extract"`},
		{name: "device cannot fill a function", device: func(d map[string]string) { delete(d, "CsvProcessorFunction") },
			want: "names ${CsvProcessorFunction}, which the device cannot fill"},
		{name: "role invokes a function its workflow never calls", old: "                  - !GetAtt AiCaptionGenerationFunction.Arn\n",
			new:  "                  - !GetAtt AiCaptionGenerationFunction.Arn\n                  - !GetAtt CsvProcessorFunction.Arn\n",
			want: "may invoke csv-processor, which workflow caption-generation never calls"},
		{name: "workflow drift: new function", workflows: func(w map[string][]byte) {
			w["caption-generation"] = []byte(strings.Replace(string(w["caption-generation"]), "${AiCaptionGenerationFunction}", "${AiCaptionV2Function}", 1))
		}, want: "names ${AiCaptionV2Function}, which its DefinitionSubstitutions does not fill"},
		{name: "workflow hard-codes an ARN", workflows: func(w map[string][]byte) {
			w["caption-generation"] = []byte(strings.Replace(string(w["caption-generation"]), `"${AiCaptionGenerationFunction}"`,
				`"arn:aws:lambda:us-east-1:123456789012:function:x"`, 1))
		}, want: "not a resource of this stack"},
		{name: "invalid workflow", workflows: func(w map[string][]byte) {
			w["caption-generation"] = []byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`)
		}, want: "workflow caption-generation:"},
		{name: "misspelt property", old: "      VisibilityTimeout: 120\n", new: "      VisibilityTimout: 120\n",
			want: `unknown field "VisibilityTimout"`},
		{name: "wrong visibility", old: "      VisibilityTimeout: 120\n", new: "      VisibilityTimeout: 60\n",
			want: "VisibilityTimeout 60, the specification says 120"},
		{name: "more receives", old: "maxReceiveCount: 3", new: "maxReceiveCount: 5", want: "after 3 receives"},
		{name: "no partial batch response", old: "FunctionResponseTypes: [ReportBatchItemFailures]\n      ScalingConfig:\n        MaximumConcurrency: 10",
			new: "ScalingConfig:\n        MaximumConcurrency: 10", want: "must report batch item failures"},
		{name: "public bucket", old: "RestrictPublicBuckets: true", new: "RestrictPublicBuckets: false",
			want: "RestrictPublicBuckets must be true"},
		{name: "no DLQ alarm", old: "MetricName: ApproximateNumberOfMessagesVisible\n      Dimensions:\n        - Name: QueueName\n          Value: !GetAtt StatusDeadLetterQueue.QueueName",
			new:  "MetricName: NumberOfMessagesSent\n      Dimensions:\n        - Name: QueueName\n          Value: !GetAtt StatusDeadLetterQueue.QueueName",
			want: "StatusDeadLetterQueue: needs an alarm on ApproximateNumberOfMessagesVisible > 0"},
		{name: "missing output", old: "  DesktopRoleArn:\n", new: "  DesktopRoleArnX:\n", want: "output DesktopRoleArn is missing"},
		{name: "unknown tag", old: "!Ref Bucket\n", new: "!Reff Bucket\n", want: "unknown tag !Reff"},
		{name: "code only under Globals", old: "      CodeUri: ../../dist/lambda-arm64.zip\n      Description: \"JobDesk csv-processor",
			new: "      Description: \"JobDesk csv-processor", want: "CsvProcessorFunction: CodeUri <nil>"},
		{name: "placeholder not substituted", old: "        WorkflowNotificationsTopicArn: !Ref WorkflowNotificationsTopic\n",
			new: "", want: "names ${WorkflowNotificationsTopicArn}, which its DefinitionSubstitutions does not fill"},
		{name: "workflow spells a topic", workflows: func(w map[string][]byte) {
			w["task-generation"] = []byte(strings.ReplaceAll(string(w["task-generation"]), "${WorkflowNotificationsTopicArn}",
				"arn:aws:sns:local:000000000000:workflow-notifications"))
		}, want: "DefinitionSubstitutions WorkflowNotificationsTopicArn is not a placeholder of workflow task-generation"},
		{name: "queue lifecycle left to the default", old: "  StatusQueue:\n    Type: AWS::SQS::Queue\n    DeletionPolicy: Delete\n",
			new: "  StatusQueue:\n    Type: AWS::SQS::Queue\n", want: "StatusQueue: DeletionPolicy must be chosen"},
		{name: "no average time alarm", old: "      Statistic: Average\n      Period: 300\n      EvaluationPeriods: 1\n      ComparisonOperator: GreaterThanThreshold\n      Threshold: 300000\n",
			new:  "      Statistic: Average\n      Period: 300\n      EvaluationPeriods: 1\n      ComparisonOperator: GreaterThanThreshold\n      Threshold: 900000\n",
			want: "needs an alarm on the average ExecutionTime > 300000 ms"},
		{name: "own runtime", old: "      Role: !GetAtt CsvProcessorRole.Arn\n", new: "      Role: !GetAtt CsvProcessorRole.Arn\n      Runtime: go1.x\n",
			want: "Runtime must come from Globals"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := good
			if tc.old != "" {
				if !strings.Contains(text, tc.old) {
					t.Fatalf("the template no longer contains %q: update the case", tc.old)
				}
				text = strings.Replace(text, tc.old, tc.new, 1)
			}
			wfs := shippedWorkflows(t)
			if tc.workflows != nil {
				tc.workflows(wfs)
			}
			device := assets.DeviceSubstitutions("local", "000000000000")
			if tc.device != nil {
				tc.device(device)
			}
			errs := checkTemplateDevice([]byte(text), wfs, device)
			if len(errs) == 0 {
				t.Fatalf("the check passed a broken template (want %q)", tc.want)
			}
			for _, e := range errs {
				if strings.Contains(e, tc.want) {
					return
				}
			}
			t.Errorf("no error mentions %q; got:\n%s", tc.want, strings.Join(errs, "\n"))
		})
	}
}

// TestASLValidator runs the npm asl-validator pinned in package-lock.json over every workflow
// when `npm ci` has installed it (make deploy-check does; it also runs the validator itself).
func TestASLValidator(t *testing.T) {
	bin := filepath.Join("node_modules", ".bin", "asl-validator")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("asl-validator is not installed here: make deploy-check runs npm ci first")
	}
	args := []string{}
	for _, name := range assets.Workflows() {
		args = append(args, "--json-path", filepath.Join("..", "workflows", name+".asl.json"))
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("asl-validator: %v\n%s", err, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.asl.json")
	if err := os.WriteFile(bad, []byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(bin, "--json-path", bad).Run(); err == nil {
		t.Fatal("asl-validator accepted a definition with a missing Next target")
	}
}
