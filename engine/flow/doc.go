// Package flow is JobDesk's Amazon States Language engine: it runs Step Functions state machines
// durably on the device, on the SQLite job queue of engine/queue, so the same ASL files that ship
// with JobDesk deploy unchanged to AWS Step Functions. The pure language (parsing, validation,
// JSONPath, Parameters templates, intrinsic functions, Choice rules, Retry/Catch matching) lives
// in engine/flow/asl; this package makes it durable.
//
// # How an execution runs
//
// An execution is a queue job of the orchestrator type "flow.execution" (TypeExecution), so it
// shows in `jobdesk ls/show` and in the window like any job. Its handler interprets the state
// machine. Before and after every top-level Task, Wait, Map and Parallel state it writes a
// checkpoint (the state to run, its raw input, the visit counters) together with the history
// events buffered so far, in one transaction; Pass and Choice states are pure and are simply
// run again from the last checkpoint after a restart, which keeps a Pass/Choice chain fast.
//
// Every Task invocation is a child job of type "lambda:NAME" whose dedup key is derived from
// the execution, the redrive count, the state's path (with Map index and Parallel branch), the
// state's visit number and the attempt. A resumed orchestrator (after a kill -9 the lease lapses
// and another worker takes the job) therefore finds the child that already ran and reads its
// result instead of running it again; only tasks that were running at the kill run again.
// Finished Map iterations are recorded (flow_map_items) in batches, off the iterations' path,
// and skipped on resume and on redrive; an iteration not yet recorded at a kill runs again and
// finds its finished tasks by their dedup keys. Task jobs started at the same moment are
// enqueued together (the queue's group commit). Retry backoff and Wait states are child jobs of type "flow.timer" with a not-before
// time, so waiting survives a restart too. Nothing polls on a timer: a wait for a job (a Task's,
// a timer's, an execution's) watches that job's events (queue.Watch), and job rows are read and
// changed through the queue's verbs only, never with SQL of this package's own.
//
// # Progress
//
// An execution's progress is the share of its states done, the state now running counting by
// its own progress: a Map's by its items done plus the progress its running items' Tasks
// report, a top-level Task's by what its handler reports (rows read, pages done), whose message
// the execution's carries too. Those reports reach the execution as the task jobs' progress
// events; the orchestrator's Wait (Executions) passes the execution job's progress events on
// to the job a person sees the same way. It never goes back, and stops at 99 until the end.
//
// Task TimeoutSeconds and HeartbeatSeconds are enforced around the function's handler (the
// handler's progress reports are its heartbeats) and fail with States.Timeout and
// States.HeartbeatTimeout. Activities are served to external workers through GetActivityTask /
// SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat; arn:aws:states:::sns:publish records a
// notification (Notifications) and an event on the execution's job.
//
// # Differences from Step Functions
//
//   - A DISTRIBUTED Map runs its iterations inside the execution's job (each Task still a queue
//     job), not as executions started on their own. It records a map run with item counts, and
//     each iteration as a child execution of the map run (ListExecutions by mapRunArn,
//     DescribeExecution, GetExecutionHistory), as Step Functions shows them: listed RUNNING
//     within about 100 ms of its start, closed with its whole history when it ends, ABORTED
//     when the map run stops before it finishes. A child is redriven with its parent, not on
//     its own.
//   - Lambda Tasks record Task* history events (TaskScheduled, TaskSucceeded, …) for both the
//     function ARN and the lambda:invoke forms.
//   - A failed function Task's Cause is the function's coded error as JSON (job.Error.CauseJSON),
//     where Lambda gives its {"errorType","errorMessage"} envelope; job.ErrorFromCause reads both,
//     so a Catch, a Fail state's CausePath and the job reading the outcome get the same code and
//     sentences whichever executor ran the task. The Error name is the function's (ErrorName).
//   - ItemReader and ResultWriter read and write through a blob store (Options.Blobs), by URI: a
//     Bucket given as a URI ("s3://name") or named in Options.Buckets is that bucket; any other
//     Bucket is a folder (relative ones in the data folder); no Bucket makes Key the URI or path.
//     Without a Blobs store of its own the engine reads and writes local files only. Each result
//     file is written atomically. ItemReader reads CSV (header row or given headers) and JSON
//     arrays, one item at a time.
//   - A redrive resumes at the last top-level checkpoint; inside it, tasks that succeeded before
//     the redrive are found again by their dedup key and not re-run (Parallel branches, Map
//     iterations), while Pass/Choice states are evaluated again.
//   - JSONata expressions are evaluated by the JSONata 1.x port github.com/blues/jsonata-go, kept
//     in engine/flow/jsonata/internal and extended towards JSONata 2.x (??, ?:, $eval, the
//     picture functions, the @ and # bindings, the % parent operator); objects' keys are visited
//     in sorted order, not in the order they were written. An evaluation that nests deeper than
//     10,000 steps or runs longer than 10 s fails with U1001.
//   - TestState (Engine.TestState) runs a Task's function in-process and does not wait in a
//     Wait state; it refuses Map and Parallel states.
//   - States.Format prints an object's keys in sorted order (a decoded object keeps no order).
package flow
