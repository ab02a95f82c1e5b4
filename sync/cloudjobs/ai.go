package cloudjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aiblob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/awserr"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/mirror"
)

// AI in the cloud. Two shapes, as the backend has them:
//
//   - CAPTION_GENERATION and ELIGIBILITY_EXTRACT are queue jobs (seed 003): the file goes up
//     content-addressed, one SQS message carries the seeds' common fields and the handler's
//     input, the Lambda worker runs it and replies on the status queue (the mirror hands the
//     reply to the waiting job) after writing the outcome to results/jobs/<job_id>.json, which
//     the job also reads when it missed the reply;
//   - SUBGOAL_, ACTION_ and TASK_GENERATION are Step Functions executions of the goal workflows,
//     their state aiblob objects under results/ai.
//
// The cloud cannot see the device's database, so a goal travels with its job: before the
// execution starts, the goal as the device has it (its sub-goals, actions and tasks, under the
// device's ids) is written into the cloud's aiblob objects (aiblob.Store.Seed), and the workflow
// runs on the unchanged input {"goal_id": …} exactly as on the device. Pre-seeding rather than
// putting the goal in the input keeps the workflows and their functions as they are (the
// functions read their goal from the store in both places) and keeps large goals out of Step
// Functions' 256 KB input limit. Seeding happens only while the execution does not exist yet,
// so a dispatcher resumed after kill -9 never overwrites what the execution has written. When
// the execution ends, the goal's tree as the cloud left it (with the cloud's ids, which the
// device keeps) and the model calls of the invocations that made its new rows come home
// (aisqlite.ApplyCloudResult, one transaction, once per job).

// Job types of the AI family that run in the cloud.
var (
	queueAITypes = []string{aijob.TypeCaption, aijob.TypeEligibility}
	goalAITypes  = []string{aijob.TypeSubgoals, aijob.TypeActions, aijob.TypeTasks}
)

// TriggeredBy is the seeds' triggered_by of the messages the desktop sends.
const TriggeredBy = "jobdesk-desktop"

// QueueJobID is the job_id of device job id's message (created at created): unique across the
// devices sharing one backend, the same on every attempt, and the message's idempotency key
// (MessageDeduplicationId on a FIFO queue).
func QueueJobID(id int64, created time.Time) string {
	return fmt.Sprintf("jd-%d-%d", created.UnixMilli(), id)
}

// aiStore is the cloud's AI state (the Lambda worker's results/ai).
func aiStore(c *dispatch.Cloud) *aiblob.Store {
	return aiblob.New(c.Blobs, blob.Join(Results(c.Config), "ai"))
}

// QueueAI runs a CAPTION_GENERATION or ELIGIBILITY_EXTRACT job through its SQS queue.
func (d HandlerSet) QueueAI(typ string) dispatch.Handler {
	return func(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var in aijob.FileInput
		if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
			return nil, job.Errorf(job.E014, "the job input is not valid").WithJa("ジョブの入力が正しくありません。").Permanent()
		}
		url := c.Config.Queues[typ]
		if url == "" || c.SQS == nil {
			return nil, job.Errorf(job.E010, "No queue is configured for %s: add it to queues in cloud.json.", typ).
				WithJa(fmt.Sprintf("%s のキューが設定されていません。cloud.json の queues に追加してください。", typ)).Permanent()
		}
		info, _ := job.InfoFrom(ctx)
		self, err := d.Queue.Get(ctx, info.ID)
		if err != nil {
			return nil, err
		}
		id := QueueJobID(info.ID, self.CreatedAt)
		var replies <-chan mirror.Reply
		if d.Replies != nil {
			ch, stop := d.Replies(id, info.ID)
			defer stop()
			replies = ch
		}
		local := in.Path
		if in.Path, err = d.upload(ctx, c, local, "", r); err != nil {
			return nil, err
		}
		if res, ok, err := d.queueOutcome(ctx, c, id); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return d.homeQueueAI(ctx, c, typ, id, local, res)
		}
		if err := d.sendOnce(ctx, c, url, typ, id, info.Attempt, in); err != nil {
			return nil, err
		}
		r.Progress(15, "Waiting for the cloud worker")
		poll, maxPoll := 2*time.Second, time.Minute
		for {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case rep := <-replies:
				switch rep.Status {
				case cloudworker.StatusDone, cloudworker.StatusPartial:
					return d.homeQueueAI(ctx, c, typ, id, local, rep.Result)
				case cloudworker.StatusFailed:
					return nil, workerFailed(rep.Error)
				case cloudworker.StatusRetrying:
					msg := "The cloud worker retries"
					if rep.Error != nil {
						msg += ": " + rep.Error.Message
					}
					r.Progress(15, msg)
				}
			case <-time.After(poll):
				poll = min(poll*2, maxPoll)
				res, ok, err := d.queueOutcome(ctx, c, id)
				if err != nil && !dispatch.Offline(err) {
					return nil, err
				}
				if ok {
					return d.homeQueueAI(ctx, c, typ, id, local, res)
				}
				// The worker failed the job for good but its reply did not come (a status queue
				// that lost it, or none): its failure object says why.
				if failed, err := queueFailure(ctx, c, id); err != nil && !dispatch.Offline(err) {
					return nil, err
				} else if failed != nil {
					return nil, failed
				}
			}
		}
	}
}

// sentEvent is the history event that records a queue job's message went out.
const sentEvent = "MessageSent"

// sendOnce sends the job's message unless its history says it went out already (a job resumed
// after JobDesk stopped waits for the reply instead of sending again). A kill between the send
// and its record sends the same message again: on a FIFO queue its deduplication id drops it; on
// a standard queue the worker runs a job_id whose outcome exists only once.
func (d HandlerSet) sendOnce(ctx context.Context, c *dispatch.Cloud, url, typ, id string, attempt int, in aijob.FileInput) error {
	info, _ := job.InfoFrom(ctx)
	evs, err := d.Queue.History(ctx, info.ID)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if ev.Kind == sentEvent && ev.Message == id {
			return nil
		}
	}
	input, _ := json.Marshal(in)
	m := cloudworker.Message{Common: cloudworker.Common{JobType: typ, JobID: id, TriggeredAt: time.Now().UTC().Format(time.RFC3339),
		TriggeredBy: TriggeredBy, CorrelationID: id, RetryCount: max(attempt-1, 0)}, StatusQueueURL: c.Config.StatusQueue, Input: input}
	if c.Config.UserID != "" {
		m.UserID = aws.String(c.Config.UserID)
	}
	body, _ := json.Marshal(m)
	send := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(string(body))}
	if strings.HasSuffix(url, ".fifo") {
		send.MessageGroupId, send.MessageDeduplicationId = aws.String(id), aws.String(id)
	}
	out, err := c.SQS.SendMessage(ctx, send)
	if err != nil {
		return awserr.Classify(err, awserr.Where{Service: "SQS", Resource: url, Profile: c.Config.Profile, Permissions: "sqs:SendMessage"})
	}
	return d.Queue.AddEvent(ctx, info.ID, sentEvent, id, aws.ToString(out.MessageId))
}

// queueOutcome reads the worker's outcome object of job_id id (results/jobs/<id>.json); ok is
// false while there is none.
func (d HandlerSet) queueOutcome(ctx context.Context, c *dispatch.Cloud, id string) (json.RawMessage, bool, error) {
	b, err := blob.ReadAll(ctx, c.Blobs, blob.Join(Results(c.Config), "jobs", id+".json"))
	if errors.Is(err, blob.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var res cloudworker.JobResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, false, nil // unreadable: the worker replaces it
	}
	return res.Result, true, nil
}

// queueFailure is the error of queue job id when the worker failed it for good (its last
// failure object says FAILED: not retryable, or out of receives), else nil.
func queueFailure(ctx context.Context, c *dispatch.Cloud, id string) (*job.Error, error) {
	f, err := cloudworker.ReadFailure(ctx, c.Blobs, Results(c.Config), id)
	if err != nil || f == nil || f.Status != cloudworker.StatusFailed {
		return nil, err
	}
	return workerFailed(f.Error), nil
}

// workerFailed is the error a queue job ends with when the worker failed it for good with e.
func workerFailed(e *job.Error) *job.Error {
	if e == nil {
		return job.Errorf(job.E015, "the cloud worker failed the job").WithJa("クラウドのワーカーでジョブが失敗しました。").Permanent()
	}
	return e.Permanent()
}

// homeQueueAI brings a queue job's outcome home: the calls it made (under the worker's job
// number of id) and, for an extraction, its eligibility cache entry, applied once; the result
// reads as a device run's, naming the local file.
func (d HandlerSet) homeQueueAI(ctx context.Context, c *dispatch.Cloud, typ, id, localPath string, result json.RawMessage) (json.RawMessage, error) {
	ai := aiStore(c)
	usage, err := ai.UsageRecords(ctx, cloudworker.JobNumber(id))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(result, &m); err != nil || m == nil {
		return nil, job.Errorf(job.E015, "the cloud worker returned no result").WithJa("クラウドのワーカーから結果が返りませんでした。")
	}
	m["path"] = localPath
	cr := aisqlite.CloudResult{Usage: usage}
	if hash, _ := m["content_hash"].(string); typ == aijob.TypeEligibility && hash != "" {
		if e, ok, err := ai.CachedEligibility(ctx, hash); err != nil {
			return nil, err
		} else if ok {
			cr.Eligibility = &aisqlite.CloudEligibility{Hash: hash, Entry: e}
		}
	}
	info, _ := job.InfoFrom(ctx)
	st := aisqlite.New(d.DB)
	if _, err := st.ApplyCloudResult(ctx, info.ID, cr); err != nil {
		return nil, job.Wrap(job.E009, err, "the cloud's result could not be recorded").WithJa("クラウドの結果をデータベースに記録できませんでした。").Transient()
	}
	u, _ := st.JobUsage(ctx, info.ID)
	out, _ := json.Marshal(m)
	res, _, err := aijob.Outcome(typ, orchestrator.Execution{Output: out}, u)
	return res, err
}

// GoalAI runs a SUBGOAL_, ACTION_ or TASK_GENERATION job in the cloud: the job as the device
// runs it (aijob.RunJob), on the cloud's runtime. The goal is pre-seeded into the cloud's objects
// before its execution starts, the execution runs on Step Functions under the device's
// execution name (aijob.ExecutionName), and what it made, or left when it failed, comes home
// (homeGoal). A cloud that cannot be reached ends nothing: the job waits for the network.
func (d HandlerSet) GoalAI(typ string) dispatch.Handler {
	return func(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		st := aisqlite.New(d.DB)
		ai := aiStore(c)
		ex := d.executions(c)
		var sent aijob.Goal // the goal as the device sent it
		return aijob.RunJob(ctx, aijob.Runtime{
			Runtime: orchestrator.Runtime{Executions: ex, Job: d.Queue.Get},
			Service: aijob.NewService(st.State(), nil),
			SendGoal: func(ctx context.Context, workflow, name string, goalID int64, r job.Reporter) error {
				g, err := st.LoadGoal(ctx, goalID)
				if err != nil {
					return job.Wrap(job.E014, err, fmt.Sprintf("goal %d cannot be read", goalID)).
						WithJa(fmt.Sprintf("目標 %d を読み取れません。", goalID)).Permanent()
				}
				sent = g
				return seedGoal(ctx, ex, ai, workflow, name, g, r)
			},
			Home:    func(ctx context.Context, jobID int64) error { return d.homeGoal(ctx, ai, st, jobID, sent) },
			Usage:   st.TreeUsage,
			Waiting: dispatch.Offline,
		}, typ, raw, r)
	}
}

// seedGoal writes goal g, as the device has it (its sub-goals, actions and tasks, under the
// device's ids), into the cloud's objects, unless execution name of workflow exists already (a
// dispatcher resumed after kill -9 never overwrites what the execution has written).
func seedGoal(ctx context.Context, ex orchestrator.Executions, ai *aiblob.Store, workflow, name string, g aijob.Goal, r job.Reporter) error {
	if _, err := ex.Describe(ctx, workflow, name); err != nil {
		if je := job.AsError(err); je != nil && je.Retryable {
			return err
		}
		r.Progress(2, "Sending the goal to the cloud")
		if err := ai.Seed(ctx, g); err != nil {
			return job.Wrap(job.E010, err, "the goal could not be sent to the cloud").
				WithJa("目標をクラウドに送れませんでした。").Transient()
		}
	}
	return nil
}

// homeGoal applies the goal as the cloud left it to the device (once for job jobID): rows the
// device did not send are the generation's, linked to jobID, and the calls of the invocations
// that made them are recorded under jobID.
func (d HandlerSet) homeGoal(ctx context.Context, ai *aiblob.Store, st *aisqlite.Store, jobID int64, sent aijob.Goal) error {
	g, err := ai.LoadGoal(ctx, sent.ID)
	if err != nil {
		return err
	}
	known := map[int64]int64{} // id → the job that made it on the device
	for _, sg := range sent.Subgoals {
		known[sg.ID] = sg.JobID
		for _, a := range sg.Actions {
			known[a.ID] = a.JobID
			for _, t := range a.Tasks {
				known[-t.ID] = t.JobID // tasks' ids live apart
			}
		}
	}
	makers := map[int64]bool{} // the cloud invocations that made new rows
	relink := func(id int64, jobOf *int64) {
		if j, ok := known[id]; ok {
			*jobOf = j
			return
		}
		makers[*jobOf] = true
		*jobOf = jobID
	}
	for i := range g.Subgoals {
		sg := &g.Subgoals[i]
		relink(sg.ID, &sg.JobID)
		for k := range sg.Actions {
			a := &sg.Actions[k]
			relink(a.ID, &a.JobID)
			for n := range a.Tasks {
				relink(-a.Tasks[n].ID, &a.Tasks[n].JobID)
			}
		}
	}
	g.JobID = sent.JobID
	var usage []aijob.UsageRecord
	for n := range makers {
		if n == 0 {
			continue
		}
		us, err := ai.UsageRecords(ctx, n)
		if err != nil {
			return err
		}
		usage = append(usage, us...)
	}
	if _, err := st.ApplyCloudResult(ctx, jobID, aisqlite.CloudResult{Goal: &g, Usage: usage}); err != nil {
		return job.Wrap(job.E009, err, "the generated goal could not be recorded").
			WithJa("生成された目標をデータベースに記録できませんでした。").Transient()
	}
	return nil
}
