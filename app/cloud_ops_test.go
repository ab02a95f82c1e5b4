package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudops/cloudopstest"
)

// openConsole starts a local backend (local-aws-sqs, versitygw, the Step Functions stand-in with
// machines) and opens its console through a data folder's cloud.json, as the window does.
func openConsole(t *testing.T, jobTypes []string, machines map[string]string) (*cloudopstest.Backend, *CloudConsole) {
	t.Helper()
	b := cloudopstest.Start(t, jobTypes, machines)
	dir := t.TempDir()
	b.WriteConfig(dir)
	con, err := (&App{cfg: Config{DataDir: dir}}).CloudConsole(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b, con
}

// TestCloudConsoleQueues: on real SQS, the counts follow the messages sent; a dead-lettered
// message is listed with the error its job failed with; redrive moves it back; purge empties.
func TestCloudConsoleQueues(t *testing.T) {
	b, con := openConsole(t, CloudJobTypes(), nil)
	ctx := context.Background()

	types := con.JobTypes()
	if len(types) != 7 || types[0].Name != "ATTACHMENT_CONVERT" || types[0].TitleJa == "" || types[0].Queue == "" {
		t.Fatalf("job types %+v", types)
	}
	tmpl, err := con.MessageTemplate("EVALUATION")
	if err != nil || !strings.Contains(tmpl, `"trigger"`) {
		t.Fatalf("template %q, %v", tmpl, err)
	}
	body := `{"trigger":"NEW_SUBSIDY","subsidy_ids":["s1"]}`
	filled, err := con.FillMessage("EVALUATION", body)
	if err != nil || !strings.Contains(filled, `"job_id"`) || !strings.Contains(filled, `"triggered_by": "USER"`) {
		t.Fatalf("filled %s, %v", filled, err)
	}
	for i := 0; i < 3; i++ {
		if _, err := con.SendMessage(ctx, "EVALUATION", body); err != nil {
			t.Fatal(err)
		}
	}
	if b.Take("EVALUATION") == "" {
		t.Fatal("no message to take")
	}
	qs, err := con.Queues(ctx)
	if err != nil || len(qs) != 7 {
		t.Fatalf("queues %+v, %v", qs, err)
	}
	for _, q := range qs {
		switch {
		case q.JobType == "EVALUATION":
			// local-aws-sqs counts in-flight messages among the visible ones too.
			if q.Queue.InFlight != 1 || (q.Queue.Visible != 2 && q.Queue.Visible != 3) || q.DeadLetter == nil || q.DeadLetter.Visible != 0 {
				t.Errorf("EVALUATION: %+v / %+v; want 2 waiting, 1 in flight, an empty dead-letter queue", q.Queue, q.DeadLetter)
			}
		case q.Queue.Visible != 0 || q.Queue.InFlight != 0:
			t.Errorf("%s: %+v; want empty", q.JobType, q.Queue)
		}
	}

	// Purge: the count first; SQS takes up to a minute to empty the queue (checked at the end),
	// and refuses another purge meanwhile, in a sentence.
	if n, err := con.PurgeCount(ctx, "EVALUATION", false); err != nil || n < 3 {
		t.Fatalf("purge count %d, %v; want the 3 messages", n, err)
	}
	if _, err := con.Purge(ctx, "EVALUATION", false); err != nil {
		t.Fatal(err)
	}
	if _, err := con.Purge(ctx, "EVALUATION", false); job.AsError(err) == nil || !strings.Contains(job.AsError(err).Message, "already being purged") {
		t.Fatalf("a second purge at once: %v; want SQS's refusal", err)
	}

	// A bad body is refused with a sentence naming the field, and nothing is sent.
	_, err = con.SendMessage(ctx, "NOTIFICATION", `{"notification_type":"NEW_MATCH"}`)
	if e := job.AsError(err); e == nil || e.Code != job.E014 || !strings.Contains(e.Message, `"user_id"`) || !strings.Contains(e.MessageJa, "がありません") {
		t.Fatalf("bad body: %v", err)
	}
	if _, err := con.SendMessage(ctx, "NOTIFICATION", `not json`); job.AsError(err).Code != job.E014 {
		t.Fatalf("not JSON: %v", err)
	}
	if n := b.Queue("NOTIFICATION", false); n.Visible != 0 {
		t.Fatalf("a refused message reached the queue: %+v", n)
	}

	// A caption job fails three times and lands in the dead-letter queue with its error.
	sent, err := con.SendMessage(ctx, "CAPTION_GENERATION", `{"s3_path":"inputs/photo.png"}`)
	if err != nil {
		t.Fatal(err)
	}
	id := b.DeadLetter("CAPTION_GENERATION", job.Errorf(job.E006, "the image cannot be decoded"))
	if id != sent.JobID {
		t.Fatalf("dead-lettered job %q; sent %q", id, sent.JobID)
	}
	dls, err := con.DeadLetters(ctx, "CAPTION_GENERATION", 10)
	if err != nil || len(dls) != 1 || dls[0].JobID != id || dls[0].Error != "E006: the image cannot be decoded" {
		t.Fatalf("dead letters %+v, %v", dls, err)
	}
	if n, err := con.RedriveCount(ctx, "CAPTION_GENERATION"); err != nil || n != 1 {
		t.Fatalf("redrive count %d, %v; want 1", n, err)
	}
	r, err := con.Redrive(ctx, "CAPTION_GENERATION")
	if err != nil || r.ToMove != 1 {
		t.Fatalf("redrive %+v, %v", r, err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for b.Queue("CAPTION_GENERATION", true).Visible != 0 || b.Queue("CAPTION_GENERATION", false).Visible != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after the redrive: queue %+v, dead letters %+v", b.Queue("CAPTION_GENERATION", false), b.Queue("CAPTION_GENERATION", true))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var back map[string]any
	if json.Unmarshal([]byte(b.Take("CAPTION_GENERATION")), &back); back["job_id"] != id {
		t.Fatalf("the queue gave back %v; want job %s", back, id)
	}

	// The purge lands: SQS empties a queue within 60 seconds of PurgeQueue, as local-aws-sqs does.
	deadline = time.Now().Add(75 * time.Second)
	for n := b.Queue("EVALUATION", false); n.Visible+n.InFlight != 0; n = b.Queue("EVALUATION", false) {
		if time.Now().After(deadline) {
			t.Fatalf("75 s after the purge: %+v", n)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if _, err := con.Queue(ctx, "NO_SUCH"); job.AsError(err).Code != job.E014 {
		t.Fatalf("an unknown queue: %v", err)
	}
}

// TestCloudConsoleExecutions: executions listed per state machine and status on the Step
// Functions stand-in; a failed one redriven; a succeeded one refused.
func TestCloudConsoleExecutions(t *testing.T) {
	b, con := openConsole(t, []string{"EVALUATION"}, map[string]string{
		"boom": `{"StartAt":"Boom","States":{"Boom":{"Type":"Fail","Error":"Boom","Cause":"on purpose"}}}`,
		"fine": `{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}`,
	})
	ctx := context.Background()
	failed := b.Run("boom", "boom-1")
	b.Run("fine", "fine-1")
	if got := strings.Join(con.StateMachines(), ","); got != "boom,fine" {
		t.Fatalf("state machines %q", got)
	}
	es, err := con.Executions(ctx, CloudExecutionFilter{StateMachine: "boom"})
	if err != nil || len(es) != 1 || es[0].ARN != failed || es[0].Status != "FAILED" || !CanRedriveExecution(es[0].Status) {
		t.Fatalf("boom's executions %+v, %v", es, err)
	}
	if es, err := con.Executions(ctx, CloudExecutionFilter{Status: "SUCCEEDED"}); err != nil || len(es) != 1 || es[0].Name != "fine-1" ||
		CanRedriveExecution(es[0].Status) {
		t.Fatalf("succeeded executions %+v, %v", es, err)
	}
	if u := con.ExecutionConsoleURL(failed); !strings.Contains(u, "console.aws.amazon.com") || !strings.HasSuffix(u, failed) {
		t.Fatalf("console URL %q", u)
	}
	r, err := con.RedriveExecution(ctx, failed, "")
	if err != nil || r.ARN != failed {
		t.Fatalf("redrive %+v, %v", r, err)
	}
	if st := b.WaitStopped(failed); st != "FAILED" {
		t.Fatalf("after the redrive: %s", st)
	}
	if es, _ := con.Executions(ctx, CloudExecutionFilter{StateMachine: "boom"}); len(es) != 1 || es[0].RedriveCount != 1 {
		t.Fatalf("after the redrive: %+v; want redrive count 1", es)
	}
	if _, err := con.RedriveExecution(ctx, "fine-1", ""); job.AsError(err).Code != job.E014 {
		t.Fatalf("redrive of a succeeded execution: %v", err)
	}
}

// TestCloudConsoleWithoutCloudJSON: no cloud.json is an E014 saying how to write one.
func TestCloudConsoleWithoutCloudJSON(t *testing.T) {
	_, err := (&App{cfg: Config{DataDir: t.TempDir()}}).CloudConsole(context.Background())
	if e := job.AsError(err); e == nil || e.Code != job.E014 || !strings.Contains(e.Message, "--from-stack-outputs") {
		t.Fatalf("%v", err)
	}
}
