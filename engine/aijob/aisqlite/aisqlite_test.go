package aisqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"testing"
	"testing/quick"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// Property 5: an action's tasks are saved all together or not at all, and never twice.
func TestSaveTasksAtomic(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	db, err := store.OpenDir(t.TempDir(), Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := New(db)
	s := aijob.NewService(st.State(), &aijob.OpenAI{Endpoint: srv.URL, ModelID: "test-model"})
	out, err := s.Actions(job.WithInfo(context.Background(), job.Info{ID: 1, Type: "test", Attempt: 1, MaxAttempts: 3}),
		json.RawMessage(`{"title":"資格取得","deadline":"2027-01-31"}`), job.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res aijob.ActionResult
	json.Unmarshal(out, &res)
	g, err := s.LoadGoal(context.Background(), res.GoalID)
	if err != nil || len(g.Actions()) != 64 {
		t.Fatalf("%v: %d actions", err, len(g.Actions()))
	}
	ctx := context.Background()
	f := func(n uint8, failAt uint8) bool {
		count := int(n%10) + 1
		ts := make([]aijob.GenTask, count)
		for i := range ts {
			ts[i] = aijob.GenTask{Title: fmt.Sprint("t", i), Type: "habit", EstimatedMinutes: 5}
		}
		a := g.Actions()[rand.IntN(64)]
		before, _ := s.LoadGoal(ctx, g.ID)
		prev := 0
		for _, x := range before.Actions() {
			if x.ID == a.ID {
				prev = len(x.Tasks)
			}
		}
		k := int(failAt) % (count + 1)
		st.beforeTaskInsert = func(id int64, i int) error {
			if i == k && k < count {
				return errors.New("disk I/O error")
			}
			return nil
		}
		_, err := s.SaveTasks(ctx, a.ID, 1, ts)
		st.beforeTaskInsert = nil
		after, _ := s.LoadGoal(ctx, g.ID)
		for _, x := range after.Actions() {
			if x.ID != a.ID {
				continue
			}
			if k < count {
				return err != nil && len(x.Tasks) == prev
			}
			return err == nil && len(x.Tasks) == count
		}
		return false
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 60}); err != nil {
		t.Fatal(err)
	}
}

// The schema keeps the set name and files it had under engine/aijob, so a database made before
// the move sees its migrations as applied.
func TestMigrationsKeepTheirName(t *testing.T) {
	if Migrations.Name != "aijob" {
		t.Fatalf("set %q, want aijob", Migrations.Name)
	}
	if _, err := fs.Stat(Migrations.FS, "001_ai.sql"); err != nil {
		t.Fatal(err)
	}
}
