package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
)

func TestJobTarget(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	os.WriteFile(csv, []byte("a,b\n1,2\n"), 0o644)
	ctx := context.Background()
	for _, c := range []struct{ flag, want string }{{"", job.TargetDevice}, {"device", job.TargetDevice}, {"auto", job.TargetDevice}} {
		if got, err := JobTarget(ctx, dir, c.flag, "csv", csv); err != nil || got != c.want {
			t.Fatalf("%q: %q %v", c.flag, got, err)
		}
	}
	if _, err := JobTarget(ctx, dir, "cloud", "csv", csv); err == nil {
		t.Fatal("cloud without cloud.json was accepted")
	}
	if _, err := JobTarget(ctx, dir, "moon", "csv", csv); err == nil {
		t.Fatal("a bad --target was accepted")
	}
	cloudconfig.Save(dir, cloudconfig.Config{Bucket: "b", StateMachines: map[string]string{"csv-processing": "arn:aws:states:us-east-1:1:stateMachine:csv"}})
	if got, err := JobTarget(ctx, dir, "cloud", "csv", csv); err != nil || got != job.TargetCloud {
		t.Fatalf("cloud: %q %v", got, err)
	}
	// A small file stays on the device under auto.
	if got, err := JobTarget(ctx, dir, "auto", "csv", csv); err != nil || got != job.TargetDevice {
		t.Fatalf("auto, small: %q %v", got, err)
	}
	if c, stop, err := StartCloud(ctx, &App{cfg: Config{DataDir: t.TempDir()}}); c != nil || err != nil {
		t.Fatalf("StartCloud without cloud.json: %v %v", c, err)
	} else {
		stop()
	}
}
