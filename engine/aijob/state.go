package aijob

import (
	"context"
	"errors"
	"time"
)

// The handlers keep their state behind the small interfaces below, declared here by what the
// handlers need rather than by how a database lays it out, so this package links into a Lambda
// binary without SQLite. JobDesk's implementation on the device is engine/aijob/aisqlite.

// State is where a Service keeps what its handlers read and write.
type State struct {
	// Goals keeps the goals and their charts; the goal generation handlers need it.
	Goals GoalStore
	// Usage records every model call; nil records nothing (and usage sums are empty).
	Usage UsageLog
	// Notifier keeps the local notifications of partial or failed generations and alerts.
	Notifier Notifier
	// Cache keeps ELIGIBILITY_EXTRACT's results by content hash.
	Cache EligibilityCache
	// Jobs finds the AI job a workflow's function job works for; nil: rows link to the running
	// job itself.
	Jobs JobLineage
}

// ErrGoalNotFound is returned for a goal id that does not exist.
var ErrGoalNotFound = errors.New("goal not found")

// ErrActionNotFound is returned by GoalStore.SaveTasks for an action id that does not exist.
var ErrActionNotFound = errors.New("action not found")

// GoalStore keeps goals and their 9×9 charts: sub-goals, actions and tasks, each row linked to
// the job that made it (jobID 0: none). Saves of a chart level are atomic: all rows or none.
type GoalStore interface {
	// CreateGoal stores a new goal (status draft) and returns its id.
	CreateGoal(ctx context.Context, title, description, deadline string) (int64, error)
	// LoadGoal reads a goal with its whole chart in position order; ErrGoalNotFound when there
	// is none.
	LoadGoal(ctx context.Context, id int64) (Goal, error)
	// ListGoals lists every goal without its chart, newest first.
	ListGoals(ctx context.Context) ([]Goal, error)
	// SetGoalStatus sets a goal's status.
	SetGoalStatus(ctx context.Context, id int64, status string) error
	// LinkGoalJob records jobID as the goal's job unless it already has one.
	LinkGoalJob(ctx context.Context, goalID, jobID int64) error
	// FailGoal turns a goal that is draft or processing into failed and reports whether it
	// did, with the goal's title.
	FailGoal(ctx context.Context, id int64) (title string, failed bool, err error)
	// ReleaseGoal ends a goal's processing that was cancelled: it becomes active when some action
	// has tasks, else draft. A goal that is not processing is left alone.
	ReleaseGoal(ctx context.Context, id int64) error
	// ClearGoalFailure turns a failed goal that has no tasks yet back into a draft.
	ClearGoalFailure(ctx context.Context, id int64) error
	// SaveSubgoals stores a goal's sub-goals at positions 1… With replace they replace the
	// goal's sub-goals; without, a goal that already has sub-goals keeps them and sgs are dropped.
	SaveSubgoals(ctx context.Context, goalID, jobID int64, sgs []GenSubgoal, replace bool) error
	// SaveActions stores a sub-goal's actions as SaveSubgoals does a goal's sub-goals.
	SaveActions(ctx context.Context, subgoalID, jobID int64, as []GenAction, replace bool) error
	// SaveTasks replaces an action's tasks and marks the action done, and returns the new task
	// ids; ErrActionNotFound (and nothing saved) when the action does not exist.
	SaveTasks(ctx context.Context, actionID, jobID int64, ts []GenTask) ([]int64, error)
	// MarkActionFailed marks an action whose task generation failed, unless it is done.
	MarkActionFailed(ctx context.Context, actionID int64) error
}

// UsageRecord is one model call (seed 003's llm_usage).
type UsageRecord struct {
	JobID            int64 // the AI job it worked for; 0: none
	Purpose          string
	Provider         string
	Model            string
	PromptTokens     int
	CompletionTokens int
	Latency          time.Duration
	CostUSD          *float64 // nil: the model has no price
	OK               bool
	At               time.Time
}

// UsageLog keeps one record per model call, which the results' usage and the failure-rate
// alert add up.
type UsageLog interface {
	RecordUsage(ctx context.Context, u UsageRecord) error
	// JobUsage sums the calls recorded for job id.
	JobUsage(ctx context.Context, id int64) (Usage, error)
	// CallOutcomes counts the failed calls and all calls recorded after from, up to to.
	CallOutcomes(ctx context.Context, from, to time.Time) (failed, total int, err error)
}

// Notifier keeps the local notifications (seed 001 sends SNS on partial success or failure).
type Notifier interface {
	// Notify keeps n (its ID is assigned) as raised at at.
	Notify(ctx context.Context, n Notification, at time.Time) error
	// Notifications lists the notifications, newest first.
	Notifications(ctx context.Context) ([]Notification, error)
	// AlertsSince counts the notifications of level "alert" raised after t.
	AlertsSince(ctx context.Context, t time.Time) (int, error)
}

// CachedEligibility is one entry of the eligibility cache.
type CachedEligibility struct {
	Eligibility Eligibility
	Level       int       // the fallback level that produced it
	At          time.Time // when it was extracted
}

// EligibilityCache keeps ELIGIBILITY_EXTRACT's results by the SHA-256 of the document; the
// Service decides when an entry is too old (CacheTTL).
type EligibilityCache interface {
	// CachedEligibility returns the entry of hash, or ok false when there is none (or it is
	// unreadable).
	CachedEligibility(ctx context.Context, hash string) (e CachedEligibility, ok bool, err error)
	// CacheEligibility keeps e under hash, replacing an older entry.
	CacheEligibility(ctx context.Context, hash string, e CachedEligibility) error
}

// JobLineage answers which job started a job, so that rows written by a workflow's function
// job link to the AI job the person asked for.
type JobLineage interface {
	// JobParent returns job id's type and the id of the job that started it (0: none).
	JobParent(ctx context.Context, id int64) (typ string, parentID int64, err error)
}
