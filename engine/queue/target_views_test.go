package queue

import (
	"context"
	"testing"

	"jobdesk/engine/job"
)

func TestCountsByTarget(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	for _, target := range []string{job.TargetCloud, job.TargetCloud, job.TargetDevice} {
		if _, _, err := q.Enqueue(ctx, Params{Type: "x", Target: target}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := q.CountsByTarget(ctx, job.TargetCloud)
	if err != nil || c[job.Pending] != 2 || len(c) != 1 {
		t.Fatalf("cloud counts %v, %v", c, err)
	}
}
