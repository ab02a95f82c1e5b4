package cloudjobs_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"jobdesk/app"
	"jobdesk/engine/aijob"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudops/cloudopstest"
)

// TestQueueJobFailedWithoutItsReply: a caption job sent to its SQS queue, which the worker
// failed for good (three receives, then the dead-letter queue) but whose reply never reached
// the device, ends FAILED with the worker's error, read from the job's failure object, instead
// of waiting for ever.
func TestQueueJobFailedWithoutItsReply(t *testing.T) {
	b := cloudopstest.Start(t, []string{aijob.TypeCaption}, nil)
	dir := t.TempDir()
	b.WriteConfig(dir)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	a, err := app.Open(app.Config{DataDir: dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx := context.Background()
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "photo.png")
	pngFile(t, img, 8)
	jobs, err := a.Submit(ctx, []string{img}, app.SubmitOptions{Target: app.TargetCloud})
	if err != nil || jobs[0].Type != aijob.TypeCaption || jobs[0].Target != job.TargetCloud {
		t.Fatalf("submit: %+v %v", jobs, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.Queue(aijob.TypeCaption, false).Visible == 0 {
		if time.Now().After(deadline) {
			j, _ := a.Get(ctx, jobs[0].ID)
			t.Fatalf("the job's message did not reach its queue: %s %s", j.Status, j.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.DeadLetter(aijob.TypeCaption, job.Errorf(job.E006, "the image cannot be decoded").WithJa("画像を読み取れません。"))

	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	j, err := a.Wait(wctx, jobs[0].ID)
	if err != nil || j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E006 || j.Error.Message != "the image cannot be decoded" {
		t.Fatalf("job ended %s %+v (%v); want FAILED with the worker's E006", j.Status, j.Error, err)
	}
}
