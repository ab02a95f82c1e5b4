package aijob_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
)

// throttledOnceThenAnswered answers the first call 429 with Retry-After: retryAfter(), every
// later call with a valid reply.
func throttledOnceThenAnswered(retryAfter func() string) aitest.Script {
	return func(c aitest.Call) aitest.Step {
		if c.N == 1 {
			return aitest.Step{Status: http.StatusTooManyRequests, ErrorType: "rate_limit_exceeded", RetryAfter: retryAfter()}
		}
		return aitest.Step{Text: aitest.Answer(c)}
	}
}

// A call waits as long as the server's Retry-After says, in seconds or as an HTTP date, before
// it tries again; then it succeeds. The shipped policy is used (its own backoff would come back
// sooner than the server asks).
func TestCallHonoursRetryAfter(t *testing.T) {
	for name, header := range map[string]func() string{
		"seconds":   func() string { return "1" },
		"HTTP date": func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) },
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var asked time.Time // the moment the server named
			srv := aitest.NewOpenAI(t, throttledOnceThenAnswered(func() string {
				h := header()
				mu.Lock()
				defer mu.Unlock()
				asked = time.Now().Add(time.Second)
				if d, err := http.ParseTime(h); err == nil {
					asked = d
				}
				return h
			}))
			s := newTestService(t, local(srv))
			s.CallRetry = NewService(State{}, nil).CallRetry
			if _, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard); err != nil {
				t.Fatal(err)
			}
			calls := srv.Calls()
			if len(calls) != 2 || calls[0].N != 1 || calls[1].N != 2 {
				t.Fatalf("%d calls, want the throttled one and one more", len(calls))
			}
			mu.Lock()
			defer mu.Unlock()
			if calls[1].At.Before(asked) {
				t.Fatalf("tried again %s after the 429, before the %s the server asked for",
					calls[1].At.Sub(calls[0].At), asked.Sub(calls[0].At))
			}
		})
	}
}

// A call the service keeps refusing as busy (429, 503, 500) is tried 1 + CallRetry.MaxAttempts
// times, then fails for good: not retryable, and saying after how many tries and what to do, in
// both languages. A refused request (400, 401) is tried once.
func TestCallRetriesThenFailsForGood(t *testing.T) {
	for _, tt := range []struct {
		step   aitest.Step
		code   job.Code
		name   string
		calls  int
		en, ja string
	}{
		{aitest.Step{Status: 429, ErrorType: "rate_limit_exceeded"}, job.E002, "ThrottlingException", 5,
			"the AI service is busy (rate limit): no answer after 5 tries; wait a few minutes, then retry the job",
			"5 回試しましたが応答がありませんでした。数分待ってからジョブを再試行してください。"},
		{aitest.Step{Status: 503}, job.E001, "ServiceUnavailableException", 5,
			"could not reach the AI service after 5 tries; check that it is running, then retry the job",
			"5 回接続を試みましたが"},
		{aitest.Step{Status: 500}, job.E001, "ServiceUnavailableException", 5, "after 5 tries", "5 回"},
		{aitest.Step{Status: 400, Message: "model 'x' not found"}, job.E007, "ValidationException", 1, "refused the request", "受け付けませんでした"},
		{aitest.Step{Status: 401}, job.E007, "AccessDeniedException", 1, "refused the credentials", "認証に失敗しました"},
	} {
		t.Run(fmt.Sprint(tt.step.Status), func(t *testing.T) {
			srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return tt.step })
			s := newTestService(t, local(srv))
			_, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard)
			je := job.AsError(err)
			if je == nil || je.Code != tt.code || je.ErrorName() != tt.name || je.Retryable {
				t.Fatalf("got %+v", je)
			}
			if n := len(srv.Calls()); n != tt.calls {
				t.Fatalf("%d calls, want %d", n, tt.calls)
			}
			if !strings.Contains(je.Message, tt.en) || !strings.Contains(je.MessageJa, tt.ja) || strings.Contains(je.MessageJa, "しばらくして再試行します") {
				t.Fatalf("message %q / %q", je.Message, je.MessageJa)
			}
			if u, _ := s.JobUsage(context.Background(), 1); u.Calls != tt.calls {
				t.Fatalf("usage records %d calls, want every try (%d)", u.Calls, tt.calls)
			}
		})
	}
}

// A Retry-After the context's deadline cannot wait for ends the call at once, final after its one
// try, rather than sleeping past the deadline; one longer than MaxRetryWait does not hold the
// call for longer than the deadline either.
func TestRetryAfterBeyondTheDeadlineFailsAtOnce(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step {
		return aitest.Step{Status: 429, RetryAfter: "3600"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Retrying{Provider: local(srv), Policy: NewService(State{}, nil).CallRetry}.Complete(ctx, Request{Prompt: "x"})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Kind != KindThrottled || pe.Attempts != 1 || pe.Retryable() || ctx.Err() != nil {
		t.Fatalf("%v (attempts %d, ctx %v)", err, pe.Attempts, ctx.Err())
	}
	if pe.RetryAfter == nil || *pe.RetryAfter != time.Hour {
		t.Fatalf("Retry-After read as %v", pe.RetryAfter)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Fatalf("%d calls", n)
	}
}

// scripted is a Provider that is no OpenAI client: it fails with errs in order, then answers.
type scripted struct {
	mu    sync.Mutex
	errs  []error
	calls int
}

func (p *scripted) Name() string  { return "scripted" }
func (p *scripted) Model() string { return "m" }
func (p *scripted) Complete(ctx context.Context, _ Request) (Reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if len(p.errs) > 0 {
		err := p.errs[0]
		p.errs = p.errs[1:]
		return Reply{}, err
	}
	return Reply{Text: "{}"}, nil
}

// Any Provider gets the retries (Bedrock's included): busy failures are retried, told to
// OnAttempt one by one; other failures return at once; a cancelled context ends the wait.
func TestRetryingAnyProvider(t *testing.T) {
	zero := time.Duration(0)
	policy := RetryPolicy{time.Millisecond, 4, 2}
	p := &scripted{errs: []error{&ProviderError{Kind: KindThrottled, RetryAfter: &zero}, &ProviderError{Kind: KindUnavailable},
		&ProviderError{Kind: KindNetwork}}}
	var seen []error
	rep, err := Retrying{Provider: p, Policy: policy, OnAttempt: func(_ Reply, err error) { seen = append(seen, err) }}.
		Complete(context.Background(), Request{})
	if err != nil || rep.Text != "{}" || p.calls != 4 || len(seen) != 4 || seen[3] != nil {
		t.Fatalf("%v: %d calls, %d seen", err, p.calls, len(seen))
	}
	for _, k := range []Kind{KindBadRequest, KindAuth, KindQuota, KindOffline, KindTimeout} {
		p = &scripted{errs: []error{&ProviderError{Kind: k}}}
		_, err := Retrying{Provider: p, Policy: policy}.Complete(context.Background(), Request{})
		var pe *ProviderError
		if !errors.As(err, &pe) || pe.Kind != k || pe.Attempts != 0 || p.calls != 1 {
			t.Fatalf("%s: %v after %d calls", k, err, p.calls)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	hour := time.Hour
	p = &scripted{errs: []error{&ProviderError{Kind: KindThrottled, RetryAfter: &hour}}}
	done := make(chan error)
	go func() {
		_, err := Retrying{Provider: p, Policy: policy}.Complete(ctx, Request{})
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if p.calls != 1 {
		t.Fatalf("%d calls after the cancel", p.calls)
	}
}

// A service that throttles every call once still gives all eight sub-goals their eight actions
// in one ACTION_GENERATION, each request answered on its second try.
func TestThrottledActionsComplete(t *testing.T) {
	srv := aitest.NewOpenAI(t, aitest.ThrottleOnce("0", nil))
	s := newTestService(t, local(srv))
	out, err := s.Actions(withJob(1), mustJSON(GoalInput{Title: "混雑"}), job.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res ActionResult
	if err := json.Unmarshal(out, &res); err != nil || res.Actions != 64 {
		t.Fatalf("%v: %s", err, out)
	}
	if n := len(srv.Calls()); n != 2*(1+8) {
		t.Fatalf("%d calls, want each of the 9 requests twice", n)
	}
}

// BenchmarkTasks64Throttled runs TASK_GENERATION for 64 actions through the task-generation
// workflow against a loopback server that throttles every request once (429, Retry-After: 0) and
// answers in 50 ms.
func BenchmarkTasks64Throttled(b *testing.B) {
	srv := aitest.NewOpenAI(b, nil)
	s, _, d := newTestDevice(b, local(srv), nil)
	s.CallRetry = NewService(State{}, nil).CallRetry
	g := goalWithActions(b, s)
	slow := func(c aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(c), Delay: 50 * time.Millisecond}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		srv.SetScript(aitest.ThrottleOnce("0", slow))
		start := time.Now()
		j := d.Run(b, TypeTasks, GoalInput{GoalID: g.ID, Regenerate: true})
		var res TaskResult
		if j.Status != job.Succeeded || json.Unmarshal(j.Result, &res) != nil || res.SuccessCount != 64 {
			b.Fatalf("%s %v: %s", j.Status, j.Error, j.Result)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/64actions")
	}
}
