package sfnapi_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"jobdesk/engine/flow/sfnapi"
)

// BenchmarkDescribeExecution measures one read through the whole stack: the SDK client, HTTP
// on 127.0.0.1, the server and the engine's SQLite read.
func BenchmarkDescribeExecution(b *testing.B) {
	h := newHarness(b, sfnapi.Options{Logf: b.Logf})
	ctx := context.Background()
	sm := h.machine(b, "pass", `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)
	out, err := h.c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"a":1}`)})
	if err != nil {
		b.Fatal(err)
	}
	in := &sfn.DescribeExecutionInput{ExecutionArn: out.ExecutionArn}
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.c.DescribeExecution(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartSyncExecution measures a whole execution of a one-state machine started and
// awaited over the API: the durable start, the orchestrator job and the answer.
func BenchmarkStartSyncExecution(b *testing.B) {
	h := newHarness(b, sfnapi.Options{Logf: b.Logf})
	ctx := context.Background()
	sm := h.machine(b, "pass", `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)
	in := &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"a":1}`)}
	b.ResetTimer()
	for b.Loop() {
		out, err := h.c.StartSyncExecution(ctx, in)
		if err != nil || out.Status != types.SyncExecutionStatusSucceeded {
			b.Fatal(out, err)
		}
	}
}
