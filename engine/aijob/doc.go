// Package aijob owns JobDesk's AI generation jobs: the provider contract (an OpenAI-compatible
// chat-completions server on the device, or Amazon Bedrock through a provider defined outside
// the engine), the JSON schemas every reply must satisfy and a small validator for them, and the
// handlers of SUBGOAL_GENERATION, ACTION_GENERATION, TASK_GENERATION, CAPTION_GENERATION and
// ELIGIBILITY_EXTRACT, which the shipped workflows call as Lambda functions (Functions). The AI
// job that runs such a workflow is declared here once (job.go: Workflows, ExecutionName, RunJob,
// Outcome, ExecutionFailure) and runs on the device's runtime (app/aifamily) or, for the goal
// generations, the cloud's (sync/cloudjobs).
//
// The handlers keep their state — goals → sub-goals → actions → tasks (the 9×9 mandala chart),
// per-call model usage, local notifications and the 7-day eligibility cache — behind small
// interfaces declared here (State), and read their input files by URI through engine/blob, so
// the package links into a Lambda binary: it imports neither SQLite nor the UI nor AWS. The
// SQLite implementation on the device is engine/aijob/aisqlite.
//
// Error classes follow the seeds: throttling, an unavailable service and network failures are
// retryable (E001/E002), and each call retries them by itself (Retrying, for any Provider),
// honouring the service's Retry-After, so a Task that makes many calls does not spend its retries
// one call after another; when those retries give up the failure is final and says after how
// many tries. Quota, authentication and bad requests fail at once (E007); a reply that
// is not valid JSON for its schema is retried once with the validation error in the prompt, then
// fails with E008. A provider that cannot be reached at all does not fail a job: the handler
// defers it (job.Defer) with the message "AI provider offline", and the queue starts it again by
// itself with a growing delay.
//
// The Bedrock provider lives in jobdesk/sync/bedrock (the only place that imports AWS) and
// implements Provider; the app wires it in.
package aijob
