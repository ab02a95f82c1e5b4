package app

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/queue"
)

// TestAlertRules: each of the specifications' rules fires just past its limit and not at it.
func TestAlertRules(t *testing.T) {
	rules := func(m queue.Metrics) string {
		var s []string
		for _, a := range Alerts(m) {
			s = append(s, a.Rule)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		m    queue.Metrics
		want string
	}{
		{queue.Metrics{Window: queue.WindowStats{Ended: 20, Failed: 1}}, ""},
		{queue.Metrics{Window: queue.WindowStats{Ended: 19, Failed: 1}}, AlertErrorRate},
		{queue.Metrics{Window: queue.WindowStats{Ended: 10, TimedOut: 1}}, ""},
		{queue.Metrics{Window: queue.WindowStats{Ended: 9, TimedOut: 1}}, AlertTimeoutRate},
		{queue.Metrics{Window: queue.WindowStats{Ended: 1, AvgDuration: 5*time.Minute + time.Second}}, AlertAvgDuration},
		{queue.Metrics{QueueDepth: 100}, ""},
		{queue.Metrics{QueueDepth: 101}, AlertQueueDepth},
		{queue.Metrics{Window: queue.WindowStats{WorkflowsEnded: 9, WorkflowsFailed: 1}}, AlertWorkflowFailRate},
	} {
		if got := rules(c.m); got != c.want {
			t.Errorf("%+v: alerts %q, want %q", c.m, got, c.want)
		}
	}
}

// TestMetricsAndLog: jobs that ran show in the hourly counts and percentiles, and the job log
// holds one JSON line per status change in the specifications' format.
func TestMetricsAndLog(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.LogJobEvents(ctx) }()
	time.Sleep(50 * time.Millisecond) // subscribed
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.bin")
	os.WriteFile(p, []byte("hello"), 0o644)
	jobs, err := a.Submit(ctx, []string{p}, SubmitOptions{Type: "checksum"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if _, err := a.Wait(wctx, jobs[0].ID); err != nil {
		t.Fatal(err)
	}
	m, err := a.Metrics(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if m.ByType["checksum"] != 1 || len(m.Hours) != 1 || m.Hours[0].Succeeded != 1 || m.Window.Ended != 1 || len(m.Alerts) != 0 {
		t.Fatalf("metrics = %+v", m)
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	f, err := os.Open(filepath.Join(a.DataDir(), LogDir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var kinds []string
	for sc.Scan() {
		var line struct {
			Timestamp string `json:"timestamp"`
			Level     string `json:"level"`
			JobType   string `json:"job_type"`
			JobID     int64  `json:"job_id"`
			Message   string `json:"message"`
			Data      struct {
				Event string `json:"event"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not JSON: %s", sc.Bytes())
		}
		if line.Timestamp == "" || line.Level != "INFO" || line.JobType != "checksum" || line.JobID != jobs[0].ID {
			t.Fatalf("line = %s", sc.Bytes())
		}
		kinds = append(kinds, line.Data.Event)
	}
	if len(kinds) < 2 || kinds[len(kinds)-1] != "TaskSucceeded" {
		t.Fatalf("logged events = %v", kinds)
	}
}

// TestRotatingFile: past its limit the log moves to .1, .2 and no more than keep files stay.
func TestRotatingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "logs", "x.log")
	r, err := OpenRotatingFile(p, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		r.Write([]byte(strings.Repeat("x", 60) + "\n"))
	}
	r.Close()
	for _, name := range []string{p, p + ".1", p + ".2"} {
		if st, err := os.Stat(name); err != nil || st.Size() > 100 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(p + ".3"); err == nil {
		t.Fatal("more old files than kept")
	}
}
