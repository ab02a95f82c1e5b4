package sfnexec_test

import (
	"encoding/json"
	"testing"

	"jobdesk/engine/orchestrator"
	"jobdesk/sync/sfnexec"
)

// TestStatusChangeReadsAsDescribe: a status change event from the status queue reads its status
// as DescribeExecution's does — a redrive under way is running, an end is that end.
func TestStatusChangeReadsAsDescribe(t *testing.T) {
	for status, want := range map[string]string{
		"RUNNING": orchestrator.Running, "PENDING_REDRIVE": orchestrator.Running,
		"SUCCEEDED": orchestrator.Succeeded, "FAILED": "FAILED", "ABORTED": "ABORTED", "TIMED_OUT": "TIMED_OUT", "": "",
	} {
		var ev sfnexec.StatusChange
		body := `{"executionArn":"arn:aws:states:ap-northeast-1:1:execution:wf:x","name":"x","status":"` + status + `"}`
		if err := json.Unmarshal([]byte(body), &ev); err != nil {
			t.Fatal(err)
		}
		x := ev.Execution()
		if x.Status != want || x.Name != "x" || x.ARN != "arn:aws:states:ap-northeast-1:1:execution:wf:x" || sfnexec.Status(status) != want {
			t.Errorf("%q reads as %+v, want status %q", status, x, want)
		}
	}
	if pct, msg := sfnexec.MapProgress(3, 12); pct != 25 || msg != "3 / 12 items" {
		t.Errorf("MapProgress(3, 12) = %v, %q", pct, msg)
	}
}
