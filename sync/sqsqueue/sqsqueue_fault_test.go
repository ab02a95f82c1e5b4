package sqsqueue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/queueport"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/faultproxy"
	"jobdesk/sync/sqsqueue"
)

// The network in front of local-aws-sqs fails in each way the fault proxy knows while job
// messages are sent, received and deleted through the adapter, each send retried until it is
// answered, as the dispatcher and the console do. On a FIFO queue the job's idempotency key as
// MessageDeduplicationId makes a send whose answer was lost count once: in the end every job's
// message is there exactly once, and every message received is deleted once done.

var sqsFaults = []struct {
	name string
	hold time.Duration
	set  func(p *faultproxy.Proxy)
}{
	{"dropped mid-request", 0, func(p *faultproxy.Proxy) { p.Set(faultproxy.DropHalf) }},
	{"answer lost", 0, func(p *faultproxy.Proxy) { p.Set(faultproxy.DropReply) }},
	{"blackhole 10s", 10 * time.Second, func(p *faultproxy.Proxy) { p.Set(faultproxy.Blackhole) }},
	{"500", 0, func(p *faultproxy.Proxy) { p.SetAnswer(faultproxy.InternalError) }},
	{"503", 0, func(p *faultproxy.Proxy) { p.SetAnswer(faultproxy.Unavailable) }},
	{"throttled", 0, func(p *faultproxy.Proxy) { p.SetAnswer(faultproxy.Throttling) }},
}

func TestFaultsInFrontOfSQSNeitherDuplicateNorLose(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s blackhole")
	}
	srv := awstest.StartSQS(t)
	proxy := faultproxy.Start(t, srv.Endpoint)
	client := sqs.NewFromConfig(aws.Config{Region: srv.Region, HTTPClient: dispatch.HTTPClient(time.Second),
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")}, func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(proxy.URL())
		o.RetryMaxAttempts = 2
	})
	ctx := context.Background()
	for _, f := range sqsFaults {
		t.Run(f.name, func(t *testing.T) {
			defer proxy.Set(faultproxy.Pass)
			url := createWithDLQ(t, srv, true, 3)
			q := sqsqueue.New(client, url)
			direct, err := sqsqueue.Open(ctx, srv.Client, url)
			if err != nil {
				t.Fatal(err)
			}

			// Send while the network fails, and on until it is back.
			f.set(proxy)
			const jobs = 5
			sent := make(chan error, jobs)
			for i := 0; i < jobs; i++ {
				go func() {
					sent <- retry(ctx, func(ctx context.Context) error {
						_, err := q.Send(ctx, queueport.Outgoing{Body: fmt.Sprintf(`{"job_id":"job-%d"}`, i), DedupID: fmt.Sprintf("job-%d", i)})
						return err
					})
				}()
			}
			time.Sleep(max(f.hold, 500*time.Millisecond))
			proxy.Set(faultproxy.Pass)
			for i := 0; i < jobs; i++ {
				if err := <-sent; err != nil {
					t.Fatal(err)
				}
			}

			// Receive and delete while the network fails: a message whose delete is lost comes
			// back after its visibility timeout and is deleted then.
			f.set(proxy)
			got := map[string]map[string]bool{} // body → the ids of the messages received with it
			done := make(chan error, 1)
			go func() {
				done <- retry(ctx, func(ctx context.Context) error {
					for len(got) < jobs {
						ds, err := q.Receive(ctx, queueport.ReceiveParams{Max: 10, Visibility: time.Second})
						if err != nil {
							return err
						}
						for _, d := range ds {
							if got[d.Body] == nil {
								got[d.Body] = map[string]bool{}
							}
							got[d.Body][d.ID] = true
							if err := q.Delete(ctx, d.Receipt); err != nil && !errors.Is(err, queueport.ErrReceiptInvalid) {
								return err
							}
						}
					}
					return nil
				})
			}()
			time.Sleep(max(f.hold, 500*time.Millisecond))
			proxy.Set(faultproxy.Pass)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// Whatever came back after a lost delete is taken once more; then the queue is empty.
			time.Sleep(1100 * time.Millisecond)
			for {
				ds, err := direct.Receive(ctx, queueport.ReceiveParams{Max: 10, Visibility: 30 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) == 0 {
					break
				}
				for _, d := range ds {
					if !got[d.Body][d.ID] {
						t.Fatalf("message %s (%s) was received only now", d.ID, d.Body)
					}
					direct.Delete(ctx, d.Receipt)
				}
			}
			for i := 0; i < jobs; i++ {
				switch ids := got[fmt.Sprintf(`{"job_id":"job-%d"}`, i)]; len(ids) {
				case 0:
					t.Fatalf("job-%d's message was lost: %v", i, got)
				case 1:
				default:
					t.Fatalf("job-%d's message was sent %d times: %v", i, len(ids), ids)
				}
			}
			if len(got) != jobs {
				t.Fatalf("%d distinct messages for %d jobs: %v", len(got), jobs, got)
			}
			dl, err := direct.DeadLetters(ctx, 10)
			if err != nil || len(dl) != 0 {
				t.Fatalf("dead letters %v %v", dl, err)
			}
		})
	}
}

// retry calls fn until it succeeds, spaced by 50 ms, for at most 30 s.
func retry(ctx context.Context, fn func(context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := fn(ctx)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
