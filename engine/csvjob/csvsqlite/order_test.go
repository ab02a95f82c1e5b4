package csvsqlite_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
)

// sameUsers writes five files of the same users, file k giving every user ログイン回数 = k and
// 投稿回数 = 10k, and returns their paths (file 1 first).
func sameUsers(t *testing.T, users int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for k := 1; k <= 5; k++ {
		var b strings.Builder
		b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
		for i := 1; i <= users; i++ {
			fmt.Fprintf(&b, "U%05d,%d,%d\n", i, k, 10*k)
		}
		paths = append(paths, csvtest.WriteRaw(t, dir, fmt.Sprintf("users-%d.csv", k), csvjob.EncUTF8, b.String()))
	}
	return paths
}

// wantLast checks that every user holds file k's values.
func wantLast(t *testing.T, e *env, users, k int) {
	t.Helper()
	got := tableOf(t, e)
	if len(got) != users {
		t.Fatalf("%d users, want %d", len(got), users)
	}
	for id, u := range got {
		if u.login != int64(k) || u.posts != int64(10*k) {
			t.Fatalf("user %s holds %d/%d, want file %d's values %d/%d", id, u.login, u.posts, k, k, 10*k)
		}
	}
}

// TestLastSubmittedWins: five files of the same users submitted one after the other as jobs 1…5
// leave the values of job 5, the last submitted, whichever import finishes last: here they
// finish in the reverse order, and a job run again after all others (a retry keeps its job)
// changes nothing it is older than.
func TestLastSubmittedWins(t *testing.T) {
	const users = 300
	paths := sameUsers(t, users)
	e := openDB(t)
	for k := 5; k >= 1; k-- {
		run := *e
		run.JobID = int64(k)
		s, err := runWorkflow(context.Background(), &run, paths[k-1], csvjob.Options{}, nil)
		if err != nil || s.Status != csvjob.StatusSuccess {
			t.Fatalf("job %d: %+v %v", k, s, err)
		}
		if k < 5 && s.UsersChanged != 0 {
			t.Fatalf("job %d, older than job 5, changed %d users", k, s.UsersChanged)
		}
	}
	wantLast(t, e, users, 5)
	// Job 3 run again (a retry keeps the job, and so its place): still job 5's values.
	run := *e
	run.JobID = 3
	if _, err := runWorkflow(context.Background(), &run, paths[2], csvjob.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	wantLast(t, e, users, 5)
	// A sixth job of file 2 (dropped again and run): it is now the last submitted.
	run.JobID = 6
	if _, err := runWorkflow(context.Background(), &run, paths[1], csvjob.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	wantLast(t, e, users, 2)
}

// TestLastSubmittedWinsConcurrently: the five jobs at once, many times, always leave job 5's
// values.
func TestLastSubmittedWinsConcurrently(t *testing.T) {
	const users = 2000
	paths := sameUsers(t, users)
	for round := 0; round < 3; round++ {
		e := openDB(t)
		var wg sync.WaitGroup
		errs := make([]error, 5)
		for k := 1; k <= 5; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				run := *e
				run.JobID = int64(k)
				_, errs[k-1] = runWorkflow(context.Background(), &run, paths[k-1], csvjob.Options{}, nil)
			}(k)
		}
		wg.Wait()
		for k, err := range errs {
			if err != nil {
				t.Fatalf("job %d: %v", k+1, err)
			}
		}
		wantLast(t, e, users, 5)
	}
}
