package csvsqlite_test

import (
	"context"
	"testing"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
)

// BenchmarkWholeJob: the whole job on the 1M-row file through the shipped workflow (validation,
// the Map over the chunks with their audit records, aggregation), including the csv_users upsert
// of the 50k users into a fresh database and the result files (target ≤ 1.0 s).
func BenchmarkWholeJob(b *testing.B) {
	for _, enc := range []string{csvjob.EncUTF8, csvjob.EncCP932} {
		b.Run(enc, func(b *testing.B) {
			path := csvtest.BenchFile(b, enc)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := openDB(b)
				b.StartTimer()
				s, err := runWorkflow(context.Background(), e, path, csvjob.Options{}, nil)
				if err != nil || s.Status != csvjob.StatusSuccess || s.UsersChanged != csvtest.BenchUsers {
					b.Fatalf("%+v %v", s, err)
				}
			}
		})
	}
}
