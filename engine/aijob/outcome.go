package aijob

import (
	"context"
	"encoding/json"
	"fmt"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
)

// Outcome turns a succeeded AI workflow's execution of a job of type typ into the job's result,
// wherever it ran (the device's flow engine or Step Functions): the workflow's output with the
// usage of every call made for the job (u, when it has calls), PARTIAL for partly generated
// tasks or a fallback extraction. summary says in a few words what it made ("" for none).
func Outcome(typ string, x orchestrator.Execution, u Usage) (result json.RawMessage, summary string, err error) {
	var m map[string]any
	if err := json.Unmarshal(x.Output, &m); err != nil {
		return nil, "", job.Wrap(job.E015, err, "the AI workflow returned no result").WithJa("AI ワークフローの結果を読み取れませんでした。")
	}
	if u.Calls > 0 {
		m["usage"] = u
	}
	for _, k := range []string{"allSuccess", "partialSuccess", "notificationMessage"} {
		delete(m, k)
	}
	out, _ := json.Marshal(m)
	summary = summarize(typ, m)
	if typ == TypeTasks && m["goal_status"] == "partial" {
		return out, summary, job.PartialSuccess(out, fmt.Sprintf("%v of %v actions failed: %v", m["failed_count"], m["total_actions"], m["failed_actions"]))
	}
	if lvl, _ := m["fallback_level"].(float64); typ == TypeEligibility && lvl >= LevelHeadings {
		return out, summary, job.PartialSuccess(out, fmt.Sprintf("the model's reply was unusable; fallback level %v (details need checking)", lvl))
	}
	return out, summary, nil
}

// ExecutionFailure words the ends the AI workflows give themselves (seed 000's timeout, seed
// 001's "no action got its tasks"); a task's coded error e is kept as it is. It fits
// orchestrator.Spec.Failure.
func ExecutionFailure(_ context.Context, x orchestrator.Execution, e *job.Error) error {
	switch {
	case x.Status == orchestrator.TimedOut:
		return job.Errorf(job.E011, "the generation took longer than its limit").
			WithJa("処理時間が制限を超えました").WithName("States.Timeout").Permanent()
	case x.Error == "States.Timeout":
		return job.Errorf(job.E011, "the generation took longer than its limit").
			WithJa(x.Cause).WithName("States.Timeout").Permanent()
	case x.Error == "TaskGenerationFailed":
		return job.Errorf(job.E007, "no action got its tasks").WithJa(x.Cause).WithName(x.Error).Permanent()
	}
	return e
}

// summarize says in a few words what a finished AI workflow made, from its result.
func summarize(typ string, m map[string]any) string {
	count := func(k string) int {
		switch v := m[k].(type) {
		case []any:
			return len(v)
		case float64:
			return int(v)
		}
		return 0
	}
	switch typ {
	case TypeSubgoals:
		return fmt.Sprintf("%d sub-goals generated for goal %v", count("subgoals"), m["goal_id"])
	case TypeActions:
		return fmt.Sprintf("%d actions generated for goal %v", count("actions"), m["goal_id"])
	case TypeTasks:
		return fmt.Sprintf("%d tasks generated for %d of %d actions", count("tasks"), count("success_count"), count("total_actions"))
	case TypeCaption:
		return "caption written"
	case TypeEligibility:
		return "eligibility extracted"
	}
	return ""
}
