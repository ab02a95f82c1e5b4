package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// TestServeAnswersAnyRegion: a client whose profile says ap-northeast-1 signs for that region;
// `jobdesk serve` answers it, and the ARNs it hands that client carry that region (and are
// understood when the client sends them back). With --region the one region is pinned and a
// signature for another is refused as AWS refuses it.
func TestServeAnswersAnyRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	srv := startServe(t, dir, nil)
	key, err := ServeCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, region := range []string{"ap-northeast-1", "us-west-2", "local"} {
		c := serveClient(srv.endpoint, key.AccessKeyID, key.SecretAccessKey, func(o *sfn.Options) { o.Region = region })
		list, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
		if err != nil {
			t.Fatalf("signed for %s: %v", region, err)
		}
		if len(list.StateMachines) == 0 {
			t.Fatal("no state machines")
		}
		arn := aws.ToString(list.StateMachines[0].StateMachineArn)
		if !strings.HasPrefix(arn, "arn:aws:states:"+region+":") {
			t.Fatalf("signed for %s, ARN %s", region, arn)
		}
		d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: &arn})
		if err != nil || aws.ToString(d.StateMachineArn) != arn {
			t.Fatalf("describe %s: %v %v", arn, d, err)
		}
	}

	pinnedDir := t.TempDir()
	pinned := startServe(t, pinnedDir, nil, "--region", "eu-central-1")
	pk, _ := ServeCredentials(pinnedDir)
	c := serveClient(pinned.endpoint, pk.AccessKeyID, pk.SecretAccessKey, func(o *sfn.Options) { o.Region = "eu-central-1" })
	list, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || !strings.HasPrefix(aws.ToString(list.StateMachines[0].StateMachineArn), "arn:aws:states:eu-central-1:") {
		t.Fatalf("pinned region: %v %v", list, err)
	}
	c = serveClient(pinned.endpoint, pk.AccessKeyID, pk.SecretAccessKey, func(o *sfn.Options) { o.Region = "ap-northeast-1" })
	if _, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err == nil || !strings.Contains(err.Error(), "InvalidSignatureException") {
		t.Fatalf("a signature for another region than --region: %v", err)
	}
}
