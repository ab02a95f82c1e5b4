package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// cmdRun is `jobdesk run FILE...`: one job per file, submitted; with --wait run here (or by
// the engine that serves the data folder) and followed to the end.
func (c *CLI) cmdRun(args []string) int {
	fs := c.Flags("run")
	typ := fs.String("type", "", "job type (default: detected from each file)")
	wait := fs.Bool("wait", false, "wait for the jobs, showing progress on stderr")
	timeout := fs.String("timeout", "", "with --wait: give up waiting after this long, e.g. 90s or 10m; the jobs stay queued (default: no limit, but 5m while the AI provider is offline; 0: wait for ever)")
	asJSON := fs.Bool("json", false, "print the jobs as JSON")
	force := fs.Bool("force", false, "run again even when the same file was already processed")
	target := targetFlag(fs)
	extra := addRunFlags(fs)
	applyAI := aiFlags(fs) // for AI job types run with --wait in this process
	files, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	applyAI()
	if len(files) == 0 {
		return c.Usage("run: name at least one file", "run: ファイルを 1 つ以上指定してください。")
	}
	if *timeout != "" {
		d, err := time.ParseDuration(*timeout)
		if err != nil || d < 0 {
			return c.Usage(fmt.Sprintf("run: --timeout %q is not a duration such as 90s or 10m", *timeout),
				fmt.Sprintf("run: --timeout %q は 90s や 10m のような時間ではありません。", *timeout))
		}
		c.waitLimit, c.waitLimitSet = d, true
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	jobs, err := a.Submit(ctx, files, app.SubmitOptions{Type: *typ, Force: *force, Target: *target, Extra: extra()})
	if err != nil {
		return c.Fail(err)
	}
	for _, j := range jobs {
		if !*force && j.CreatedAt.Before(start.Truncate(time.Millisecond)) {
			fmt.Fprintf(c.Stderr, "jobdesk: %s was already submitted as job %s (%s); add --force to run it again\n", j.Name, j.Ref(), j.Status)
			fmt.Fprintf(c.Stderr, "         %s はジョブ %s として登録済みです（%s）。もう一度実行するには --force を付けてください。\n", j.Name, j.Ref(), j.Status)
		}
	}
	if *wait {
		if jobs, err = c.RunAndWait(ctx, a, jobs); err != nil {
			return c.Fail(err)
		}
	}
	c.PrintJobs(jobs, *asJSON)
	if !*wait {
		return ExitOK
	}
	return ExitCode(jobs)
}

// RunAndWait starts the engine in this process when no other engine serves the data folder,
// then waits for jobs (WaitJobs).
func (c *CLI) RunAndWait(ctx context.Context, a *app.App, jobs []job.Job) ([]job.Job, error) {
	if !a.EngineRunning(ctx) {
		if err := a.StartEngine(ctx); err != nil {
			return jobs, err
		}
	}
	return c.WaitJobs(ctx, a, jobs)
}
