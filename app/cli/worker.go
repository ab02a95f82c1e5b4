package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"jobdesk/app"
)

// cmdWorker is `jobdesk worker`: the engine without a window until SIGINT or SIGTERM.
func (c *CLI) cmdWorker(args []string) int {
	fs := c.Flags("worker")
	workers := fs.Int("workers", 0, "jobs at once (default: number of CPUs)")
	applyAI := aiFlags(fs)
	if _, err := Parse(fs, args); err != nil {
		return ExitUsage
	}
	applyAI()
	a, err := app.Open(app.Config{DataDir: c.dataDir, Workers: *workers})
	if err != nil {
		return c.Fail(err)
	}
	c.app = a
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := a.StartEngine(ctx); err != nil {
		return c.Fail(err)
	}
	types := a.EngineTypes()
	sort.Strings(types)
	fmt.Fprintf(c.Stderr, "jobdesk worker: running jobs in %s (types: %s); Ctrl-C to stop\n", a.DataDir(), strings.Join(types, ", "))
	<-ctx.Done()
	fmt.Fprintln(c.Stderr, "jobdesk worker: stopping; running jobs return to the queue")
	return ExitOK
}
