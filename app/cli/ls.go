package cli

import (
	"context"
	"fmt"
	"strings"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// cmdLs is `jobdesk ls`: the jobs, newest first, as a table or JSON lines.
func (c *CLI) cmdLs(args []string) int {
	c.readsOnly = true
	fs := c.Flags("ls")
	status := fs.String("status", "", "only jobs in this status")
	typ := fs.String("type", "", "only jobs of this type")
	limit := fs.Int("limit", 100, "at most this many jobs")
	all := fs.Bool("all", false, "also list the jobs a workflow fanned out (its tasks and map items)")
	asJSON := fs.Bool("json", false, "print JSON, one object per line")
	if _, err := Parse(fs, args); err != nil {
		return ExitUsage
	}
	st := job.Status(strings.ToUpper(*status))
	if st != "" && !st.Valid() {
		return c.Usage(fmt.Sprintf("ls: unknown status %q (one of %v)", *status, job.Statuses),
			fmt.Sprintf("ls: %q という状態はありません（%v のいずれか）。", *status, job.Statuses))
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	jobs, err := a.List(context.Background(), app.ListFilter{Status: st, Type: *typ, Limit: *limit, TopLevel: !*all})
	if err != nil {
		return c.Fail(err)
	}
	c.PrintJobs(jobs, *asJSON)
	return ExitOK
}
