package app

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"jobdesk/app/family"
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
		for _, k := range vocabulary().order {
			if _, ok := words["field."+k]; !ok {
				t.Errorf("%s: no label for result field %s", lang, k)
			}
		}
		for _, f := range vocabulary().figures {
			if _, ok := words[f.Words]; !ok {
				t.Errorf("%s: no words %s for summary figure %s", lang, f.Words, f.Field)
			}
			for _, w := range f.ByWords {
				if _, ok := words[w]; !ok {
					t.Errorf("%s: no words %s for summary figure %s", lang, w, f.Field)
				}
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

// TestFamiliesResultViewsMerged: every family describes its own results, and the merged
// vocabulary keeps each family's order of its fields and summary figures, so a family's result
// reads as the family lists it; a field two families write is shown once.
func TestFamiliesResultViewsMerged(t *testing.T) {
	v := vocabulary()
	for _, f := range newFamilies() {
		d, ok := f.(family.ResultDescriber)
		if !ok {
			t.Errorf("family %s does not describe its results", f.Name())
			continue
		}
		fv := d.ResultView()
		last := -1
		for _, part := range fv.Parts() {
			for _, k := range part {
				r, ok := v.rank[k]
				if !ok || r <= last {
					t.Errorf("family %s: field %s at %d (known %v) after %d", f.Name(), k, r, ok, last)
				}
				last = r
			}
		}
		for _, k := range fv.Hidden {
			if !v.hidden[k] {
				t.Errorf("family %s: hidden field %s shown", f.Name(), k)
			}
		}
		lastFig := -1
		for _, sf := range fv.Summary {
			i := slices.IndexFunc(v.figures, func(g family.SummaryFigure) bool { return g.Field == sf.Field })
			if i <= lastFig {
				t.Errorf("family %s: summary figure %s at %d after %d", f.Name(), sf.Field, i, lastFig)
			}
			lastFig = i
		}
	}
	if len(v.order) != len(v.rank) {
		t.Errorf("%d fields, %d ranked: a field shown twice", len(v.order), len(v.rank))
	}
}

// TestMergeOrdered: lists merge keeping each one's order, the first list leading where the
// order is free; lists that disagree still yield every field once.
func TestMergeOrdered(t *testing.T) {
	for _, c := range []struct {
		in   [][]string
		want []string
	}{
		{[][]string{{"a", "b", "d"}, {"c", "d", "e"}}, []string{"a", "b", "c", "d", "e"}},
		{[][]string{{"a", "x", "b"}, {"y", "x"}}, []string{"a", "y", "x", "b"}},
		{[][]string{{"a", "b"}, {"b", "a"}}, []string{"a", "b"}},
		{[][]string{nil, {"a"}}, []string{"a"}},
	} {
		if got := mergeOrdered(c.in); !slices.Equal(got, c.want) {
			t.Errorf("mergeOrdered(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}

// TestMailHeaderNotARow: a mail's header fields, which a window shows in a view of their own,
// are not counted as a row of the result form.
func TestMailHeaderNotARow(t *testing.T) {
	raw := `{"status":"ready","kind":"eml","page_count":1,"extracted_text_length":120,
		"mail":{"from":"yamada@example.jp","subject":"見積"}}`
	for _, r := range DescribeResult(job.Job{Status: job.Succeeded, Result: json.RawMessage(raw)}).Rows {
		if r.LabelKey == "field.mail" || r.Label == "Mail" {
			t.Fatalf("the mail header is a row: %+v", r)
		}
	}
}

// TestPagesByFormat: a conversion's pages read as its format counts them — a deck's slides, a
// workbook's sheets, a book's chapters — in the summary and the result form; a PDF keeps pages.
func TestPagesByFormat(t *testing.T) {
	for kind, want := range map[string][2]string{
		"pptx": {"result.slides", "スライド数"}, "xls": {"result.sheets", "シート数"}, "xlsx": {"result.sheets", "シート数"},
		"epub": {"result.chapters", "章の数"}, "eml": {"result.mails", "メールの数"}, "image": {"result.images", "画像の数"}, "pdf": {"result.pages", ""},
	} {
		j := job.Job{Status: job.Succeeded, Result: json.RawMessage(`{"kind":"` + kind + `","page_count":12,"extracted_text_length":900}`)}
		if s := SummarizeResult(j); len(s.Figures) == 0 || s.Figures[0].WordsKey != want[0] || s.Figures[0].Value != "12" {
			t.Errorf("%s: summary %+v; want %s", kind, s, want[0])
		}
		found := false
		for _, r := range DescribeResult(j).Rows {
			if r.Value == "12" {
				found = true
				if want[1] == "" && r.LabelKey != "field.page_count" || want[1] != "" && r.LabelJa != want[1] {
					t.Errorf("%s: page count row %+v; want %q", kind, r, want[1])
				}
			}
		}
		if !found {
			t.Errorf("%s: no page count row", kind)
		}
	}
}

// TestNoPagesWhereTheFormatHasNone: a Word document, a web page, a text or data file has no
// pages; its page count (always 1) is neither in the summary nor in the result form, so a long
// contract does not read "1 page". A PDF of one page still says so.
func TestNoPagesWhereTheFormatHasNone(t *testing.T) {
	for _, kind := range []string{"docx", "html", "mhtml", "txt", "csv", "json", "xml", "ipynb", "feed", "pdf"} {
		j := job.Job{Status: job.Succeeded, Result: json.RawMessage(`{"kind":"` + kind + `","page_count":1,"extracted_text_length":29000}`)}
		s := SummarizeResult(j)
		line := s.Headline("en", func(k string) (string, bool) { w, ok := englishWords()[k]; return w, ok })
		rows := 0
		for _, r := range DescribeResult(j).Rows {
			if r.LabelKey == "field.page_count" {
				rows++
			}
		}
		if kind == "pdf" {
			if !strings.Contains(line, "1 page") || rows != 1 {
				t.Errorf("pdf: summary %q, %d page rows; want its page", line, rows)
			}
			continue
		}
		if strings.Contains(line, "page") || rows != 0 || !strings.Contains(line, "29,000") {
			t.Errorf("%s: summary %q, %d page rows; want the characters only", kind, line, rows)
		}
	}
}
