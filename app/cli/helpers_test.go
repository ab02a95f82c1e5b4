package cli

import (
	"context"
	"testing"

	"jobdesk/app"
	"jobdesk/app/aifamily"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// aiOf returns a's AI family, whose typed API (SubmitGeneration, Service, …) the tests drive.
func aiOf(a *app.App) *aifamily.Family {
	f, ok := app.FamilyOf[*aifamily.Family](a)
	if !ok {
		panic("no AI family")
	}
	return f
}

// openDB opens the database of data folder dir beside any App using it, for a test that reads
// a family's tables; it is closed when the test ends.
func openDB(t testing.TB, dir string) *store.DB {
	t.Helper()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// enqueueRaw puts a job with input p straight into the queue of data folder dir, past every
// family's Submit (the way a job written by another JobDesk or an older version arrives), and
// returns it. Call it before an App on dir starts its engine.
func enqueueRaw(t testing.TB, ctx context.Context, dir string, p queue.Params) job.Job {
	t.Helper()
	db := openDB(t, dir)
	q, err := queue.Open(db, queue.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	j, _, err := q.Enqueue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
