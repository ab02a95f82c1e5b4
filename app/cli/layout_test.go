package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"jobdesk/app"
)

// TestRunUsesSavedLayout: `jobdesk run FILE` of a file whose header matches a layout saved from
// the window runs with that layout, as the window does, instead of failing E006 against the
// user-log layout: its impossible date is a rejected row (PARTIAL), and the result counts
// employees. A file that no saved layout fits still fails E006, and --schema still wins.
func TestRunUsesSavedLayout(t *testing.T) {
	dataDir, dir := t.TempDir(), t.TempDir()
	var b strings.Builder
	b.WriteString("社員ID,氏名,部署,入社日\r\n")
	for i := 1; i <= 60; i++ {
		d := fmt.Sprintf("20%02d/%02d/%02d", 10+i%10, 1+i%12, 1+i%28)
		if i == 9 {
			d = "2020/13/45"
		}
		fmt.Fprintf(&b, "E%04d,社員%d,営業部,%s\r\n", i, i, d)
	}
	path := writeFile(t, dir, "社員名簿.csv", []byte(b.String()))

	// The window's new-layout dialog: the sniffer's proposal, saved.
	a, err := app.Open(app.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.PlanCSV(path)
	if err != nil || !plan.NeedsSchema() {
		a.Close()
		t.Fatalf("plan %+v %v", plan, err)
	}
	if _, err := a.SaveSchema(app.SavedSchema{Schema: *plan.Proposal.Schema}); err != nil {
		a.Close()
		t.Fatal(err)
	}
	a.Close()

	code, out, errOut := csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", path)
	j, s := parseJob(t, out)
	if j.Error != nil || code != ExitPartial || j.Status != "PARTIAL" || s.ErrorCount != 1 || s.SuccessCount != 59 {
		t.Fatalf("run: %d %+v %+v %+v %s", code, j, j.Error, s, errOut)
	}
	if s.Entity != "社員" || !strings.Contains(s.MessageJa, "社員 59 人") || strings.Contains(s.MessageJa, "ユーザー") {
		t.Fatalf("result labels %q %q", s.Entity, s.MessageJa)
	}
	var shown struct {
		Message string `json:"message"`
	}
	json.Unmarshal([]byte(out), &shown)
	if !strings.Contains(shown.Message, "59 employees") {
		t.Fatalf("shown message %q", shown.Message)
	}

	// A header no saved layout fits: the user-log layout's E006, as before.
	other := writeFile(t, dir, "other.csv", []byte("品番,数量\r\nA1,3\r\nA2,4\r\n"))
	code, out, _ = csvMain(t, "--data-dir", dataDir, "run", "--wait", "--json", other)
	if j, _ := parseJob(t, out); code != ExitFailed || j.Error == nil || j.Error.Code != "E006" {
		t.Fatalf("unfitted file: %d %s", code, out)
	}
}
