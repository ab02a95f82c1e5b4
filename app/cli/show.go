package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"jobdesk/app"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// cmdShow is `jobdesk show JOB`: one job, its cloud detail, and with --history its events (and
// a workflow job's execution history).
func (c *CLI) cmdShow(args []string) int {
	c.readsOnly = true
	fs := c.Flags("show")
	asJSON := fs.Bool("json", false, "print JSON")
	history := fs.Bool("history", false, "also print the job's history")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	a, j, code := c.openJob(pos)
	if a == nil {
		return code
	}
	ctx := context.Background()
	id := j.ID
	var events []job.Event
	if *history {
		if events, err = a.History(ctx, id); err != nil {
			return c.Fail(err)
		}
	}
	// A cloud job's detail: where it runs (region, execution, console link, input in S3).
	var cloud *app.CloudDetail
	if j.Target == job.TargetCloud {
		if d, err := a.CloudDetail(ctx, id); err == nil {
			cloud = &d
		}
	}
	j.Message = app.ShownMessage(j)
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		switch {
		case *history:
			enc.Encode(struct {
				job.Job
				Cloud   *app.CloudDetail `json:"cloud,omitempty"`
				History []job.Event      `json:"history"`
			}{j, cloud, events})
		case cloud != nil:
			enc.Encode(struct {
				job.Job
				Cloud *app.CloudDetail `json:"cloud"`
			}{j, cloud})
		default:
			enc.Encode(j)
		}
		return ExitOK
	}
	tw := newTable(c.Stdout)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("Job", j.Ref())
	row("Name", j.Name)
	row("Type", j.Type)
	row("Status", string(j.Status))
	row("Progress", fmt.Sprintf("%.1f%%", j.Progress))
	row("Message", j.Message)
	row("Attempts", fmt.Sprintf("%d of %d", j.Attempts, j.MaxAttempts))
	row("Target", j.Target)
	if cloud != nil {
		for _, r := range [][2]string{{"Region", cloud.Region}, {"Execution", cloud.ExecutionARN}, {"Console", cloud.ConsoleURL}, {"Input", cloud.InputURI}} {
			if r[1] != "" {
				row(r[0], r[1])
			}
		}
	}
	row("Created", j.CreatedAt.Local().Format(time.RFC3339))
	if j.CompletedAt != nil {
		row("Completed", j.CompletedAt.Local().Format(time.RFC3339))
	}
	if j.ParentID != 0 {
		parent := job.Ref(j.ParentID, 0)
		if p, err := a.Get(ctx, j.ParentID); err == nil {
			parent = p.Ref()
		}
		row("Parent", parent)
	}
	row("Input", string(j.Input))
	if len(j.Result) > 0 {
		row("Result", string(j.Result))
	}
	if j.Error != nil {
		row("Error", fmt.Sprintf("%s %s: %s", j.Error.Code, j.Error.ErrorName(), j.Error.Message))
		if j.Error.MessageJa != "" {
			row("", j.Error.MessageJa)
		}
	}
	tw.Flush()
	if *history {
		fmt.Fprintln(c.Stdout, "\nHistory:")
		tw = newTable(c.Stdout)
		for _, e := range events {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.At.Local().Format("15:04:05.000"), e.Kind, e.Status, e.Message)
		}
		tw.Flush()
	}
	if *history && j.Type == flow.TypeExecution {
		flowHistoryOfJob(c, a, j.ID)
	}
	return ExitOK
}
