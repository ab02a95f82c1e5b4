package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
)

// TestCSVErrorsPages: the rejected rows of a CSV job read page by page from its errors file, in
// order, values with commas, quotes and line breaks intact, across the index's marks.
func TestCSVErrorsPages(t *testing.T) {
	a, ctx := openTestApp(t, t.TempDir())
	var b strings.Builder
	b.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	bad := 0
	for i := 1; i <= 2000; i++ {
		switch {
		case i%9 == 0:
			fmt.Fprintf(&b, "U%05d,\"1,\"\"2\"\"\n3\",4\n", i)
			bad++
		case i%5 == 0:
			fmt.Fprintf(&b, "U%05d,x,4\n", i)
			bad++
		default:
			fmt.Fprintf(&b, "U%05d,%d,4\n", i, i)
		}
	}
	path := filepath.Join(t.TempDir(), "log.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	jobs, err := a.Submit(ctx, []string{path}, SubmitOptions{Extra: map[string]string{"tolerate-percent": "100", "tolerate-count": "100000"}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := a.Wait(ctx, jobs[0].ID)
	if err != nil || j.Status != job.Partial {
		t.Fatalf("%v %s %v", err, j.Status, j.Error)
	}
	var all []CSVErrorRow
	for off := 0; ; off += 70 {
		p, err := a.CSVErrors(ctx, j.ID, off, 70)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != bad {
			t.Fatalf("total %d, want %d", p.Total, bad)
		}
		if len(p.Rows) == 0 {
			break
		}
		all = append(all, p.Rows...)
	}
	if len(all) != bad {
		t.Fatalf("%d rows read, want %d", len(all), bad)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Line <= all[i-1].Line {
			t.Fatalf("rows out of order at %d: %d after %d", i, all[i].Line, all[i-1].Line)
		}
	}
	var quoted CSVErrorRow
	for _, r := range all {
		if strings.Contains(r.Value, "\n") {
			quoted = r
			break
		}
	}
	if quoted.Value != "1,\"2\"\n3" || quoted.ReasonJa == "" || quoted.Reason == "" || quoted.Column != "ログイン回数" {
		t.Fatalf("quoted row %+v", quoted)
	}
	if got := ExportFormats(j); strings.Join(got, ",") != "xlsx,csv" {
		t.Fatalf("formats %v", got)
	}
	if _, err := a.CSVErrors(ctx, 999, 0, 10); job.AsError(err).Code != job.E014 {
		t.Fatalf("a missing job: %v", err)
	}
}

// TestMarkdownSections: headings of levels 1 and 2 outside code fences, and a PDF's page
// markers, each with its span; a page marker in a code block or pushed down under a mail's
// attachment begins no section. PDFs converted before the markers (## Page N) still list pages.
func TestMarkdownSections(t *testing.T) {
	md := "# a.pdf\n\n<!-- Page 1 -->\n\none\n```\n# not a heading\n<!-- Page 7 -->\n```\n<!-- Page 2 -->\n\ntwo\n" +
		"# b.xlsx\n\n## 売上\n| x |\n# c.eml\n\n### d.pdf\n\n<!-- attachment page 1 -->\n\nthree\n"
	s := MarkdownSections(md)
	var titles []string
	for _, x := range s {
		titles = append(titles, fmt.Sprintf("%d:%s:%d", x.Level, x.Title, x.Page))
	}
	if strings.Join(titles, "|") != "1:a.pdf:0|2:Page 1:1|2:Page 2:2|1:b.xlsx:0|2:売上:0|1:c.eml:0" {
		t.Fatalf("%q", titles)
	}
	if got := md[s[1].Start:s[1].End]; !strings.HasPrefix(got, "<!-- Page 1 -->") || !strings.Contains(got, "# not a heading") || strings.Contains(got, "two") {
		t.Fatalf("page 1 is %q", got)
	}
	if got := md[s[0].Start:s[0].End]; strings.Contains(got, "b.xlsx") || !strings.Contains(got, "two") {
		t.Fatalf("a.pdf is %q", got)
	}
	old := MarkdownSections("## Page 1\n\none\n## Page 2\n\ntwo\n")
	if len(old) != 2 || old[1].Title != "Page 2" {
		t.Fatalf("%+v", old)
	}
}

// TestMarkdownSectionTitlesReadAsWritten: a sheet or slide title the converter escaped is
// offered as the document wrote it.
func TestMarkdownSectionTitlesReadAsWritten(t *testing.T) {
	s := MarkdownSections("# &lt;div&gt;\\*案\\*.pptx\n\n## Slide 1: Q1\\_ \\[速報\\] &amp;lt;\n")
	if len(s) != 2 || s[0].Title != "<div>*案*.pptx" || s[1].Title != "Slide 1: Q1_ [速報] &lt;" {
		t.Fatalf("%+v", s)
	}
}

// TestMarkdownSectionsOfSlides: a deck's slide markers start its slides' sections, titled by
// the heading that follows ("Slide 2" for a slide without one, hidden slides marked); the heading
// is not a section of its own, and a marker-like line in a code block or in text is no slide.
func TestMarkdownSectionsOfSlides(t *testing.T) {
	md := "# 導入\n\n<!-- Slide 1 -->\n\n## 売上\\_速報\n\n本文\n\n<!-- Slide 2 -->\n\n図だけ\n\n## 図の説明\n\n" +
		"<!-- Slide 3 (hidden) -->\n\n## 計画\n\n```\n<!-- Slide 9 -->\n```\n\n文中の <!-- Slide 8 --> は違う\n\n<!-- Slide 4 (hidden) -->\n"
	s := MarkdownSections(md)
	var titles []string
	for _, x := range s {
		titles = append(titles, fmt.Sprintf("%d:%s", x.Level, x.Title))
	}
	if got := strings.Join(titles, "|"); got != "1:導入|2:Slide 1: 売上_速報|2:Slide 2|2:図の説明|2:Slide 3: 計画 (hidden)|2:Slide 4 (hidden)" {
		t.Fatalf("%q", got)
	}
	if got := md[s[1].Start:s[1].End]; got != "<!-- Slide 1 -->\n\n## 売上\\_速報\n\n本文\n\n" {
		t.Fatalf("slide 1 is %q", got)
	}
	if got := md[s[4].Start:s[4].End]; !strings.HasPrefix(got, "<!-- Slide 3 (hidden) -->") || !strings.Contains(got, "Slide 9") || strings.Contains(got, "Slide 4") {
		t.Fatalf("slide 3 is %q", got)
	}
}

// TestMarkdownSectionsOfAnAttachedDeck: a deck attached to a mail, its headings pushed down
// under the attachment's, gives no slide sections (titled or not); the mail's own sections stay.
func TestMarkdownSectionsOfAnAttachedDeck(t *testing.T) {
	md := "# 資料送付\n\n## Content\n\n本文\n\n## Attachments\n\n### deck.pptx\n\n<!-- Slide 1 -->\n\n##### 概要\n\n本文\n\n" +
		"<!-- Slide 2 -->\n\n図だけ\n\n# 次の文書\n\n<!-- Slide 1 -->\n\n## 表紙\n"
	var titles []string
	for _, x := range MarkdownSections(md) {
		titles = append(titles, fmt.Sprintf("%d:%s", x.Level, x.Title))
	}
	if got := strings.Join(titles, "|"); got != "1:資料送付|2:Content|2:Attachments|1:次の文書|2:Slide 1: 表紙" {
		t.Fatalf("%q", got)
	}
}

// TestGoalOfJobAndExport: an AI job's goal comes with its chart and usage, and saves as
// Markdown, CSV and XLSX.
func TestGoalOfJobAndExport(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	t.Setenv(aifamily.EnvEndpoint, srv.URL)
	t.Setenv(aifamily.EnvModel, "loopback-model")
	t.Setenv(aifamily.EnvProvider, "openai")
	a, ctx := openTestApp(t, t.TempDir())
	first, err := a.SubmitGoal(ctx, GoalRequest{Title: "英語で会議を進められるようになる"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := a.Wait(ctx, first.ID)
	if err != nil || j.Status != job.Succeeded {
		t.Fatalf("%v %s", err, j.Status)
	}
	v, err := a.GoalOfJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Goal.Title != "英語で会議を進められるようになる" || len(v.Goal.Subgoals) != 8 || v.Usage.Calls == 0 {
		t.Fatalf("%+v", v)
	}
	if got := ExportFormats(j); strings.Join(got, ",") != "md,csv,xlsx" {
		t.Fatalf("formats %v", got)
	}
	dir := t.TempDir()
	for _, f := range []string{"md", "csv", "xlsx"} {
		out := filepath.Join(dir, "goal."+f)
		if err := a.ExportResult(ctx, j.ID, f, out); err != nil {
			t.Fatal(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "goal.md"))
	if !strings.Contains(string(md), "# 英語で会議を進められるようになる") || !strings.Contains(string(md), "## 1. "+v.Goal.Subgoals[0].Title) {
		t.Fatalf("markdown %s", md)
	}
	if err := a.ExportResult(ctx, j.ID, "pdf", filepath.Join(dir, "x.pdf")); job.AsError(err).Code != job.E014 {
		t.Fatalf("pdf: %v", err)
	}
	r, ok := EligibilityOf(job.Job{Type: aijob.TypeEligibility, Result: []byte(`{"fallback_level":2,"eligibility":{"must":[{"key":"region","text":"都内"}]}}`)})
	if !ok || r.FallbackLevel != 2 || r.Eligibility.Must[0].Text != "都内" {
		t.Fatalf("%+v", r)
	}
}

// openTestApp opens an App on dir, closed when the test ends, and a context of 30 s.
func openTestApp(t *testing.T, dir string) (*App, context.Context) {
	t.Helper()
	a, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return a, ctx
}
