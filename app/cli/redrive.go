package cli

// cmdRedrive is `jobdesk redrive JOB`: a failed workflow job goes on from the state that failed
// (redriveJob, in flow.go, which `flow redrive` shares).
func (c *CLI) cmdRedrive(args []string) int {
	a, j, code := c.openJob(args)
	if a == nil {
		return code
	}
	return redriveJob(c, a, j)
}
