package app

import (
	"encoding/json"
	"testing"

	"jobdesk/assets"
	"jobdesk/engine/job"
)

// Every well-known result field has a label, and every summary figure its words, in every
// language the window speaks.
func TestResultFieldsLabelled(t *testing.T) {
	for _, lang := range []string{"ja", "en"} {
		b, err := assets.Translations(lang)
		if err != nil {
			t.Fatal(err)
		}
		words := map[string]string{}
		if err := json.Unmarshal(b, &words); err != nil {
			t.Fatal(err)
		}
		for _, k := range resultFieldOrder {
			if _, ok := words["field."+k]; !ok {
				t.Errorf("%s: no label for result field %s", lang, k)
			}
		}
		for _, f := range summaryFigures {
			if _, ok := words[f.words]; !ok {
				t.Errorf("%s: no words %s for summary figure %s", lang, f.words, f.field)
			}
		}
	}
}

// TestGroupDigits: figures get a comma between groups of three digits, signs kept.
func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 12: "12", 999: "999", 1000: "1,000", -45678: "-45,678", 1234567890: "1,234,567,890"} {
		if got := GroupDigits(n); got != want {
			t.Errorf("GroupDigits(%d) = %q; want %q", n, got, want)
		}
	}
}

// TestResultLabelsFromLayout: a CSV result of an employee layout labels its count by the
// layout's entity (社員数 / Employees, 更新した社員 / Employees changed), shows the key column,
// and keeps the layout's words out of the rows; a user-log result keeps the fixed labels.
func TestResultLabelsFromLayout(t *testing.T) {
	res := func(entity, entityEn string) job.Job {
		b, _ := json.Marshal(map[string]any{"status": "SUCCESS", "totalRecords": 30, "successCount": 30,
			"users": 1201, "usersChanged": 1201, "key": "社員ID", "entity": entity, "entityEn": entityEn,
			"summary": "30 rows accepted for 1201 employees, none rejected.", "summaryJa": "30 行すべて（社員 1201 人）を反映しました。"})
		return job.Job{Status: job.Succeeded, Result: b}
	}
	rows := map[string]ResultRow{}
	for _, r := range DescribeResult(res("社員", "employee")).Rows {
		rows[r.LabelKey+"|"+r.Label] = r
		if r.Value == "社員" || r.Value == "employee" {
			t.Errorf("the layout's words show as a row: %+v", r)
		}
	}
	users, ok := rows["|Employees"]
	if !ok || users.LabelJa != "社員数" || users.Value != "1,201" {
		t.Fatalf("users row: %+v in %+v", users, rows)
	}
	if r, ok := rows["|Employees changed"]; !ok || r.LabelJa != "更新した社員" {
		t.Fatalf("usersChanged row: %+v in %+v", r, rows)
	}
	if r, ok := rows["field.key|"]; !ok || r.Value != "社員ID" {
		t.Fatalf("key row: %+v in %+v", r, rows)
	}
	for _, r := range DescribeResult(res("ユーザー", "user")).Rows {
		if r.Label == "Users" || r.LabelJa != "" {
			t.Fatalf("a user-log result lost its fixed labels: %+v", r)
		}
	}
}
