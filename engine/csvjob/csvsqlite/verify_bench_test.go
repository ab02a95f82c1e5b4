package csvsqlite

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"jobdesk/engine/store"
)

// BenchmarkCheckUsersTable: the check of csv_users an import makes before it commits, on the
// 50,000 users BenchmarkWholeJob's upsert leaves, alone.
func BenchmarkCheckUsersTable(b *testing.B) {
	db, _ := usersDB(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return checkUsersTable(ctx, tx) }); err != nil {
			b.Fatal(err)
		}
	}
}

func usersDB(b *testing.B) (*store.DB, *cloudUsers) {
	db, err := store.OpenDir(b.TempDir(), Migrations)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	u := &cloudUsers{}
	for i := 1; i <= 50000; i++ {
		u.ids = append(u.ids, fmt.Sprintf("U%05d", i))
		u.login = append(u.login, int64(i%100))
		u.post = append(u.post, int64(i%1000))
	}
	ctx := context.Background()
	if err := db.Tx(ctx, func(tx *sql.Tx) error { _, err := upsertUsers(ctx, tx, u, "e", "s", 1, 1); return err }); err != nil {
		b.Fatal(err)
	}
	return db, u
}
