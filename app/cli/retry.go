package cli

import (
	"context"
	"fmt"
)

// cmdRetry is `jobdesk retry JOB`: the job itself again, or a new job retrying it.
func (c *CLI) cmdRetry(args []string) int {
	a, old, code := c.openJob(args)
	if a == nil {
		return code
	}
	j, err := a.Retry(context.Background(), old.ID)
	if err != nil {
		return c.Fail(err)
	}
	if j.ID != old.ID {
		fmt.Fprintf(c.Stdout, "job %s: %s (a new job retrying job %s)\n", j.Ref(), j.Status, old.Ref())
		return ExitOK
	}
	fmt.Fprintf(c.Stdout, "job %s: %s\n", j.Ref(), j.Status)
	return ExitOK
}
