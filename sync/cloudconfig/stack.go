package cloudconfig

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"jobdesk/engine/job"
)

// cloud.json from a deployed stack: the outputs of assets/deploy/template.yaml name everything
// cloud.json holds (`jobdesk cloud config --from-stack-outputs FILE`).

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
		case k == "BedrockModelId":
			c.BedrockModel = v
		case k == "BedrockRegion":
			c.BedrockRegion = v
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
