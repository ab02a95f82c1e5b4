package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"jobdesk/engine/flow"
	"jobdesk/engine/flow/sfnapi"
	"jobdesk/engine/job"
)

// The serve family adds `jobdesk serve`: the local AWS Step Functions–compatible API over the
// workflow engine, so the AWS CLI, the AWS SDKs and Step Functions tools can drive the state
// machines that run on this device. It has no job types of its own.
func init() {
	RegisterFamily(Family{Name: "serve", Commands: []Command{serveCommand}})
}

// DefaultServeAddr is where `jobdesk serve` listens without --listen.
const DefaultServeAddr = "127.0.0.1:8083"

var serveCommand = Command{
	Name:  "serve",
	Usage: "serve [--listen 127.0.0.1:8083] [--allow-remote] [--workers N]",
	Help:  "serve the Step Functions API (AWS JSON 1.0) on this device and run the engine until SIGINT/SIGTERM",
	Run:   (*CLI).cmdServe,
}

// serveSignals is the context that ends `jobdesk serve`: SIGINT or SIGTERM.
var serveSignals = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func (c *CLI) cmdServe(args []string) int {
	fs := c.Flags("serve")
	addr := fs.String("listen", DefaultServeAddr, "HOST:PORT to listen on (loopback unless --allow-remote)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback address: the API has no sign-in, so anyone who can reach the port can run workflows")
	workers := fs.Int("workers", 0, "jobs at once (default: number of CPUs)")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 0 {
		return c.Usage(fmt.Sprintf("serve: unexpected argument %q", pos[0]), fmt.Sprintf("serve: 想定外の引数です: %q", pos[0]))
	}
	// Listen before opening anything, so a refused or busy address fails at once.
	ln, err := sfnapi.Listen(*addr, *allowRemote)
	if err != nil {
		return c.Fail(err)
	}
	defer ln.Close()
	a, err := Open(Config{DataDir: c.dataDir, Workers: *workers})
	if err != nil {
		return c.Fail(err)
	}
	c.app = a
	eng := FlowEngine(a)
	if eng == nil {
		return c.Fail(job.Errorf(job.E016, "the workflow engine could not start").WithJa("ワークフローエンジンを起動できませんでした。"))
	}
	ctx, stop := serveSignals()
	defer stop()
	if err := a.StartEngine(ctx); err != nil {
		return c.Fail(err)
	}
	srv := sfnapi.New(eng, sfnapi.Options{
		// Definitions are checked as `jobdesk flow validate` does: a Task naming a function this
		// device does not have is refused when the state machine is created, not when it runs.
		Validate:    func(def []byte) []flow.Diagnostic { return flow.Validate(def, eng.CheckResourceStrict) },
		AllowRemote: *allowRemote,
		Logf:        func(format string, args ...any) { fmt.Fprintf(c.Stderr, format+"\n", args...) },
	})
	endpoint := "http://" + ln.Addr().String()
	fmt.Fprintln(c.Stdout, endpoint)
	fmt.Fprintf(c.Stderr, "jobdesk serve: Step Functions API on %s, running workflows in %s; Ctrl-C to stop\n", endpoint, a.DataDir())
	fmt.Fprintf(c.Stderr, "  try: AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local aws stepfunctions list-state-machines --endpoint-url %s --region local\n", endpoint)
	// The CLI sends StartSyncExecution to "sync-" + host unless told not to.
	fmt.Fprintln(c.Stderr, "  for start-sync-execution, also set AWS_DISABLE_HOST_PREFIX_INJECTION=true")
	if *allowRemote {
		fmt.Fprintln(c.Stderr, "jobdesk serve: warning: other machines can reach this API and it has no sign-in")
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return c.Fail(job.Wrap(job.E014, err, "the API server stopped").WithJa("API サーバーが停止しました。"))
	}
	fmt.Fprintln(c.Stderr, "jobdesk serve: stopping; running jobs return to the queue")
	return ExitOK
}
