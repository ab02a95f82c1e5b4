// Package cli is JobDesk's command line: the core commands (run, ls, show, cancel, retry,
// worker, export) and the families' own (csv, convert, generate, caption, extract-eligibility,
// goals, flow, serve), each over the app's service API or a family package's typed API, never
// the database or the queue.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"jobdesk/app"
	"jobdesk/engine/aijob"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// Exit codes of the command line.
const (
	ExitOK      = 0 // every job SUCCEEDED
	ExitFailed  = 1 // some job FAILED, TIMED_OUT or CANCELLED (or an error)
	ExitUsage   = 2 // the command line was wrong
	ExitPartial = 3 // some job PARTIAL and none worse
)

// CLI carries what every subcommand needs: where to print, the data folder, and the App once
// a command has opened it.
type CLI struct {
	Stdout, Stderr io.Writer
	dataDir        string
	readsOnly      bool // the command only reads: a read-only data folder still opens (ls, show)
	app            *app.App
	// waitLimit is how long WaitJobs waits in all (run --timeout; 0: no limit); with it unset,
	// WaitJobs still gives up after OfflineWait of every unfinished job being held back by an
	// offline AI provider.
	waitLimit    time.Duration
	waitLimitSet bool
}

// OfflineWait is how long `--wait` waits while every unfinished job is held back by an AI
// provider that does not answer, when --timeout does not say otherwise. The jobs stay queued.
const OfflineWait = 5 * time.Minute

// Command is one subcommand of the jobdesk binary. Run receives the arguments after the
// command's name and returns the exit code; it opens the App through the CLI it is given.
type Command struct {
	Name, Usage, Help string
	Run               func(c *CLI, args []string) int
}

// commands returns every subcommand: the core ones, then the families'.
func commands() []Command {
	return []Command{
		{"run", "run [--type T] [--target device|cloud|auto] [--wait [--timeout D]] [--json] [--force] FILE...", "submit one job per file; --wait shows progress and waits (at most --timeout; 5m while an AI provider is offline)", (*CLI).cmdRun},
		{"ls", "ls [--status S] [--type T] [--limit N] [--all] [--json]", "list jobs, newest first", (*CLI).cmdLs},
		{"show", "show JOB [--json] [--history]", "show one job (and its history)", (*CLI).cmdShow},
		{"cancel", "cancel JOB", "cancel a job (a running one stops within a second)", (*CLI).cmdCancel},
		{"retry", "retry JOB", "run a failed, timed-out, cancelled or partial job again (an AI job: as a new job linked to it)", (*CLI).cmdRetry},
		{"redrive", "redrive JOB", "continue a failed, timed-out or cancelled workflow job from the state that failed (what succeeded is not run again), on the device or in the cloud", (*CLI).cmdRedrive},
		{"worker", "worker", "run the engine without a window until SIGINT/SIGTERM", (*CLI).cmdWorker},
		{"export", "export JOB --format F -o FILE", "write a finished job's result file (csv, xlsx, md) elsewhere", (*CLI).cmdExport},
		csvCommand, convertCommand,
		generateCommand, captionCommand, eligibilityCommand, goalsCommand,
		flowCommand, serveCommand, cloudCommand, doctorCommand,
	}
}

// Usage prints the command line's help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "JobDesk — run jobs on this device. With no command, opens the window.")
	fmt.Fprintln(w, "\nUsage: jobdesk [--data-dir DIR] COMMAND [options]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() { // the usage, then what it does, so long usages need no padding
		fmt.Fprintf(w, "  %s\n      %s\n", c.Usage, c.Help)
	}
	fmt.Fprintln(w, "\nJOB is a job's number as ls and the window show it (12 or #12); a job a workflow made, which has")
	fmt.Fprintln(w, "no number (ls --all lists it), is named id:N.")
	fmt.Fprintln(w, "\nGlobal: --data-dir DIR (or JOBDESK_DATA_DIR) chooses the data folder.")
	fmt.Fprintln(w, "Exit codes: 0 all succeeded, 1 a job failed/timed out/was cancelled, 3 partial, 2 usage error.")
}

// SplitGlobal removes the global --data-dir flag (anywhere on the line) and returns the data
// folder and the remaining arguments.
func SplitGlobal(args []string) (dataDir string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--data-dir" || a == "-data-dir":
			if i+1 >= len(args) {
				return "", nil, job.Errorf(job.E014, "--data-dir needs a folder").WithJa("--data-dir にはフォルダーを指定してください。")
			}
			dataDir = args[i+1]
			i++
		case strings.HasPrefix(a, "--data-dir="):
			dataDir = strings.TrimPrefix(a, "--data-dir=")
		default:
			rest = append(rest, a)
		}
	}
	return dataDir, rest, nil
}

// Main runs the command line (args without the program name) and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	dataDir, args, err := SplitGlobal(args)
	if err != nil {
		return (&CLI{Stderr: stderr}).Fail(err)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		Usage(stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	for _, cmd := range commands() {
		if cmd.Name == args[0] {
			c := &CLI{Stdout: stdout, Stderr: stderr, dataDir: dataDir}
			defer func() {
				if c.app != nil {
					c.app.Close()
				}
			}()
			return cmd.Run(c, args[1:])
		}
	}
	(&CLI{Stderr: stderr}).Usage(fmt.Sprintf("unknown command %q (jobdesk --help lists them)", args[0]),
		fmt.Sprintf("%q というコマンドはありません（jobdesk --help で一覧を表示します）。", args[0]))
	fmt.Fprintln(stderr)
	Usage(stderr)
	return ExitUsage
}

// Open opens the App once per command; on failure it has printed the error.
func (c *CLI) Open() (*app.App, bool) {
	if c.app != nil {
		return c.app, true
	}
	a, err := app.Open(app.Config{DataDir: c.dataDir, ReadOnly: c.readsOnly})
	if err != nil {
		c.Fail(err)
		return nil, false
	}
	c.app = a
	return a, true
}

// Usage prints a usage error with its code and a sentence in English and Japanese, and returns
// the usage exit code.
func (c *CLI) Usage(en, ja string) int {
	return c.Fail(job.Errorf(job.E014, "%s", en).WithJa(ja))
}

// Fail prints err the way staff should read it (code, English sentence, Japanese sentence) and
// returns the exit code: ExitUsage for a bad request (E014), else ExitFailed.
func (c *CLI) Fail(err error) int {
	var je *job.Error
	if errors.As(err, &je) {
		fmt.Fprintf(c.Stderr, "jobdesk: %s: %s\n", je.Code, je.Message)
		if je.MessageJa != "" {
			fmt.Fprintf(c.Stderr, "         %s\n", je.MessageJa)
		}
		if je.Code == job.E014 {
			return ExitUsage
		}
		return ExitFailed
	}
	fmt.Fprintln(c.Stderr, "jobdesk:", err)
	return ExitFailed
}

// Flags returns an empty flag set for a subcommand that prints its errors to Stderr.
func (c *CLI) Flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	return fs
}

// Parse parses flags that may appear before or after positional arguments and returns the
// positional ones.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

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

// ExitCode is 0 when every job succeeded, 3 when some ended PARTIAL and none worse, else 1.
func ExitCode(jobs []job.Job) int {
	code := ExitOK
	for _, j := range jobs {
		switch j.Status {
		case job.Succeeded:
		case job.Partial:
			if code == ExitOK {
				code = ExitPartial
			}
		default:
			code = ExitFailed
		}
	}
	return code
}

// WaitJobs waits until every job is final, drawing progress on Stderr, and returns them as they
// ended. Ctrl-C cancels the unfinished ones.
func (c *CLI) WaitJobs(ctx context.Context, a *app.App, jobs []job.Job) ([]job.Job, error) {
	events, unsub := a.Subscribe(1024)
	defer unsub()
	tty := isTerminal(c.Stderr)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastLine := printedLines{}
	var fullSince time.Time
	start := time.Now()
	var heldSince time.Time // since when every unfinished job waits for an offline AI provider
	for {
		done := 0
		for i := range jobs {
			if jobs[i].Status.Final() {
				done++
				continue
			}
			j, err := a.Get(ctx, jobs[i].ID)
			if err != nil {
				return jobs, err
			}
			jobs[i] = j
			if j.Status.Final() {
				done++
			}
		}
		c.drawProgress(jobs, tty, lastLine)
		if done == len(jobs) {
			if tty {
				fmt.Fprintln(c.Stderr)
			}
			return jobs, nil
		}
		// The disk is full: the engine is paused and nothing more can be recorded, so waiting
		// could last forever. Give the jobs that hit it a moment to record their failure, then
		// end with E009 saying what becomes of each unfinished job.
		if h := a.Health(); h.DiskFull {
			if fullSince.IsZero() {
				fullSince = time.Now()
			} else if time.Since(fullSince) >= diskFullGrace {
				if tty {
					fmt.Fprintln(c.Stderr)
				}
				return jobs, diskFullWait(h, jobs)
			}
		} else {
			fullSince = time.Time{}
		}
		if offlineHeld(jobs) {
			if heldSince.IsZero() {
				heldSince = time.Now()
			}
		} else {
			heldSince = time.Time{}
		}
		limit, since := OfflineWait, heldSince
		if c.waitLimitSet {
			limit, since = c.waitLimit, start
		}
		if limit > 0 && !since.IsZero() && time.Since(since) >= limit {
			if tty {
				fmt.Fprintln(c.Stderr)
			}
			return jobs, gaveUp(jobs, limit)
		}
		select {
		case <-ctx.Done():
			// Ctrl-C while waiting: cancel what is still running, so nothing is left half done.
			for _, j := range jobs {
				if !j.Status.Final() {
					a.Cancel(context.Background(), j.ID)
				}
			}
			return jobs, job.Errorf(job.E013, "interrupted; the unfinished jobs were cancelled").WithJa("中断しました。未完了のジョブはキャンセルされました。")
		case <-events:
		case <-tick.C:
		}
	}
}

// diskFullGrace is how long a waiting command still waits once the disk is full, for the jobs
// that hit it to record their failure.
const diskFullGrace = 2 * time.Second

// diskFullWait is the error a waiting command ends with on a full disk: E009, what to free, and
// what becomes of each job that did not finish. A job left RUNNING cannot be recorded as stopped
// (nothing can be written): its lease lapses and the next JobDesk that runs with room on the disk
// returns it to the queue and runs it again; a PENDING job runs then too.
func diskFullWait(h app.Health, jobs []job.Job) *job.Error {
	var en, ja strings.Builder
	fmt.Fprintf(&en, "the disk is full: free some space on the disk of %s.", h.Folder)
	fmt.Fprintf(&ja, "ディスクがいっぱいです。%s のあるディスクの空き容量を増やしてください。", h.Folder)
	for _, j := range jobs {
		switch {
		case j.Status == job.Failed && j.Error != nil && j.Error.Code == job.E009:
			fmt.Fprintf(&en, " Job %s (%s) failed: once there is room, retry it (jobdesk retry %d).", j.Ref(), j.Name, j.ID)
			fmt.Fprintf(&ja, "ジョブ %s（%s）は失敗しました。空きができたら再実行してください（jobdesk retry %d）。", j.Ref(), j.Name, j.ID)
		case j.Status.Final():
			continue
		case j.Status == job.Pending:
			fmt.Fprintf(&en, " Job %s (%s) waits: it runs when JobDesk runs again with room on the disk.", j.Ref(), j.Name)
			fmt.Fprintf(&ja, "ジョブ %s（%s）は待機中です。空きができた状態で JobDesk を再び動かすと実行されます。", j.Ref(), j.Name)
		default:
			fmt.Fprintf(&en, " Job %s (%s) could not finish: it runs again when JobDesk runs again with room on the disk.", j.Ref(), j.Name)
			fmt.Fprintf(&ja, "ジョブ %s（%s）は完了できませんでした。空きができた状態で JobDesk を再び動かすと、もう一度実行されます。", j.Ref(), j.Name)
		}
	}
	var cause error
	if h.Error != nil {
		cause = h.Error.Err
	}
	return job.Wrap(job.E009, cause, en.String()).WithJa(ja.String()).WithName("DiskFullError").Permanent()
}

// offlineHeld reports whether every unfinished job is PENDING because its AI provider does not
// answer (the message the AI family leaves while it waits).
func offlineHeld(jobs []job.Job) bool {
	n := 0
	for _, j := range jobs {
		if j.Status.Final() {
			continue
		}
		if j.Status != job.Pending || !strings.Contains(j.Message, aijob.OfflineMessage) {
			return false
		}
		n++
	}
	return n > 0
}

// gaveUp is the error of a wait that ran past its limit: E011, naming the unfinished jobs and
// why they wait; they stay queued and run when JobDesk runs next (the window, `jobdesk worker`).
func gaveUp(jobs []job.Job, limit time.Duration) error {
	var names []string
	offline := false
	for _, j := range jobs {
		if j.Status.Final() {
			continue
		}
		why := string(j.Status)
		if j.Message != "" {
			why += ": " + j.Message
		}
		offline = offline || strings.Contains(j.Message, aijob.OfflineMessage)
		names = append(names, fmt.Sprintf("job %s %s (%s)", j.Ref(), j.Name, why))
	}
	en := fmt.Sprintf("gave up waiting after %s: %s. The jobs stay queued and run when JobDesk runs again (the window or jobdesk worker); wait longer with --timeout", limit, strings.Join(names, ", "))
	ja := fmt.Sprintf("%s 待ちましたが終わらなかったため、待つのをやめました: %s。ジョブは登録されたままで、次に JobDesk が動くとき（ウィンドウまたは jobdesk worker）に実行されます。もっと待つには --timeout を指定してください。", limit, strings.Join(names, "、"))
	if offline {
		en += "; the AI provider does not answer: check that it is running, or its address in Settings → AI"
		ja += "AI プロバイダーが応答しません。起動しているか、設定 → AI のアドレスを確認してください。"
	}
	return job.Errorf(job.E011, "%s", en).WithJa(ja)
}

// printedLines remembers the plain progress lines printed for each job, so that a job going
// back and forth (PENDING, then RUNNING, then PENDING again while its AI provider is offline)
// prints each line once instead of once a turn.
type printedLines map[int64]map[string]bool

func (c *CLI) drawProgress(jobs []job.Job, tty bool, printed printedLines) {
	if tty {
		var total float64
		for _, j := range jobs {
			total += j.Progress
		}
		pct := total / float64(len(jobs))
		const width = 30
		n := int(pct / 100 * width)
		j := jobs[0]
		for _, x := range jobs {
			if !x.Status.Final() {
				j = x
				break
			}
		}
		msg := app.OutcomeLine(j)
		if len([]rune(msg)) > 40 {
			msg = string([]rune(msg)[:40]) + "…"
		}
		fmt.Fprintf(c.Stderr, "\r\033[K[%s%s] %5.1f%% %s %s %s", strings.Repeat("█", n), strings.Repeat("·", width-n), pct, j.Name, j.Status, msg)
		return
	}
	// Without a terminal: one line when a job's status, quarter of progress or message changes
	// (the message says why a job waits, "AI provider offline" say), never the same line twice.
	for _, j := range jobs {
		if j.Status == job.Running && int(j.Progress)%25 != 0 {
			continue
		}
		line := fmt.Sprintf("job %s %s %s %.0f%%", j.Ref(), j.Name, j.Status, j.Progress)
		if msg := strings.TrimSpace(app.OutcomeLine(j)); msg != "" {
			line += " · " + msg
		}
		if printed[j.ID] == nil {
			printed[j.ID] = map[string]bool{}
		}
		if !printed[j.ID][line] {
			fmt.Fprintln(c.Stderr, line)
			printed[j.ID][line] = true
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

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

func (c *CLI) cmdRedrive(args []string) int {
	a, j, code := c.openJob(args)
	if a == nil {
		return code
	}
	return redriveJob(c, a, j)
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

func (c *CLI) cmdExport(args []string) int {
	fs := c.Flags("export")
	format := fs.String("format", "", "csv, xlsx or md (default: from the -o file's extension)")
	out := fs.String("o", "", "the file to write")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	ref, ok := c.JobArg(pos)
	if !ok {
		return ExitUsage
	}
	if *out == "" {
		return c.Usage("export: name the file to write with -o FILE", "export: 書き出すファイルを -o FILE で指定してください。")
	}
	if *format == "" {
		*format = strings.TrimPrefix(strings.ToLower(filepath.Ext(*out)), ".")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx := context.Background()
	j, err := FindJob(ctx, a, ref)
	if err != nil {
		return c.Fail(err)
	}
	if err := a.Export(ctx, j.ID, *format, *out); err != nil {
		return c.Fail(err)
	}
	fmt.Fprintf(c.Stdout, "job %s: wrote %s\n", j.Ref(), *out)
	return ExitOK
}

// addRunFlags declares every family's run flags on fs and returns a function that collects the
// values that were set.
func addRunFlags(fs *flag.FlagSet) func() map[string]string {
	type entry struct {
		name string
		s    *string
		b    *bool
	}
	var es []entry
	for _, rf := range app.RunFlags() {
		if rf.Bool {
			es = append(es, entry{name: rf.Name, b: fs.Bool(rf.Name, false, rf.Usage)})
		} else {
			es = append(es, entry{name: rf.Name, s: fs.String(rf.Name, "", rf.Usage)})
		}
	}
	return func() map[string]string {
		out := map[string]string{}
		for _, e := range es {
			switch {
			case e.b != nil && *e.b:
				out[e.name] = "true"
			case e.s != nil && *e.s != "":
				out[e.name] = *e.s
			}
		}
		return out
	}
}

// targetFlag declares --target: where the jobs run.
func targetFlag(fs *flag.FlagSet) *string {
	return fs.String("target", "device", "where the jobs run: device, cloud (the AWS backend of cloud.json) or auto (the cloud for large inputs when it is configured and reachable)")
}
