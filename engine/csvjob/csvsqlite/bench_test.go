package csvsqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
)

const benchRows, benchUsers = 1_000_000, 50_000

var benchFiles sync.Map // encoding → path

// benchFile writes the 1M-row user log (ユーザーID,ログイン回数,投稿回数; 50k users) once per
// encoding per process.
func benchFile(b *testing.B, enc string) string {
	if p, ok := benchFiles.Load(enc); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "csvsqlite-bench")
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "user-log-1m.csv")
	if err := os.WriteFile(p, csvtest.BigUserLog(benchRows, benchUsers, enc), 0o600); err != nil {
		b.Fatal(err)
	}
	benchFiles.Store(enc, p)
	return p
}

// BenchmarkWholeJob: the whole job on the 1M-row file through the shipped workflow (validation,
// the Map over the chunks with their audit records, aggregation), including the csv_users upsert
// of the 50k users into a fresh database and the result files (target ≤ 1.0 s).
func BenchmarkWholeJob(b *testing.B) {
	for _, enc := range []string{csvjob.EncUTF8, csvjob.EncCP932} {
		b.Run(enc, func(b *testing.B) {
			path := benchFile(b, enc)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := openDB(b)
				b.StartTimer()
				s, err := runWorkflow(context.Background(), e, path, csvjob.Options{}, nil)
				if err != nil || s.Status != csvjob.StatusSuccess || s.UsersChanged != benchUsers {
					b.Fatalf("%+v %v", s, err)
				}
			}
		})
	}
}
