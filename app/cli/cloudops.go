package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"jobdesk/app"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
)

// `jobdesk cloud …`: whether the cloud is reachable (cloud status, cloud.go) and the operations
// console of the deployed cloud backend (sync/cloudops) on the command line.
var cloudCommand = Command{
	Name: "cloud",
	Usage: "cloud status [--json] | cloud send JOB_TYPE --body JSON|@file | cloud queues [--json] | cloud dlq JOB_TYPE [--max N] [--json] | " +
		"cloud redrive JOB_TYPE [--yes] | cloud purge JOB_TYPE [--dlq] [--yes] | " +
		"cloud executions [--state-machine NAME] [--status S] [--json] | cloud executions redrive ARN|NAME | " +
		"cloud config --from-stack-outputs FILE",
	Help: "show whether the AWS backend is configured and reachable; operate it: send a job message, watch queues and dead-letter queues, redrive or purge them, " +
		"list and redrive executions, write cloud.json from the stack's outputs " +
		"(every command: --region R --profile P --config cloud.json)",
	Run: (*CLI).cmdCloud,
}

// cloudInput is where confirmations are read from, and whether a person can answer there: a
// terminal (the null device is a character device too, but nobody answers on it).
var cloudInput = func() (io.Reader, bool) {
	in, _ := os.Stdin.Stat()
	null, _ := os.Stat(os.DevNull)
	return os.Stdin, isTerminal(os.Stdin) && !(in != nil && null != nil && os.SameFile(in, null))
}

// cloudFlags are the options every cloud command takes.
type cloudFlags struct {
	region, profile, config, queueURL *string
	asJSON                            *bool
}

func (c *CLI) cloudFlagSet(name string) (*flag.FlagSet, cloudFlags) {
	fs := c.Flags("cloud " + name)
	return fs, cloudFlags{
		region:  fs.String("region", "", "AWS region (default: cloud.json's, else the SDK's)"),
		profile: fs.String("profile", "", "AWS profile (default: cloud.json's, else the SDK's)"),
		config:  fs.String("config", "", "cloud.json to read (default: the data folder's)"),
		queueURL: fs.String("queue-url", "", "the job type's queue (default: cloud.json's); its dead-letter queue is "+
			"found through its redrive policy"),
		asJSON: fs.Bool("json", false, "print JSON"),
	}
}

func (c *CLI) cmdCloud(args []string) int {
	if len(args) == 0 {
		return c.Usage("cloud needs a command: status, send, queues, dlq, redrive, purge, executions or config",
			"cloud の後にコマンド（status, send, queues, dlq, redrive, purge, executions, config）を指定してください。")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sub, args := args[0], args[1:]
	switch sub {
	case "status":
		return c.cloudStatus(args)
	case "send":
		return c.cloudSend(ctx, args)
	case "queues":
		return c.cloudQueues(ctx, args)
	case "dlq":
		return c.cloudDLQ(ctx, args)
	case "redrive":
		return c.cloudRedrive(ctx, args)
	case "purge":
		return c.cloudPurge(ctx, args)
	case "executions":
		if len(args) > 0 && args[0] == "redrive" {
			return c.cloudRedriveExecution(ctx, args[1:])
		}
		return c.cloudExecutions(ctx, args)
	case "config":
		return c.cloudConfig(args)
	}
	return c.Usage(fmt.Sprintf("unknown cloud command %q", sub), fmt.Sprintf("cloud のコマンド %q はありません。", sub))
}

// cloudDataDir is the data folder cloud.json lives in.
func (c *CLI) cloudDataDir() (string, error) {
	if c.dataDir != "" {
		return c.dataDir, nil
	}
	return app.DefaultDataDir()
}

// console opens the operations console of cloud.json (the data folder's or --config, then the
// environment, then --region and --profile; app.OpenCloudConsole), with --queue-url as jobType's
// queue; on failure it has printed the error.
func (c *CLI) console(ctx context.Context, f cloudFlags, jobType string) (*app.CloudConsole, int) {
	return c.consoleFor(ctx, f, jobType, "")
}

// consoleFor is console with userID as the user_id of messages whose body has none.
func (c *CLI) consoleFor(ctx context.Context, f cloudFlags, jobType, userID string) (*app.CloudConsole, int) {
	o := app.CloudConsoleOptions{ConfigPath: *f.config, Region: *f.region, Profile: *f.profile, UserID: userID, JobType: jobType, QueueURL: *f.queueURL}
	if o.ConfigPath == "" {
		dir, err := c.cloudDataDir()
		if err != nil {
			return nil, c.Fail(err)
		}
		o.DataDir = dir
	}
	con, err := app.OpenCloudConsole(ctx, o)
	if err != nil {
		return nil, c.Fail(err)
	}
	return con, ExitOK
}

// jobTypeArg reads a JOB_TYPE argument: ATTACHMENT_CONVERT, also written attachment-convert.
func jobTypeArg(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

func (c *CLI) printJSON(v any) int {
	enc := json.NewEncoder(c.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return c.Fail(err)
	}
	return ExitOK
}

func (c *CLI) cloudSend(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("send")
	body := fs.String("body", "", "the message: JSON, or @FILE")
	user := fs.String("user-id", "", "user_id when the body has none")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 || *body == "" {
		return c.Usage("usage: jobdesk cloud send JOB_TYPE --body JSON|@file (job types: "+strings.Join(app.CloudJobTypes(), ", ")+")",
			"使い方: jobdesk cloud send JOB_TYPE --body JSON|@ファイル（ジョブ種別: "+strings.Join(app.CloudJobTypes(), ", ")+"）")
	}
	msg := []byte(*body)
	if name, ok := strings.CutPrefix(*body, "@"); ok {
		if msg, err = os.ReadFile(name); err != nil {
			return c.Fail(job.Wrap(job.E014, err, fmt.Sprintf("the message file %s cannot be read", name)).
				WithJa(fmt.Sprintf("メッセージのファイル %s を読めません。", name)))
		}
	}
	jt := jobTypeArg(pos[0])
	con, code := c.consoleFor(ctx, f, jt, *user)
	if con == nil {
		return code
	}
	// The message is checked before any AWS call, so a wrong one fails without AWS.
	sent, err := con.SendMessage(ctx, jt, string(msg))
	if err != nil {
		return c.Fail(err)
	}
	if *f.asJSON {
		return c.printJSON(sent)
	}
	fmt.Fprintf(c.Stdout, "Sent %s job %s (message %s) to %s\n", sent.JobType, sent.JobID, sent.MessageID, sent.QueueURL)
	return ExitOK
}

func (c *CLI) cloudQueues(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("queues")
	if pos, err := Parse(fs, args); err != nil || len(pos) > 0 {
		return c.Usage("usage: jobdesk cloud queues [--json]", "使い方: jobdesk cloud queues [--json]")
	}
	con, code := c.console(ctx, f, "")
	if con == nil {
		return code
	}
	qs, err := con.Queues(ctx)
	if err != nil {
		return c.Fail(err)
	}
	if *f.asJSON {
		return c.printJSON(qs)
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB TYPE\tVISIBLE\tIN FLIGHT\tDELAYED\tDLQ\tDLQ OLDEST")
	for _, q := range qs {
		dlq, oldest := "-", "-"
		if q.DeadLetter != nil {
			dlq = fmt.Sprint(q.DeadLetter.Visible + q.DeadLetter.InFlight)
			if q.DeadLetter.OldestAge != nil {
				oldest = time.Duration(*q.DeadLetter.OldestAge).Round(time.Second).String()
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", q.JobType, q.Queue.Visible, q.Queue.InFlight, q.Queue.Delayed, dlq, oldest)
	}
	tw.Flush()
	return ExitOK
}

func (c *CLI) cloudDLQ(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("dlq")
	max := fs.Int("max", 10, "messages to list at most")
	pos, err := Parse(fs, args)
	if err != nil || len(pos) != 1 {
		return c.Usage("usage: jobdesk cloud dlq JOB_TYPE [--max N] [--json]", "使い方: jobdesk cloud dlq JOB_TYPE [--max N] [--json]")
	}
	con, code := c.console(ctx, f, jobTypeArg(pos[0]))
	if con == nil {
		return code
	}
	dls, err := con.DeadLetters(ctx, jobTypeArg(pos[0]), *max)
	if err != nil {
		return c.Fail(err)
	}
	if *f.asJSON {
		if dls == nil {
			dls = []app.CloudDeadLetter{}
		}
		return c.printJSON(dls)
	}
	if len(dls) == 0 {
		fmt.Fprintln(c.Stdout, "The dead-letter queue is empty.")
		return ExitOK
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB ID\tSENT\tRECEIVES\tERROR")
	for _, d := range dls {
		e := d.Error
		if e == "" {
			e = "(not recorded in the message: see the job's FAILED reply on the status queue)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", d.JobID, d.SentAt.Local().Format("2006-01-02 15:04:05"), d.ReceiveCount, e)
	}
	tw.Flush()
	return ExitOK
}

// confirm asks before a change that cannot be undone; --yes answers for the user. Without a
// terminal to ask on, it refuses.
func (c *CLI) confirm(yes bool, en, ja string) (bool, int) {
	if yes {
		return true, ExitOK
	}
	in, tty := cloudInput()
	if !tty {
		return false, c.Usage("refusing without confirmation: "+en+" (run with --yes to confirm)",
			"確認できないため中止しました: "+ja+"（--yes を付けると確認なしで実行します）")
	}
	fmt.Fprintf(c.Stderr, "%s\n%s\nType yes to continue / 続けるには yes と入力: ", en, ja)
	line, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a == "yes" || a == "y" {
		return true, ExitOK
	}
	fmt.Fprintln(c.Stderr, "Nothing was changed. / 何も変更していません。")
	return false, ExitFailed
}

func (c *CLI) cloudRedrive(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("redrive")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	pos, err := Parse(fs, args)
	if err != nil || len(pos) != 1 {
		return c.Usage("usage: jobdesk cloud redrive JOB_TYPE [--yes]", "使い方: jobdesk cloud redrive JOB_TYPE [--yes]")
	}
	con, code := c.console(ctx, f, jobTypeArg(pos[0]))
	if con == nil {
		return code
	}
	jt := jobTypeArg(pos[0])
	n, err := con.RedriveCount(ctx, jt)
	if err != nil {
		return c.Fail(err)
	}
	if ok, code := c.confirm(*yes, fmt.Sprintf("Move the %d messages of %s's dead-letter queue back to its queue?", n, jt),
		fmt.Sprintf("%s のデッドレターキューの %d 件をキューに戻しますか？", jt, n)); !ok {
		return code
	}
	r, err := con.Redrive(ctx, jt)
	if err != nil {
		return c.Fail(err)
	}
	if *f.asJSON {
		return c.printJSON(r)
	}
	if r.Method == "move-task" {
		fmt.Fprintf(c.Stdout, "Started moving %d messages from %s to %s (task %s)\n", r.ToMove, r.Source, r.Destination, r.TaskHandle)
	} else {
		fmt.Fprintf(c.Stdout, "Moved %d messages from %s to %s\n", r.Moved, r.Source, r.Destination)
	}
	return ExitOK
}

func (c *CLI) cloudPurge(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("purge")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	dlq := fs.Bool("dlq", false, "purge the dead-letter queue instead of the queue")
	pos, err := Parse(fs, args)
	if err != nil || len(pos) != 1 {
		return c.Usage("usage: jobdesk cloud purge JOB_TYPE [--dlq] [--yes]", "使い方: jobdesk cloud purge JOB_TYPE [--dlq] [--yes]")
	}
	con, code := c.console(ctx, f, jobTypeArg(pos[0]))
	if con == nil {
		return code
	}
	jt := jobTypeArg(pos[0])
	which, whichJa := "queue", "キュー"
	if *dlq {
		which, whichJa = "dead-letter queue", "デッドレターキュー"
	}
	if ok, code := c.confirm(*yes, fmt.Sprintf("Delete every message of %s's %s? This cannot be undone.", jt, which),
		fmt.Sprintf("%s の%sのメッセージをすべて削除しますか？元に戻せません。", jt, whichJa)); !ok {
		return code
	}
	url, err := con.Purge(ctx, jt, *dlq)
	if err != nil {
		return c.Fail(err)
	}
	fmt.Fprintf(c.Stdout, "Purging %s (SQS takes up to 60 seconds)\n", url)
	return ExitOK
}

func (c *CLI) cloudExecutions(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("executions")
	machine := fs.String("state-machine", "", "a workflow name of cloud.json or a state machine ARN (default: all)")
	status := fs.String("status", "", "only this status: "+strings.Join(app.CloudExecutionStatuses, ", "))
	max := fs.Int("max", 100, "executions per state machine at most")
	if pos, err := Parse(fs, args); err != nil || len(pos) > 0 {
		return c.Usage("usage: jobdesk cloud executions [--state-machine NAME] [--status S] [--json]",
			"使い方: jobdesk cloud executions [--state-machine NAME] [--status S] [--json]")
	}
	con, code := c.console(ctx, f, "")
	if con == nil {
		return code
	}
	es, err := con.Executions(ctx, app.CloudExecutionFilter{StateMachine: *machine, Status: *status, Max: *max})
	if err != nil {
		return c.Fail(err)
	}
	if *f.asJSON {
		if es == nil {
			es = []app.CloudExecution{}
		}
		return c.printJSON(es)
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tNAME\tSTATUS\tSTARTED\tSTOPPED\tREDRIVES")
	for _, e := range es {
		stopped := "-"
		if !e.StopDate.IsZero() {
			stopped = e.StopDate.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", e.Workflow, e.Name, e.Status, e.StartDate.Local().Format("2006-01-02 15:04:05"), stopped, e.RedriveCount)
	}
	tw.Flush()
	return ExitOK
}

func (c *CLI) cloudRedriveExecution(ctx context.Context, args []string) int {
	fs, f := c.cloudFlagSet("executions redrive")
	machine := fs.String("state-machine", "", "look the name up in this state machine only")
	pos, err := Parse(fs, args)
	if err != nil || len(pos) != 1 {
		return c.Usage("usage: jobdesk cloud executions redrive ARN|NAME [--state-machine NAME]",
			"使い方: jobdesk cloud executions redrive ARN|NAME [--state-machine NAME]")
	}
	con, code := c.console(ctx, f, "")
	if con == nil {
		return code
	}
	r, err := con.RedriveExecution(ctx, pos[0], *machine)
	if err != nil {
		return c.Fail(err)
	}
	if *f.asJSON {
		return c.printJSON(r)
	}
	fmt.Fprintf(c.Stdout, "Redriven %s at %s\n", r.ARN, r.RedriveDate.Local().Format("2006-01-02 15:04:05"))
	return ExitOK
}

func (c *CLI) cloudConfig(args []string) int {
	fs, f := c.cloudFlagSet("config")
	from := fs.String("from-stack-outputs", "", "the JSON of `aws cloudformation describe-stacks --stack-name NAME` (- for stdin)")
	if pos, err := Parse(fs, args); err != nil || len(pos) > 0 || *from == "" {
		return c.Usage("usage: jobdesk cloud config --from-stack-outputs FILE", "使い方: jobdesk cloud config --from-stack-outputs FILE")
	}
	if *f.config != "" {
		return c.Usage("cloud config writes the data folder's cloud.json; choose the folder with --data-dir",
			"cloud config はデータフォルダーの cloud.json に書き込みます。フォルダーは --data-dir で指定してください。")
	}
	var in io.Reader = os.Stdin
	if *from != "-" {
		file, err := os.Open(*from)
		if err != nil {
			return c.Fail(job.Wrap(job.E014, err, fmt.Sprintf("%s cannot be read", *from)).WithJa(fmt.Sprintf("%s を読めません。", *from)))
		}
		defer file.Close()
		in = file
	}
	cfg, err := cloudconfig.ConfigFromStackOutputs(in)
	if err != nil {
		return c.Fail(err)
	}
	dir, err := c.cloudDataDir()
	if err != nil {
		return c.Fail(err)
	}
	// What the stack does not say stays as cloud.json had it: the device's own settings.
	old, err := cloudconfig.Load(dir, func(string) string { return "" }, nil)
	if err != nil {
		return c.Fail(err)
	}
	cfg.UserID, cfg.Auto, cfg.S3PathStyle = old.UserID, old.Auto, old.S3PathStyle
	cfg.Profile = *f.profile
	if *f.region != "" {
		cfg.Region = *f.region
	}
	if err := cloudconfig.Save(dir, cfg); err != nil {
		return c.Fail(job.Wrap(job.E014, err, "cloud.json cannot be written: "+err.Error()).WithJa("cloud.json を書き込めません。"))
	}
	if *f.asJSON {
		return c.printJSON(cfg)
	}
	fmt.Fprintf(c.Stdout, "Wrote %s: region %s, bucket %s, %d state machines, %d queues\n",
		cloudconfig.Path(dir), cfg.Region, cfg.Bucket, len(cfg.StateMachines), len(cfg.Queues))
	return ExitOK
}
