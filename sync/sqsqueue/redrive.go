package sqsqueue

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// ParseRedrivePolicy reads a queue's RedrivePolicy attribute: the dead-letter queue's ARN and
// maxReceiveCount ("" and 0 when the policy is empty). SQS writes the count as a number or a
// string.
func ParseRedrivePolicy(policy string) (dlqArn string, maxReceives int, err error) {
	if policy == "" {
		return "", 0, nil
	}
	var p struct {
		Target string          `json:"deadLetterTargetArn"`
		Max    json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(policy), &p); err != nil {
		return "", 0, fmt.Errorf("the redrive policy %q is not JSON: %w", policy, err)
	}
	raw := string(p.Max)
	if s, err := strconv.Unquote(raw); err == nil {
		raw = s
	}
	if raw != "" {
		if maxReceives, err = strconv.Atoi(raw); err != nil {
			return "", 0, fmt.Errorf("the redrive policy's maxReceiveCount %s is not a number", p.Max)
		}
	}
	return p.Target, maxReceives, nil
}

// RedrivePolicy is the RedrivePolicy attribute sending messages to the queue dlqArn after
// maxReceives receives.
func RedrivePolicy(dlqArn string, maxReceives int) string {
	b, _ := json.Marshal(map[string]string{"deadLetterTargetArn": dlqArn, "maxReceiveCount": strconv.Itoa(maxReceives)})
	return string(b)
}
