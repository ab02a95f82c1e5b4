package csvjob

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"jobdesk/engine/blob"
)

// employeeList writes an employee list (社員ID, 氏名, 部署, 入社日) of n rows whose row bad
// (1-based, 0: none) has the impossible date 2020/13/45; the other dates are real, in the
// formats people type (2020/01/31, 2020-01-31, 2021/4/1).
func employeeList(t *testing.T, dir string, n, bad int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("社員ID,氏名,部署,入社日\r\n")
	for i := 1; i <= n; i++ {
		d := fmt.Sprintf("20%02d/%02d/%02d", 10+i%10, 1+i%12, 1+i%28)
		switch {
		case i == bad:
			d = "2020/13/45"
		case i%5 == 0:
			d = fmt.Sprintf("20%02d-%02d-%02d", 10+i%10, 1+i%12, 1+i%28)
		case i%7 == 0:
			d = fmt.Sprintf("2021/%d/%d", 1+i%9, 1+i%9)
		}
		fmt.Fprintf(&b, "E%04d,社員%d,営業部,%s\r\n", i, i, d)
	}
	path := filepath.Join(dir, "employees.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLayoutDateColumn: a layout made from a file whose date column holds one impossible date
// types that column as a date (not text), and a run with that layout rejects the row with
// the impossible date, with its reason, while the real dates in every format pass.
func TestLayoutDateColumn(t *testing.T) {
	dir := t.TempDir()
	path := employeeList(t, dir, 60, 9)
	res, err := Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	var col *Column
	for i := range res.Schema.Columns {
		if res.Schema.Columns[i].Name == "入社日" {
			col = &res.Schema.Columns[i]
		}
	}
	if col == nil || col.Type != TypeDate {
		t.Fatalf("入社日 column = %+v, want a date column", col)
	}
	b := blob.NewMux(blob.Local{})
	p := NewProcessor(NewBlobStore(b), b, filepath.Join(dir, "out"))
	s, f, err := runEvents(t, p, path, "e-120000", Options{Schema: res.Schema})
	if err != nil {
		t.Fatalf("run: %v %+v", err, f)
	}
	if s.Status != StatusPartial || s.ErrorCount != 1 || s.SuccessCount != 59 {
		t.Fatalf("summary %+v", s)
	}
	raw, err := os.ReadFile(s.ErrorsCSV)
	if err != nil {
		t.Fatal(err)
	}
	if e := string(raw); !strings.Contains(e, "2020/13/45") || !strings.Contains(e, "not a date") || !strings.Contains(e, "入社日") {
		t.Fatalf("errors file does not name the bad date and why:\n%s", e)
	}
}

// TestParseDateCalendar: the date rule takes real calendar dates only.
func TestParseDateCalendar(t *testing.T) {
	for in, want := range map[string]string{
		"2020/01/31": "2020-01-31", "2020-01-31": "2020-01-31", "2021/4/1": "2021-04-01",
		"2020-2-29": "2020-02-29", "2024/12/9": "2024-12-09",
	} {
		if got, ok := parseDate([]byte(in)); !ok || got != want {
			t.Errorf("parseDate(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"2020/13/45", "2021-02-29", "2020/00/10", "2020/1/32", "2020/01-31",
		"20200131", "2020/001/01", "2020/1/", "2020//1", "１２３４/01/01", "2020/01/31 ", ""} {
		if got, ok := parseDate([]byte(in)); ok {
			t.Errorf("parseDate(%q) = %q, accepted", in, got)
		}
	}
}

// TestLayoutLabels: the result of a run with an employee layout counts employees by the
// layout's key column, not users, in both languages.
func TestLayoutLabels(t *testing.T) {
	dir := t.TempDir()
	path := employeeList(t, dir, 30, 0)
	res, err := Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Schema.Entity != "社員" || res.Schema.EntityEn != "employee" {
		t.Fatalf("layout labels %q / %q, want 社員 / employee", res.Schema.Entity, res.Schema.EntityEn)
	}
	b := blob.NewMux(blob.Local{})
	p := NewProcessor(NewBlobStore(b), b, filepath.Join(dir, "out"))
	s, f, err := runEvents(t, p, path, "l-120000", Options{Schema: res.Schema})
	if err != nil {
		t.Fatalf("run: %v %+v", err, f)
	}
	if s.Key != "社員ID" || s.Entity != "社員" || s.EntityEn != "employee" {
		t.Fatalf("summary labels %q %q %q", s.Key, s.Entity, s.EntityEn)
	}
	if strings.Contains(s.MessageJa, "ユーザー") || !strings.Contains(s.MessageJa, "社員 30 人") {
		t.Fatalf("Japanese summary %q", s.MessageJa)
	}
	if strings.Contains(s.Message, "user") || !strings.Contains(s.Message, "30 employees") {
		t.Fatalf("English summary %q", s.Message)
	}
	// The report's summary sheet counts them too.
	x, err := excelize.OpenFile(s.ReportXLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	sheet, err := x.GetRows(SheetSummary)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range sheet {
		if len(r) > 0 {
			labels = append(labels, r[0])
		}
	}
	all := strings.Join(labels, "\n")
	if strings.Contains(all, "ユーザー") || !strings.Contains(all, "社員数 employees") || !strings.Contains(all, "更新社員数 employees changed") {
		t.Fatalf("report labels:\n%s", all)
	}
	// The user-log layout still speaks of users.
	d := DefaultSchema()
	if d.Entity != "ユーザー" || d.EntityEn != "user" {
		t.Fatalf("default labels %q / %q", d.Entity, d.EntityEn)
	}
}

// TestEntityOf: what a key column counts, from its name.
func TestEntityOf(t *testing.T) {
	for key, want := range map[string][2]string{
		"社員ID": {"社員", "employee"}, "ユーザーID": {"ユーザー", "user"}, "顧客番号": {"顧客", "customer"},
		"customer_id": {"customer", "customer"}, "Orders": {"Orders", "order"}, "status": {"status", "status"},
		"品番": {"品番", "品番"}, "ID": {"ID", "id"},
	} {
		if ja, en := entityOf(key); ja != want[0] || en != want[1] {
			t.Errorf("entityOf(%q) = %q, %q; want %q", key, ja, en, want)
		}
	}
}
