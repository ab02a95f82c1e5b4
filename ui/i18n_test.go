package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"jobdesk/app"
	"jobdesk/assets"
	"jobdesk/engine/job"
)

// TestTranslationsMatch: every shipped language has exactly the same keys, the same fmt verbs
// in each sentence, and no empty sentence.
func TestTranslationsMatch(t *testing.T) {
	langs := assets.Languages()
	if strings.Join(langs, ",") != "en,ja" {
		t.Fatalf("languages %v", langs)
	}
	verbs := regexp.MustCompile(`%[dsvq]`)
	dicts := map[string]map[string]string{}
	for _, l := range langs {
		b, err := assets.Translations(l)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s.json: %v", l, err)
		}
		dicts[l] = m
	}
	for key, ja := range dicts[LangJa] {
		en, ok := dicts[LangEn][key]
		if !ok {
			t.Errorf("en lacks %q", key)
			continue
		}
		if strings.TrimSpace(ja) == "" || strings.TrimSpace(en) == "" {
			t.Errorf("%q is empty in a language", key)
		}
		if a, b := verbs.FindAllString(ja, -1), verbs.FindAllString(en, -1); strings.Join(a, "") != strings.Join(b, "") {
			t.Errorf("%q: ja verbs %v, en verbs %v", key, a, b)
		}
	}
	for key := range dicts[LangEn] {
		if _, ok := dicts[LangJa][key]; !ok {
			t.Errorf("ja lacks %q", key)
		}
	}
}

// TestEveryKeyUsedExists scans the package's source for T("…") keys and checks that each, and
// every status name, has a Japanese sentence.
func TestEveryKeyUsedExists(t *testing.T) {
	ja := newTranslator(LangJa)
	files, _ := filepath.Glob("*.go")
	// T("key"), and the helpers that take a key: label("key") in settings, add("key") in detail.
	re := regexp.MustCompile(`(?:T|label|add)\("([a-z_]+\.[a-z_.]*[a-z_])"`)
	var keys []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			keys = append(keys, m[1])
		}
	}
	for _, s := range job.Statuses {
		keys = append(keys, "job.status."+string(s))
	}
	sort.Strings(keys)
	if len(keys) < 40 {
		t.Fatalf("found only %d keys; the scan is broken", len(keys))
	}
	for _, k := range keys {
		if _, ok := ja.words[k]; !ok {
			t.Errorf("ja.json lacks %q", k)
		}
	}
}

// TestTranslatorFallback: an unknown language means Japanese; a missing key shows the key.
func TestTranslatorFallback(t *testing.T) {
	cases := []struct{ lang, key, want string }{
		{"fr", "action.retry", "再実行"},
		{LangEn, "action.retry", "Retry"},
		{LangJa, "no.such.key", "no.such.key"},
		{LangEn, "filter.all", "All 3"},
	}
	for _, c := range cases {
		var got string
		if c.key == "filter.all" {
			got = newTranslator(c.lang).T(c.key, 3)
		} else {
			got = newTranslator(c.lang).T(c.key)
		}
		if got != c.want {
			t.Errorf("%s %s = %q; want %q", c.lang, c.key, got, c.want)
		}
	}
}

// TestErrorBody: the chosen language first, the other second, the cause last.
func TestErrorBody(t *testing.T) {
	e := job.Wrap(job.E005, os.ErrPermission, "the PDF is password-protected").WithJa("PDF にパスワードが設定されています。")
	if got := errorBody(e, LangJa); got != "E005  PDF にパスワードが設定されています。\nthe PDF is password-protected\n(permission denied)" {
		t.Errorf("ja: %q", got)
	}
	if got := errorBody(e, LangEn); !strings.HasPrefix(got, "E005  the PDF is password-protected\nPDF に") {
		t.Errorf("en: %q", got)
	}
}

// TestResultRows: a result becomes labelled lines for people — known fields translated and
// first, figures grouped, durations and short lists written out, machine fields left out, files
// that exist marked for opening — and odd input never panics.
// TestResultRowsLayoutEntity: a CSV result of another layout labels its counts by the layout's
// entity in the window's language (社員数 in Japanese, Employees in English).
func TestResultRowsLayoutEntity(t *testing.T) {
	raw := json.RawMessage(`{"status":"SUCCESS","totalRecords":30,"successCount":30,"users":1201,"usersChanged":5,
		"key":"社員ID","entity":"社員","entityEn":"employee"}`)
	labels := func(lang string) string {
		var out []string
		for _, r := range resultRows(newTranslator(lang), app.DescribeResult(job.Job{Result: raw})) {
			out = append(out, r.Label+"="+r.Value)
		}
		return strings.Join(out, "; ")
	}
	if ja := labels(LangJa); !strings.Contains(ja, "社員数=1,201") || !strings.Contains(ja, "更新した社員=5") || strings.Contains(ja, "Employees") {
		t.Errorf("ja rows: %s", ja)
	}
	if en := labels(LangEn); !strings.Contains(en, "Employees=1,201") || strings.Contains(en, "社員数") {
		t.Errorf("en rows: %s", en)
	}
}

func TestResultRows(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.xlsx")
	if err := os.WriteFile(report, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ja, en := newTranslator(LangJa), newTranslator(LangEn)
	raw := json.RawMessage(`{"executionArn":"arn:aws:states:local:0:execution:x:y","totalRecords":1000000,
		"successCount":999990,"delimiter":"\t","processingTimeSeconds":0.4567,"reportXlsx":` + strconv.Quote(report) + `,
		"errorsCsv":"/nonexistent/errors.csv","no_text_pages":[2,5],"columns":[{"a":1},{"b":2}],"cached":true,
		"customField":1.23456,"summary":"All rows were accepted."}`)
	got := resultRows(ja, app.DescribeResult(job.Job{Result: raw}))
	want := []resultRow{
		{Label: "行数", Value: "1,000,000"},
		{Label: "反映した行", Value: "999,990"},
		{Label: "エラー一覧（CSV）", Value: "/nonexistent/errors.csv"},
		{Label: "レポート（Excel）", Value: "report.xlsx", File: report},
		{Label: "区切り文字", Value: "TAB"},
		{Label: "処理時間", Value: "457ms"},
		{Label: "列", Value: "2 件"},
		{Label: "テキストのないページ", Value: "2, 5"},
		{Label: "保存済みの結果を再利用", Value: "はい"},
		{Label: "Custom field", Value: "1.235"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ja rows:\n got %+v\nwant %+v", got, want)
	}
	if rows := resultRows(en, app.DescribeResult(job.Job{Result: raw})); rows[0].Label != "Rows" || rows[6].Value != "2 items" || rows[8].Value != "yes" {
		t.Fatalf("en rows: %+v", rows)
	}
	for in, want := range map[string][]resultRow{
		`null`:    nil,
		``:        nil,
		`[1, 2]`:  {{Value: "[1,2]"}},
		`{broken`: {{Value: "{broken"}},
		`"text"`:  {{Value: `"text"`}},
	} {
		if got := resultRows(en, app.DescribeResult(job.Job{Result: json.RawMessage(in)})); !reflect.DeepEqual(got, want) {
			t.Errorf("%s → %+v; want %+v", in, got, want)
		}
	}
	var many strings.Builder
	many.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&many, `"f%02d":%d,`, i, i)
	}
	many.WriteString(`"last":0}`)
	if rows := resultRows(en, app.DescribeResult(job.Job{Result: json.RawMessage(many.String())})); len(rows) != app.MaxResultRows+1 || rows[app.MaxResultRows].Value != "… and 17 more fields" {
		t.Fatalf("%d rows, last %+v", len(rows), rows[len(rows)-1])
	}
}

// FuzzResultRows: any bytes a handler stored render without panicking.
func FuzzResultRows(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte(`{"ユーザー":"値","n":[1,{"x":null}],"t":"\t","s_seconds":-1e300}`))
	tr := newTranslator(LangJa)
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = resultRows(tr, app.DescribeResult(job.Job{Result: b}))
		_ = inputSummary(tr, b)
	})
}

// TestWrapText: lines never exceed the width and no text is lost.
func TestWrapText(t *testing.T) {
	cases := []struct {
		in    string
		width int
	}{
		{"E006  2 行中 2 行（100.00 %）が不正で、許容範囲（5 % または 50 行）を超えたため、テーブルは変更していません。", 20},
		{"2 of 2 rows (100.00 %) were rejected, over the limit of 5 % or 50 rows; the table was not changed.", 24},
		{"short\nlines stay", 40},
		{"", 10},
	}
	for _, c := range cases {
		got := wrapText(c.in, c.width)
		for _, l := range strings.Split(got, "\n") {
			if len([]rune(l)) > c.width {
				t.Errorf("line %q is longer than %d", l, c.width)
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if squash(got) != squash(c.in) {
			t.Errorf("text changed: %q → %q", c.in, got)
		}
	}
}
