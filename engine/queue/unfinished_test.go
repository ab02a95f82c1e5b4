package queue

import (
	"context"
	"database/sql"
	"testing"

	"jobdesk/engine/job"
)

// FindUnfinishedTx finds the oldest PENDING, RUNNING or RETRYING job of a type by one field of
// its input, and nothing once that job is final.
func TestFindUnfinishedTx(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	a, _, _ := q.Enqueue(ctx, Params{Type: "GEN", Name: "a", Input: []byte(`{"goal_id":7}`)})
	q.Enqueue(ctx, Params{Type: "GEN", Name: "b", Input: []byte(`{"goal_id":7}`)})
	q.Enqueue(ctx, Params{Type: "OTHER", Name: "c", Input: []byte(`{"goal_id":8}`)})
	find := func(typ string, v any) int64 {
		t.Helper()
		var id int64
		err := q.db.Tx(ctx, func(tx *sql.Tx) (err error) {
			id, err = q.FindUnfinishedTx(ctx, tx, typ, "goal_id", v)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if id := find("GEN", 7); id != a.ID {
		t.Fatalf("found %d, want the oldest %d", id, a.ID)
	}
	if find("GEN", 8) != 0 || find("OTHER", 7) != 0 {
		t.Fatal("found a job of another type or value")
	}
	if err := q.Cancel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if j, _ := q.Get(ctx, a.ID); j.Status != job.Cancelled {
		t.Fatal(j.Status)
	}
	if id := find("GEN", 7); id == a.ID || id == 0 {
		t.Fatalf("found %d after the oldest was cancelled", id)
	}
}
