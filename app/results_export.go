package app

import (
	"context"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"jobdesk/app/family"
	"jobdesk/engine/aijob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
)

// ExportFormats lists the formats finished job j's result can be saved as from the window, in
// the order to offer them: a CSV job's report and errors ("xlsx", "csv"), a conversion's
// Markdown ("md"), an AI goal's chart and an eligibility extraction's requirements ("md", "csv",
// "xlsx"). A job with no result file to save has none.
func ExportFormats(j job.Job) []string {
	if !j.Status.Final() || len(j.Result) == 0 {
		return nil
	}
	switch {
	case resultFile(j, "reportXlsx") != "" || resultFile(j, "errorsCsv") != "":
		var out []string
		if resultFile(j, "reportXlsx") != "" {
			out = append(out, "xlsx")
		}
		if resultFile(j, "errorsCsv") != "" {
			out = append(out, "csv")
		}
		return out
	case resultFile(j, "output_path") != "":
		return docjob.ExportFormats
	case j.Type == aijob.TypeEligibility:
		return []string{"md", "csv", "xlsx"}
	case goalIDOf(j.Result) != 0:
		return []string{"md", "csv", "xlsx"}
	}
	return nil
}

// ExportResult writes finished job id's result to the file out in format (one of
// ExportFormats): the families' own files through Export, an AI goal or an eligibility
// extraction as a table or Markdown written here.
func (a *App) ExportResult(ctx context.Context, id int64, format, out string) error {
	j, err := a.Get(ctx, id)
	if err != nil {
		return err
	}
	format = strings.ToLower(strings.TrimPrefix(format, "."))
	if r, ok := EligibilityOf(j); ok {
		return writeTable(format, out, eligibilityTable(r), eligibilityMarkdown(r))
	}
	if j.Status.Final() && goalIDOf(j.Result) != 0 {
		v, err := a.GoalOfJob(ctx, id)
		if err != nil {
			return err
		}
		return writeTable(format, out, goalTable(v.Goal), goalMarkdown(v.Goal))
	}
	return a.Export(ctx, id, format, out)
}

// goalTable is a goal's chart as rows: sub-goal, action, task, one task a row.
func goalTable(g aijob.Goal) [][]string {
	rows := [][]string{{"サブ目標 sub-goal", "行動 action", "種類 type", "タスク task", "目安（分） minutes"}}
	for _, sg := range g.Subgoals {
		if len(sg.Actions) == 0 {
			rows = append(rows, []string{sg.Title, "", "", "", ""})
		}
		for _, ac := range sg.Actions {
			if len(ac.Tasks) == 0 {
				rows = append(rows, []string{sg.Title, ac.Title, ac.Type, "", ""})
			}
			for _, t := range ac.Tasks {
				rows = append(rows, []string{sg.Title, ac.Title, ac.Type, t.Title, strconv.Itoa(t.EstimatedMinutes)})
			}
		}
	}
	return rows
}

// goalMarkdown is a goal's chart as nested Markdown lists under its title.
func goalMarkdown(g aijob.Goal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", g.Title)
	if g.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", g.Description)
	}
	if g.Deadline != "" {
		fmt.Fprintf(&b, "期限 Deadline: %s\n\n", g.Deadline)
	}
	for _, sg := range g.Subgoals {
		fmt.Fprintf(&b, "## %d. %s\n\n", sg.Position, sg.Title)
		for _, ac := range sg.Actions {
			fmt.Fprintf(&b, "- %s (%s)\n", ac.Title, ac.Type)
			for _, t := range ac.Tasks {
				fmt.Fprintf(&b, "  - %s (%d 分 min)\n", t.Title, t.EstimatedMinutes)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// eligibilityGroups names the groups of an eligibility extraction in the order shown.
func eligibilityGroups(e aijob.Eligibility) []struct {
	Key   string
	Items []aijob.Item
} {
	return []struct {
		Key   string
		Items []aijob.Item
	}{{"must", e.Must}, {"need_check", e.NeedCheck}, {"must_not", e.MustNot}, {"risk_flags", e.RiskFlags}}
}

// EligibilityGroupNames are the groups' names in both languages, for files.
var EligibilityGroupNames = map[string]string{
	"must": "必須 must", "need_check": "要確認 need check", "must_not": "対象外 must not",
	"risk_flags": "リスク risk", "missing_keys": "不明 missing",
}

func eligibilityTable(r aijob.EligibilityResult) [][]string {
	rows := [][]string{{"区分 group", "項目 key", "内容 text", "出典 source"}}
	for _, g := range eligibilityGroups(r.Eligibility) {
		for _, it := range g.Items {
			rows = append(rows, []string{EligibilityGroupNames[g.Key], it.Key, it.Text, it.Source})
		}
	}
	for _, k := range r.Eligibility.MissingKeys {
		rows = append(rows, []string{EligibilityGroupNames["missing_keys"], k, "", ""})
	}
	return rows
}

func eligibilityMarkdown(r aijob.EligibilityResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", filepath.Base(r.Path))
	for _, g := range eligibilityGroups(r.Eligibility) {
		if len(g.Items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", EligibilityGroupNames[g.Key])
		for _, it := range g.Items {
			fmt.Fprintf(&b, "- **%s**: %s\n", it.Key, it.Text)
		}
		b.WriteString("\n")
	}
	if len(r.Eligibility.MissingKeys) > 0 {
		fmt.Fprintf(&b, "## %s\n\n- %s\n", EligibilityGroupNames["missing_keys"], strings.Join(r.Eligibility.MissingKeys, "\n- "))
	}
	return b.String()
}

// writeTable writes rows (the first a header) as "csv" (UTF-8 with a BOM, for Excel) or "xlsx",
// or md as "md", to out through a temporary file in the same folder.
func writeTable(format, out string, rows [][]string, md string) error {
	var data []byte
	switch format {
	case "md", "markdown":
		data = []byte(md)
	case "csv":
		var b strings.Builder
		b.WriteString("\uFEFF")
		w := csv.NewWriter(&b)
		w.UseCRLF = true
		_ = w.WriteAll(rows)
		data = []byte(b.String())
	case "xlsx":
		f := excelize.NewFile()
		defer f.Close()
		for i, r := range rows {
			cells := make([]any, len(r))
			for k, c := range r {
				cells[k] = c
			}
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := f.SetSheetRow("Sheet1", cell, &cells); err != nil {
				return job.Wrap(job.E016, err, "the workbook could not be built").WithJa("ブックを作成できませんでした。")
			}
		}
		buf, err := f.WriteToBuffer()
		if err != nil {
			return job.Wrap(job.E016, err, "the workbook could not be built").WithJa("ブックを作成できませんでした。")
		}
		data = buf.Bytes()
	default:
		return job.Errorf(job.E014, "this result is saved as md, csv or xlsx, not %q", format).
			WithJa(fmt.Sprintf("この結果は md・csv・xlsx で保存できます（%q は使えません）。", format))
	}
	return writeFileAtomic(out, data)
}

// writeFileAtomic writes data to path so that a reader never sees half a file
// (family.WriteFileAtomic).
func writeFileAtomic(path string, data []byte) error { return family.WriteFileAtomic(path, data) }
