package app

import (
	"context"
	"encoding/json"

	"jobdesk/app/aifamily"
	"jobdesk/app/csvfamily"
	"jobdesk/engine/aijob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
)

// The names below are the service API's names for the engine's and the cloud's values it hands
// out (results, plans, settings), so the window names them through the app and imports no engine
// package but the shared vocabulary (engine/job).

// MapRun is one Map state's run inside a workflow execution (MapRuns).
type MapRun = flow.MapRun

// TypeExecution is the job type of a workflow execution.
const TypeExecution = flow.TypeExecution

// CloudConfig is cloud.json as the app reads it (CloudConfig).
type CloudConfig = cloudconfig.Config

// CSV layouts: a column of a saved schema, and what sniffing a file proposed (CSVPlan).
type (
	CSVColumn      = csvjob.Column
	CSVSniffResult = csvjob.SniffResult
)

// The value types, the fields a column can feed, and how repeated values combine, in a CSV
// schema.
const (
	CSVTypeString   = csvjob.TypeString
	CSVTypeInteger  = csvjob.TypeInteger
	CSVTypeDecimal  = csvjob.TypeDecimal
	CSVTypeDate     = csvjob.TypeDate
	CSVTypeBoolean  = csvjob.TypeBoolean
	CSVFieldUserID  = csvjob.FieldUserID
	CSVFieldLogins  = csvjob.FieldLoginCount
	CSVFieldPosts   = csvjob.FieldPostCount
	CSVCombineSum   = csvjob.CombineSum
	CSVCombineMax   = csvjob.CombineMax
	CSVCombineMin   = csvjob.CombineMin
	CSVCombineFirst = csvjob.CombineFirst
	CSVCombineLast  = csvjob.CombineLast
)

// AI results: a goal's tree, the tokens a job used, an eligibility extraction and its items.
type (
	AIGoal            = aijob.Goal
	AIUsage           = aijob.Usage
	EligibilityResult = aijob.EligibilityResult
	EligibilityItem   = aijob.Item
)

// TypeEligibility is the job type of an eligibility extraction; LevelHeadings its fallback level
// at which requirements come from the document's headings only (details need checking).
const (
	TypeEligibility = aijob.TypeEligibility
	LevelHeadings   = aijob.LevelHeadings
)

// DefaultAIModel is the model the AI settings propose when none is set.
const DefaultAIModel = aifamily.DefaultModel

// withFailedResult gives a CSV import refused for too many rejected rows (FAILED, no result) the
// result its failure recorded (csvfamily.EventFailedResult, after the attempt's last start), so
// its rejected rows read and save as a PARTIAL import's do. Other jobs come back unchanged.
func (a *App) withFailedResult(ctx context.Context, j job.Job) job.Job {
	if j.Status != job.Failed || len(j.Result) != 0 {
		return j
	}
	hist, err := a.queue.History(ctx, j.ID)
	if err != nil {
		return j
	}
	for i := len(hist) - 1; i >= 0; i-- {
		switch hist[i].Kind {
		case job.EventStarted, job.EventRedriven:
			return j
		case csvfamily.EventFailedResult:
			if json.Valid([]byte(hist[i].Detail)) {
				j.Result = json.RawMessage(hist[i].Detail)
			}
			return j
		}
	}
	return j
}
