package assets

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A workflow names what differs between the device and an AWS stack through placeholders,
// `${Name}`, which CloudFormation's DefinitionSubstitutions fill on AWS (assets/deploy) and
// Substitute fills on the device, so one file serves both.
var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// Placeholders returns the names of the placeholders in def, sorted, each once.
func Placeholders(def []byte) []string {
	seen := map[string]bool{}
	for _, m := range placeholder.FindAllSubmatch(def, -1) {
		seen[string(m[1])] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Substitute replaces every ${Name} of def with vars[Name], as DefinitionSubstitutions does;
// a placeholder without a value is an error naming it, never left in place.
func Substitute(def []byte, vars map[string]string) ([]byte, error) {
	var missing []string
	out := placeholder.ReplaceAllFunc(def, func(m []byte) []byte {
		name := string(m[2 : len(m)-1])
		v, ok := vars[name]
		if !ok {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return m
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("no value for ${%s}", strings.Join(missing, "}, ${"))
	}
	return out, nil
}

// DeviceFunctions maps each workflow's function placeholder to the name the device registers
// the function under (csvjob.FunctionName, docjob.FunctionName, aijob's Fn* constants). On AWS
// the template's DefinitionSubstitutions give the stack's own function instead
// (STACK-csv-processor), so two stacks share one account and region. A placeholder is named
// after the function's logical ID in the template.
var DeviceFunctions = map[string]string{
	"CsvProcessorFunction":         "csv-processor",
	"DocumentConverterFunction":    "document-converter",
	"AiSubgoalGenerationFunction":  "ai-subgoal-generation",
	"AiActionGenerationFunction":   "ai-action-generation",
	"AiCaptionGenerationFunction":  "ai-caption-generation",
	"AiEligibilityExtractFunction": "ai-eligibility-extract",
	"AiTaskValidateFunction":       "ai-task-validate",
	"AiTaskBatchesFunction":        "ai-task-batches",
	"AiTaskGenerateFunction":       "ai-task-generate",
	"AiTaskSaveFunction":           "ai-task-save",
	"AiTaskAggregateFunction":      "ai-task-aggregate",
	"AiGoalStatusFunction":         "ai-goal-status",
}

// DeviceSubstitutions are the placeholders' values on a device whose workflow engine uses
// region and account in its ARNs: the device records task-generation's notifications under
// its own topic, and calls its functions by the names it registers them under (DeviceFunctions).
func DeviceSubstitutions(region, account string) map[string]string {
	out := map[string]string{
		"WorkflowNotificationsTopicArn": "arn:aws:sns:" + region + ":" + account + ":workflow-notifications",
	}
	for k, v := range DeviceFunctions {
		out[k] = v
	}
	return out
}

// DeviceWorkflow is Workflow with the device's values substituted (DeviceSubstitutions).
func DeviceWorkflow(name, region, account string) ([]byte, error) {
	def, err := Workflow(name)
	if err != nil {
		return nil, err
	}
	out, err := Substitute(def, DeviceSubstitutions(region, account))
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", name, err)
	}
	return out, nil
}

// SubstituteKnown replaces each ${Name} of def that vars has a value for and leaves the others
// in place (for a workflow a person gives, whose validation then names what is left).
func SubstituteKnown(def []byte, vars map[string]string) []byte {
	return placeholder.ReplaceAllFunc(def, func(m []byte) []byte {
		if v, ok := vars[string(m[2:len(m)-1])]; ok {
			return []byte(v)
		}
		return m
	})
}
