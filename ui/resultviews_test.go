package ui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// fakeResults is a resultService that answers from memory: the result views need no database.
type fakeResults struct {
	doc    app.DocumentView
	docErr error
	asked  []int64
}

func (f *fakeResults) CSVErrors(context.Context, int64, int, int) (app.CSVErrorPage, error) {
	return app.CSVErrorPage{}, nil
}
func (f *fakeResults) Document(_ context.Context, id int64) (app.DocumentView, error) {
	f.asked = append(f.asked, id)
	return f.doc, f.docErr
}
func (f *fakeResults) GoalOfJob(context.Context, int64) (app.GoalView, error) {
	return app.GoalView{}, nil
}
func (f *fakeResults) ExportResult(context.Context, int64, string, string) error { return nil }

// TestResultViewsOnAFakeService: the result views are a screen of their own: on a small fake
// service and host, a finished conversion's full view asks the service for job's document and
// shows its format's view; a service that fails shows its coded error in the window's language;
// a view read after the pane was rebuilt for another job is dropped.
func TestResultViewsOnAFakeService(t *testing.T) {
	md := filepath.Join(t.TempDir(), "deck.md")
	if err := os.WriteFile(md, []byte("## Slide 1: 概要\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, _ := json.Marshal(map[string]any{"status": "ready", "kind": "pptx", "page_count": 1, "output_path": md})
	j := job.Job{ID: 7, Status: job.Succeeded, Result: res}

	calls := make(chan func(), 16)
	gen := 0
	newViews := func(svc resultService) *resultViews {
		rv := fakeResultViews(LangJa)
		rv.host.svc, rv.host.ctx = svc, context.Background()
		rv.host.do = func(f func()) { calls <- f }
		rv.host.gen = func() int { return gen }
		return rv
	}
	fill := func(o fyne.CanvasObject) string {
		(<-calls)()
		return strings.Join(labelTexts(o), "\n")
	}

	svc := &fakeResults{doc: docOf("pptx", 1, "## Slide 1: 概要\n")}
	box := newViews(svc).resultExtras(j)
	if box == nil {
		t.Fatal("no view for a finished conversion")
	}
	if text := fill(box); !strings.Contains(text, "スライド（1 枚）") || !strings.Contains(text, "スライド 1：概要") {
		t.Fatalf("the deck's view:\n%s", text)
	}
	if len(svc.asked) != 1 || svc.asked[0] != 7 {
		t.Fatalf("the service was asked for %v", svc.asked)
	}

	failing := &fakeResults{docErr: job.Errorf(job.E014, "the converted file is missing").WithJa("変換結果のファイルが見つかりません。")}
	box = newViews(failing).resultExtras(j)
	if text := fill(box); !strings.Contains(text, "E014: 変換結果のファイルが見つかりません。") {
		t.Fatalf("the failure:\n%s", text)
	}

	box = newViews(svc).resultExtras(j)
	gen++ // another job was selected before the document arrived
	if text := fill(box); strings.Contains(text, "スライド") {
		t.Fatalf("a view for a job no longer shown filled the pane:\n%s", text)
	}
}
