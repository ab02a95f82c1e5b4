// Package cli is JobDesk's command line: the core commands (run, ls, show, cancel, retry,
// redrive, worker, export) and the families' own (csv, convert, generate, caption,
// extract-eligibility, goals, flow, serve, cloud, doctor), each over the app's service API or a
// family package's typed API, never the database or the queue.
//
// cli.go is the framework: the command table, global and common flags, argument parsing, error
// printing and exit codes. Each command has a file of its own named after it (run.go, ls.go,
// show.go, cancel.go, retry.go, redrive.go, worker.go, export.go, csv.go, convert.go, flow.go,
// serve.go, cloud.go, doctor.go; the AI family's generate, caption, extract-eligibility and goals
// share ai.go); jobs.go names and prints jobs, wait.go follows them to the end and progress.go
// draws their progress.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"jobdesk/app"
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
