package app

import (
	"os"
	"path/filepath"
	"testing"

	"jobdesk/engine/csvjob"
)

// TestPlanCSV: the user-log layout needs nothing, an unknown layout gets the sniffer's proposal,
// and once saved the same header (in another order too) plans with the saved schema, whose file
// the command line's --schema reader takes as it is.
func TestPlanCSV(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	userLog := write("log.csv", "ユーザーID,ログイン回数,投稿回数\nU00001,1,2\n")
	if p, err := a.PlanCSV(userLog); err != nil || p.Schema != nil || p.NeedsSchema() {
		t.Fatalf("user log plan = %+v, %v", p, err)
	}
	sales := write("sales.csv", "code;qty\nA1;3\nA2;4\n")
	p, err := a.PlanCSV(sales)
	if err != nil || !p.NeedsSchema() || p.Proposal.Delimiter != ";" {
		t.Fatalf("sales plan = %+v, %v", p, err)
	}
	pct, n := 2.5, 7
	file, err := a.SaveSchema(SavedSchema{Schema: *p.Proposal.Schema, TolerancePercent: &pct, ToleranceCount: &n, Delimiter: ";"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csvjob.LoadSchema(file); err != nil {
		t.Fatalf("the saved file is not a --schema file: %v", err)
	}
	swapped := write("sales2.csv", "qty;code\n3;A9\n")
	p, err = a.PlanCSV(swapped)
	if err != nil || p.Schema == nil || p.Schema.Name != "sales" || *p.Schema.ToleranceCount != 7 {
		t.Fatalf("known header plan = %+v, %v", p, err)
	}
	extra := a.CSVExtra(*p.Schema)
	if extra["schema"] != file || extra["tolerate-percent"] != "2.5" || extra["delimiter"] != ";" {
		t.Fatalf("extra = %v", extra)
	}
	if s, _ := a.SavedSchemas(); len(s) != 1 {
		t.Fatalf("saved schemas = %d", len(s))
	}
	if err := a.DeleteSchema("sales"); err != nil {
		t.Fatal(err)
	}
	if s, _ := a.SavedSchemas(); len(s) != 0 {
		t.Fatalf("after delete = %d", len(s))
	}
	if _, err := a.SaveSchema(SavedSchema{Schema: csvjob.Schema{Name: " "}}); err == nil {
		t.Fatal("a schema without a name was saved")
	}
}
