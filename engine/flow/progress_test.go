package flow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// A top-level Task's own progress (a document's pages done) moves its execution's job, with
// the handler's message beside the state's name, while the Task still runs.
func TestTaskProgressMovesTheExecution(t *testing.T) {
	gate := make(chan struct{})
	v := newEnvWith(t, func(_ string, o *Options) {
		o.Functions = functions.New()
		o.Functions.Add(functions.Function{Name: "pages", Handler: func(ctx context.Context, _ json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			r.Progress(50, "page 5 of 10")
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return json.RawMessage(`{}`), nil
		}})
	})
	arn := v.machine(t, "pages", `{"StartAt":"Convert","States":{
		"Convert":{"Type":"Task","Resource":"`+lambdaARN+`pages","Next":"Done"},"Done":{"Type":"Succeed"}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{}`), StartOptions{Name: "pages-1"})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := v.q.Watch(x.JobID)
	defer stop()
	const want = "Convert: page 5 of 10"
	moved := func(pct float64, msg string) bool { return pct > 0 && pct < 99 && msg == want }
	if j, err := v.q.Get(ctx, x.JobID); err != nil || !moved(j.Progress, j.Message) {
		var seen []string
	wait:
		for {
			select {
			case ev := <-events:
				if ev.Kind == job.EventProgress {
					seen = append(seen, ev.Message)
					if moved(ev.Progress, ev.Message) {
						break wait
					}
				}
			case <-ctx.Done():
				t.Fatalf("the execution's job never showed %q while its Task ran (messages %s)", want, strings.Join(seen, "; "))
			}
		}
	}
	close(gate)
	if x, err = v.e.Wait(ctx, x.ARN); err != nil || x.Status != StatusSucceeded {
		t.Fatalf("%s %v", x.Status, err)
	}
}
