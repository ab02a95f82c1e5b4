package mirror_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/mirror"
	"jobdesk/sync/sfnexec"
)

const (
	waitLong = `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`
	quick    = `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"End":true}}}`
)

// statusQueue is a status queue in memory: ReceiveMessage long-polls it as SQS does.
type statusQueue struct {
	mu       sync.Mutex
	msgs     []types.Message
	wake     chan struct{}
	receives atomic.Int64
	deleted  atomic.Int64
}

func newStatusQueue() *statusQueue { return &statusQueue{wake: make(chan struct{}, 1)} }

func (s *statusQueue) send(body string) {
	s.mu.Lock()
	s.msgs = append(s.msgs, types.Message{Body: aws.String(body), ReceiptHandle: aws.String(fmt.Sprint(len(s.msgs)))})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *statusQueue) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	s.receives.Add(1)
	deadline := time.After(time.Duration(in.WaitTimeSeconds) * time.Second)
	for {
		s.mu.Lock()
		if len(s.msgs) > 0 {
			n := min(len(s.msgs), int(in.MaxNumberOfMessages))
			out := append([]types.Message(nil), s.msgs[:n]...)
			s.msgs = s.msgs[n:]
			s.mu.Unlock()
			return &sqs.ReceiveMessageOutput{Messages: out}, nil
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline:
			return &sqs.ReceiveMessageOutput{}, nil
		case <-s.wake:
		}
	}
}

func (s *statusQueue) DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	s.deleted.Add(1)
	return &sqs.DeleteMessageOutput{}, nil
}

func setup(t testing.TB, sq *statusQueue, o mirror.Options) (*sfntest.Server, *sfnexec.Executor, *mirror.Mirror) {
	srv := sfntest.Start(t, functions.New(), map[string]string{"long": waitLong, "quick": quick})
	machines := map[string]string{"long": srv.StateMachineARN("long"), "quick": srv.StateMachineARN("quick")}
	ex := sfnexec.New(sfntest.NewClient(srv.Endpoint, func(o *sfn.Options) { o.RetryMaxAttempts = 1 }), sfnexec.Options{StateMachines: machines})
	if sq != nil {
		o.SQS, o.StatusQueue = sq, "http://status"
	}
	m := mirror.New(ex, nil, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, ex, m
}

// With 1,000 running cloud jobs and nothing changing, the mirror costs at most one AWS request
// a second on average (counted on the Step Functions stand-in and the status queue).
func TestThousandIdleExecutionsCostUnderOneRequestASecond(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 1,000 executions")
	}
	sq := newStatusQueue()
	srv, ex, m := setup(t, sq, mirror.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i <= 1000; i++ {
		x, err := ex.Start(ctx, "long", fmt.Sprintf("idle-%d", i), []byte(`{}`), orchestrator.StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Executions().Wait(job.WithInfo(ctx, job.Info{ID: int64(i)}), x, nil)
		}()
	}
	for m.Watching() < 1000 {
		time.Sleep(10 * time.Millisecond)
	}
	d0, r0 := srv.Count("DescribeExecution")+srv.Count("ListMapRuns")+srv.Count("GetExecutionHistory"), sq.receives.Load()
	const window = 10 * time.Second
	time.Sleep(window)
	calls := srv.Count("DescribeExecution") + srv.Count("ListMapRuns") + srv.Count("GetExecutionHistory") - d0 + sq.receives.Load() - r0
	rate := float64(calls) / window.Seconds()
	t.Logf("1,000 idle executions: %d AWS requests in %v (%.2f a second)", calls, window, rate)
	if rate > 1 {
		t.Fatalf("%.2f requests a second, want ≤ 1", rate)
	}
	cancel()
	wg.Wait()
}

// An execution's end is pushed: the status queue's event ends the wait at once (confirmed by one
// DescribeExecution), a repeated or out-of-order event changes nothing, and every message is
// deleted.
func TestPushedEndWakesTheJobOnce(t *testing.T) {
	sq := newStatusQueue()
	_, ex, m := setup(t, sq, mirror.Options{MinPoll: time.Hour, MaxPoll: time.Hour})
	ctx := context.Background()
	x, err := ex.Start(ctx, "quick", "pushed", []byte(`{}`), orchestrator.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan orchestrator.Execution, 1)
	go func() {
		end, _ := m.Executions().Wait(job.WithInfo(ctx, job.Info{ID: 1}), x, nil)
		got <- end
	}()
	for m.Watching() < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // the execution has ended; only the push can say so
	event := fmt.Sprintf(`{"source":"aws.states","detail-type":"Step Functions Execution Status Change","detail":{"executionArn":%q,"status":"SUCCEEDED"}}`, x.ARN)
	sq.send(fmt.Sprintf(`{"source":"aws.states","detail-type":"Step Functions Execution Status Change","detail":{"executionArn":%q,"status":"RUNNING"}}`, x.ARN))
	sq.send(event)
	select {
	case end := <-got:
		if end.Status != orchestrator.Succeeded {
			t.Fatalf("ended %s", end.Status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pushed end did not wake the job")
	}
	sq.send(event) // again, late
	deadline := time.Now().Add(5 * time.Second)
	for sq.deleted.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := sq.deleted.Load(); n != 3 {
		t.Fatalf("%d of 3 messages deleted", n)
	}
}

// Without a push, polling finds the end; the job on screen is polled every MinPoll.
func TestPollingFindsTheEnd(t *testing.T) {
	_, ex, m := setup(t, nil, mirror.Options{MinPoll: 100 * time.Millisecond, MaxPoll: 500 * time.Millisecond})
	ctx := context.Background()
	x, err := ex.Start(ctx, "quick", "polled", []byte(`{}`), orchestrator.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.SetOnScreen(9)
	end, err := m.Executions().Wait(job.WithInfo(ctx, job.Info{ID: 9}), x, nil)
	if err != nil || end.Status != orchestrator.Succeeded {
		t.Fatalf("%v %s", err, end.Status)
	}
}
