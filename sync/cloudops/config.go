package cloudops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"jobdesk/engine/job"
)

// ConfigFile is the name of the cloud configuration in the data folder.
const ConfigFile = "cloud.json"

// Config is cloud.json: where the deployed backend (assets/deploy/template.yaml) is. It is
// written from the stack's outputs by ConfigFromStackOutputs (`jobdesk cloud config
// --from-stack-outputs FILE`).
type Config struct {
	Region string `json:"region"`
	// Profile is the AWS profile to sign with ("": the SDK's default chain). Never credentials.
	Profile string `json:"profile,omitempty"`
	Bucket  string `json:"bucket,omitempty"`
	Prefix  string `json:"prefix,omitempty"`
	// StateMachines maps a workflow name (assets/workflows/NAME.asl.json) to its ARN.
	StateMachines map[string]string `json:"state_machines,omitempty"`
	// Queues maps a job type (ATTACHMENT_CONVERT) to its queue's URL.
	Queues map[string]string `json:"queues,omitempty"`
	// DeadLetterQueues maps a job type to its dead-letter queue's URL.
	DeadLetterQueues map[string]string `json:"dead_letter_queues,omitempty"`
	// StatusQueue is the URL of the queue the desktop reads execution and job status from.
	StatusQueue string `json:"status_queue,omitempty"`
	// StatusDeadLetterQueue is the status queue's dead-letter queue.
	StatusDeadLetterQueue string `json:"status_dead_letter_queue,omitempty"`
	// DesktopRoleArn is the role the desktop assumes.
	DesktopRoleArn string `json:"desktop_role_arn,omitempty"`
}

// ConfigPath is cloud.json's path in data folder dir.
func ConfigPath(dir string) string { return filepath.Join(dir, ConfigFile) }

// ReadConfig reads cloud.json from data folder dir. A missing file is an E014 that says how to
// make it.
func ReadConfig(dir string) (Config, error) {
	path := ConfigPath(dir)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, job.Errorf(job.E014, "%s does not exist: write it with `jobdesk cloud config --from-stack-outputs FILE`", path).
			WithJa(fmt.Sprintf("%s がありません。`jobdesk cloud config --from-stack-outputs FILE` で作成してください。", path))
	}
	if err != nil {
		return Config{}, job.Wrap(job.E014, err, fmt.Sprintf("%s cannot be read", path)).WithJa(fmt.Sprintf("%s を読めません。", path))
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, job.Wrap(job.E014, err, fmt.Sprintf("%s is not valid JSON", path)).WithJa(fmt.Sprintf("%s が正しいJSONではありません。", path))
	}
	return c, nil
}

// WriteConfig writes c as cloud.json in data folder dir (atomically, mode 0600).
func WriteConfig(dir string, c Config) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ConfigFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), ConfigPath(dir))
}

// stackDescription is the part of `aws cloudformation describe-stacks` output read.
type stackDescription struct {
	Stacks []struct {
		StackName string `json:"StackName"`
		Outputs   []struct {
			OutputKey   string `json:"OutputKey"`
			OutputValue string `json:"OutputValue"`
		} `json:"Outputs"`
	} `json:"Stacks"`
}

// ConfigFromStackOutputs reads the JSON of `aws cloudformation describe-stacks` (one stack) and
// returns the Config its outputs describe (assets/deploy/README.md lists them):
// StateMachine<Workflow> → state_machines[workflow], Queue<JobType> → queues[JOB_TYPE],
// DeadLetterQueue<JobType> → dead_letter_queues[JOB_TYPE].
func ConfigFromStackOutputs(r io.Reader) (Config, error) {
	bad := func(en, ja string) (Config, error) {
		return Config{}, job.Errorf(job.E014, "%s", en).WithJa(ja)
	}
	var d stackDescription
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return bad("the stack description is not the JSON of `aws cloudformation describe-stacks`: "+err.Error(),
			"スタックの情報が `aws cloudformation describe-stacks` のJSONではありません。")
	}
	if len(d.Stacks) != 1 {
		return bad(fmt.Sprintf("the stack description holds %d stacks; describe exactly one (--stack-name)", len(d.Stacks)),
			fmt.Sprintf("スタックの情報に %d 個のスタックがあります。--stack-name で1つだけ指定してください。", len(d.Stacks)))
	}
	c := Config{StateMachines: map[string]string{}, Queues: map[string]string{}, DeadLetterQueues: map[string]string{}}
	for _, o := range d.Stacks[0].Outputs {
		k, v := o.OutputKey, o.OutputValue
		switch {
		case k == "Region":
			c.Region = v
		case k == "Bucket":
			c.Bucket = v
		case k == "Prefix":
			c.Prefix = v
		case k == "StatusQueue":
			c.StatusQueue = v
		case k == "DeadLetterQueueStatus":
			c.StatusDeadLetterQueue = v
		case k == "DesktopRoleArn":
			c.DesktopRoleArn = v
		case strings.HasPrefix(k, "StateMachine") && len(k) > len("StateMachine"):
			c.StateMachines[strings.ToLower(strings.Join(splitPascal(k[len("StateMachine"):]), "-"))] = v
		case strings.HasPrefix(k, "DeadLetterQueue") && len(k) > len("DeadLetterQueue"):
			c.DeadLetterQueues[strings.ToUpper(strings.Join(splitPascal(k[len("DeadLetterQueue"):]), "_"))] = v
		case strings.HasPrefix(k, "Queue") && len(k) > len("Queue"):
			c.Queues[strings.ToUpper(strings.Join(splitPascal(k[len("Queue"):]), "_"))] = v
		}
	}
	var missing []string
	for k, v := range map[string]string{"Region": c.Region, "Bucket": c.Bucket, "StatusQueue": c.StatusQueue} {
		if v == "" {
			missing = append(missing, k)
		}
	}
	if len(c.Queues) == 0 {
		missing = append(missing, "Queue<JobType>")
	}
	if len(c.StateMachines) == 0 {
		missing = append(missing, "StateMachine<Workflow>")
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		list := strings.Join(missing, ", ")
		return bad("the stack has no output "+list+": is it JobDesk's stack (assets/deploy/template.yaml), deployed completely?",
			"スタックに出力 "+list+" がありません。JobDesk のスタック（assets/deploy/template.yaml）が最後までデプロイされているか確認してください。")
	}
	return c, nil
}

// splitPascal splits "CsvProcessing2" into "Csv", "Processing2".
func splitPascal(s string) []string {
	var parts []string
	start := 0
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			parts = append(parts, s[start:i])
			start = i
		}
	}
	return append(parts, s[start:])
}
