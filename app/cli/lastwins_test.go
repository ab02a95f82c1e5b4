package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCSVLastSubmittedWins: five files of the same users, submitted one after the other on one
// command line and run at once, leave every user with the values of the last file, run after
// run (the imports finish in whatever order they finish).
func TestCSVLastSubmittedWins(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five imports three times")
	}
	src := t.TempDir()
	var files []string
	for k := 1; k <= 5; k++ {
		var b strings.Builder
		b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
		// The first files are the largest, so they tend to finish last: file k gives each
		// user 10×(6-k) rows of 1 login and k posts.
		for i := 0; i < (6-k)*20_000; i++ {
			fmt.Fprintf(&b, "U%05d,1,%d\n", i%2000+1, k)
		}
		files = append(files, writeFile(t, src, fmt.Sprintf("users-%d.csv", k), []byte(b.String())))
	}
	for round := 0; round < 3; round++ {
		dir := filepath.Join(t.TempDir(), "data")
		code, out, errOut := csvMain(t, append([]string{"--data-dir", dir, "run", "--wait"}, files...)...)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		table := csvTable(t, dir)
		if len(table) != 2000 {
			t.Fatalf("%d users", len(table))
		}
		for id, v := range table {
			if v != [2]int64{10, 50} {
				t.Fatalf("round %d: user %s holds %v, not the last file's values", round, id, v)
			}
		}
	}
}
