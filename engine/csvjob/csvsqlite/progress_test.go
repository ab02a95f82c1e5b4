package csvsqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
)

// gatedBlobs lets the test read a CSV file's chunks one at a time: each chunk read says so on
// waiting, then waits for a token on open.
type gatedBlobs struct {
	blob.Store
	waiting chan int64
	open    chan struct{}
}

func (g *gatedBlobs) OpenRange(ctx context.Context, uri string, offset, length int64) (io.ReadCloser, error) {
	g.waiting <- offset
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Store.OpenRange(ctx, uri, offset, length)
}

// The job a person sees (a CSV job running the workflow through the orchestrator, as the app's
// does) moves as its rows are read, chunk by chunk, before any item of the workflow's Map ends:
// the handler's progress reaches it through the queue's events.
func TestCSVJobProgressMovesWithRowsRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.csv")
	data := csvtest.BigUserLog(4000, 50, csvtest.EncUTF8)
	csvtest.WriteBytes(t, path, data)
	o := csvjob.Options{ChunkBytes: int64(len(data)) / 4}
	v, err := csvjob.Validate(context.Background(), blob.NewMux(blob.Local{Root: dir}), path, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	chunks := v.ChunkCount
	if chunks < 3 {
		t.Fatalf("the file makes %d chunks; the test needs at least 3", chunks)
	}

	gb := &gatedBlobs{Store: blob.NewMux(blob.Local{Root: dir}), waiting: make(chan int64, 64), open: make(chan struct{})}
	e := openDevice(t, dir, gb, func(e *env, w *queue.Worker) {
		w.Handle("csv", func(ctx context.Context, _ json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			info, _ := job.InfoFrom(ctx)
			input, err := e.P.EventInput(ctx, path, o, info.ID)
			if err != nil {
				return nil, err
			}
			return orchestrator.Run(ctx, e.eng.Executions(), orchestrator.Spec{
				Workflow: strings.TrimSuffix(csvjob.WorkflowFile, ".asl.json"), Name: "progress-test", Input: input,
				What: "the CSV job", WhatJa: "CSVの処理"}, r)
		}, queue.TypeOptions{Orchestrator: true})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j, _, err := e.Q.Enqueue(ctx, queue.Params{Type: "csv", Name: "log.csv"})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := e.Q.Watch(j.ID)
	defer stop()
	var seen []float64
	high := 0.0
	// rise waits for the CSV job's progress to pass above, with a message that says what
	// (contains), and returns it.
	rise := func(above float64, contains, why string) float64 {
		t.Helper()
		for {
			select {
			case ev := <-events:
				if ev.Status.Final() {
					t.Fatalf("the CSV job ended (%s) while %s", ev.Status, why)
				}
				if ev.Kind == job.EventProgress {
					seen = append(seen, ev.Progress)
					if ev.Progress > above && strings.Contains(ev.Message, contains) {
						return ev.Progress
					}
				}
			case <-ctx.Done():
				t.Fatalf("the CSV job's progress stayed at %.2f %% (events %v) while %s", above, seen, why)
			}
		}
	}
	// The map's items (batches of two chunks) all run, each waiting to read its first chunk.
	batches := (chunks + 1) / 2
	for range batches {
		select {
		case <-gb.waiting:
		case <-ctx.Done():
			t.Fatalf("the chunks were not read")
		}
	}
	// One chunk's rows are read: no item of the map has ended, and yet the job moves.
	gb.open <- struct{}{}
	high = rise(high, fmt.Sprintf(": 0 of %d items", batches), "the first chunk's rows were read")
	for k := 2; k < chunks; k++ {
		gb.open <- struct{}{} // one more chunk's rows are read
		high = rise(high, "items", "more rows were read")
	}
	gb.open <- struct{}{}
	end, err := e.Q.Wait(ctx, j.ID)
	if err != nil || end.Status != job.Succeeded {
		t.Fatalf("the CSV job ended %s, %v, %v", end.Status, end.Error, err)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("the CSV job's progress went back: %v", seen)
		}
	}
}
