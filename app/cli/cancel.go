package cli

import (
	"context"
	"fmt"
)

// cmdCancel is `jobdesk cancel JOB`.
func (c *CLI) cmdCancel(args []string) int {
	a, j, code := c.openJob(args)
	if a == nil {
		return code
	}
	ctx := context.Background()
	if err := a.Cancel(ctx, j.ID); err != nil {
		return c.Fail(err)
	}
	if now, err := a.Get(ctx, j.ID); err == nil && now.Status.Final() {
		fmt.Fprintf(c.Stdout, "job %s: %s\n", j.Ref(), now.Status)
	} else {
		fmt.Fprintf(c.Stdout, "job %s: cancel requested; it stops within a second (or when an engine next starts)\n", j.Ref())
	}
	return ExitOK
}
