package aifamily

import "jobdesk/app/family"

// ResultView describes the AI family's results: a generation's goal and what it produced, a
// task run's successes and failures, an eligibility check's counts, a caption's words. The goal
// tree, the usage and the requirements have views of their own in a window.
func (*Family) ResultView() family.ResultView {
	return family.ResultView{
		Outcome: []string{"reason"},
		Counts: []string{"key", "success_count", "failed_count", "goal_id", "goal_status", "total_actions",
			"actions", "tasks", "description", "model", "must_count", "need_check_count", "must_not_count",
			"risk_flags_count", "missing_keys_count", "fallback_level", "source_job_id"},
		Files:      []string{"output_path"},
		Provenance: []string{"cached"},
		Hidden:     []string{"subgoals", "usage", "eligibility", "content_hash", "failed_actions"},
		Summary: []family.SummaryFigure{
			{Field: "success_count", Words: "result.succeeded"},
			{Field: "failed_count", Words: "result.failed"},
		},
	}
}
