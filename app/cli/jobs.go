package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// PrintJobs prints jobs as a table, or as JSON (one object a line).
func (c *CLI) PrintJobs(jobs []job.Job, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		for _, j := range jobs {
			j.Message = app.ShownMessage(j)
			enc.Encode(j)
		}
		return
	}
	tw := newTable(c.Stdout)
	fmt.Fprintln(tw, "JOB\tTYPE\tSTATUS\tPROGRESS\tNAME\tUPDATED\tMESSAGE")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f%%\t%s\t%s\t%s\n", jobRef(j), j.Type, j.Status, j.Progress, j.Name,
			j.UpdatedAt.Local().Format("2006-01-02 15:04:05"), app.OutcomeLine(j))
	}
	tw.Flush()
}

// jobRef is how the command line prints a job for a person to name it again: its number (12),
// or id:345 for a job with a parent, which has no number (ls --all lists those).
func jobRef(j job.Job) string {
	if j.Number > 0 {
		return strconv.FormatInt(j.Number, 10)
	}
	return j.Ref()
}

// parseJobRef reads a job as a person names it: its number (12 or #12), or id:345 (the form
// jobRef prints for a job without a number). ok is false when s is neither.
func parseJobRef(s string) (number, id int64, ok bool) {
	s = strings.TrimSpace(s)
	if rest, isID := strings.CutPrefix(s, "id:"); isID {
		id, err := strconv.ParseInt(rest, 10, 64)
		return 0, id, err == nil && id > 0
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	return n, 0, err == nil && n > 0
}

// JobArg checks that args hold one job as parseJobRef reads it and returns it, printing a
// usage error when they do not.
func (c *CLI) JobArg(args []string) (string, bool) {
	if len(args) != 1 {
		c.Usage("name one job (its number, such as 12)", "ジョブを 1 つ（12 のような番号で）指定してください。")
		return "", false
	}
	if _, _, ok := parseJobRef(args[0]); !ok {
		c.Usage(fmt.Sprintf("%q is not a job number (a number such as 12, or id:345 for a job a workflow made)", args[0]),
			fmt.Sprintf("%q はジョブ番号ではありません（12 のような数字、ワークフローが作ったジョブは id:345 の形です）。", args[0]))
		return "", false
	}
	return args[0], true
}

// FindJob returns the job ref names (a number, or id:N; see parseJobRef), through the App.
func FindJob(ctx context.Context, a *app.App, ref string) (job.Job, error) {
	number, id, ok := parseJobRef(ref)
	switch {
	case !ok:
		return job.Job{}, job.Errorf(job.E014, "%q is not a job number", ref).WithJa(fmt.Sprintf("%q はジョブ番号ではありません。", ref))
	case number > 0:
		return a.JobByNumber(ctx, number)
	}
	return a.Get(ctx, id)
}

// openJob reads the job a command acts on (JobArg), opens the App and finds the job; a is nil
// when it has printed why not, and code is then the exit code.
func (c *CLI) openJob(args []string) (a *app.App, j job.Job, code int) {
	ref, ok := c.JobArg(args)
	if !ok {
		return nil, j, ExitUsage
	}
	if a, ok = c.Open(); !ok {
		return nil, j, ExitFailed
	}
	j, err := FindJob(context.Background(), a, ref)
	if err != nil {
		return nil, j, c.Fail(err)
	}
	return a, j, ExitOK
}
