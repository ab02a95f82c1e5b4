package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"jobdesk/app"
	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob"
	"jobdesk/engine/job"
)

// The AI family's subcommands.
var (
	generateCommand = Command{"generate", "generate subgoals|actions|tasks (--goal ID | --title T [--description D] [--deadline YYYY-MM-DD]) [--target device|cloud|auto] [--wait] [--json] | generate retry JOB",
		"generate a goal's 8 sub-goals, their 8 actions each, or the actions' tasks with the AI model", (*CLI).cmdGenerate}
	captionCommand     = Command{"caption", "caption IMAGE [--target device|cloud|auto] [--wait] [--json]", "describe a PNG or JPEG image in Japanese with a vision-capable model", (*CLI).cmdCaption}
	eligibilityCommand = Command{"extract-eligibility", "extract-eligibility JOB|FILE [--target device|cloud|auto] [--wait] [--json]", "extract the eligibility JSON from a converted document (a conversion job's number or a Markdown file)", (*CLI).cmdExtractEligibility}
	goalsCommand       = Command{"goals", "goals show ID [--json] | goals ls [--json]", "show a goal's 9×9 chart (sub-goals, actions) and its tasks", (*CLI).cmdGoals}
)

// aiFlags declares --ai-endpoint and --ai-model on fs; apply puts the values into the
// environment before the App opens, so they override the settings file and the environment.
func aiFlags(fs *flag.FlagSet) (apply func()) {
	endpoint := fs.String("ai-endpoint", "", "OpenAI-compatible server URL, e.g. http://127.0.0.1:11434/v1 (default: settings, $"+aifamily.EnvEndpoint+")")
	model := fs.String("ai-model", "", "model name (default: settings, $"+aifamily.EnvModel+")")
	provider := fs.String("ai-provider", "", "openai, bedrock or auto (default: settings, $"+aifamily.EnvProvider+")")
	return func() {
		for k, v := range map[string]string{aifamily.EnvEndpoint: *endpoint, aifamily.EnvModel: *model, aifamily.EnvProvider: *provider} {
			if v != "" {
				os.Setenv(k, v)
			}
		}
	}
}

// submitAndMaybeWait prints the job (after waiting for it with --wait) and returns the exit code.
func (c *CLI) submitAndMaybeWait(a *app.App, submit func(ctx context.Context) (job.Job, error), wait, asJSON bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	j, err := submit(ctx)
	if err != nil {
		return c.Fail(err)
	}
	jobs := []job.Job{j}
	if wait {
		if jobs, err = c.RunAndWait(ctx, a, jobs); err != nil {
			return c.Fail(err)
		}
	}
	c.PrintJobs(jobs, asJSON)
	if !wait {
		return ExitOK
	}
	return ExitCode(jobs)
}

func (c *CLI) cmdGenerate(args []string) int {
	if len(args) == 0 {
		return c.Usage("generate: name subgoals, actions, tasks or retry", "generate: subgoals・actions・tasks・retry のいずれかを指定してください。")
	}
	what := args[0]
	types := map[string]string{"subgoals": aijob.TypeSubgoals, "actions": aijob.TypeActions, "tasks": aijob.TypeTasks}
	fs := c.Flags("generate " + what)
	goal := fs.Int64("goal", 0, "the goal's id")
	title := fs.String("title", "", "a new goal's title")
	desc := fs.String("description", "", "a new goal's description")
	deadline := fs.String("deadline", "", "a new goal's deadline (YYYY-MM-DD)")
	regenerate := fs.Bool("regenerate", false, "generate again what the goal already has")
	target := fs.String("target", "device", "where the generation runs: device, cloud or auto")
	wait := fs.Bool("wait", false, "wait for the job, showing progress on stderr")
	asJSON := fs.Bool("json", false, "print the job as JSON")
	apply := aiFlags(fs)
	pos, err := Parse(fs, args[1:])
	if err != nil {
		return ExitUsage
	}
	apply()
	if what == "retry" {
		a, old, code := c.openJob(pos)
		if a == nil {
			return code
		}
		ai, ok := c.ai(a)
		if !ok {
			return ExitFailed
		}
		return c.submitAndMaybeWait(a, func(ctx context.Context) (job.Job, error) { return ai.RetryGeneration(ctx, old.ID) }, *wait, *asJSON)
	}
	typ, ok := types[what]
	if !ok || len(pos) > 0 {
		return c.Usage(fmt.Sprintf("generate: %q is not subgoals, actions, tasks or retry", what),
			fmt.Sprintf("generate: %q は subgoals・actions・tasks・retry のいずれでもありません。", what))
	}
	if (*goal == 0) == (*title == "") {
		return c.Usage("generate: give either --goal ID or --title T", "generate: --goal ID か --title T のどちらかを指定してください。")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ai, ok := c.ai(a)
	if !ok {
		return ExitFailed
	}
	in := aijob.GoalInput{GoalID: *goal, Title: *title, Description: *desc, Deadline: *deadline, Regenerate: *regenerate}
	return c.submitAndMaybeWait(a, func(ctx context.Context) (job.Job, error) {
		where, err := app.JobTarget(ctx, a.DataDir(), *target, typ, "")
		if err != nil {
			return job.Job{}, err
		}
		return ai.SubmitGenerationOn(ctx, where, typ, in)
	}, *wait, *asJSON)
}

func (c *CLI) cmdCaption(args []string) int {
	return c.oneInputAIJob("caption", "name one image", args, func(ctx context.Context, a *app.App, arg, target string) (job.Job, error) {
		jobs, err := a.Submit(ctx, []string{arg}, app.SubmitOptions{Type: aijob.TypeCaption, Target: target})
		if err != nil {
			return job.Job{}, err
		}
		return jobs[0], nil
	})
}

func (c *CLI) cmdExtractEligibility(args []string) int {
	return c.oneInputAIJob("extract-eligibility", "name one conversion job (its number) or Markdown file", args,
		func(ctx context.Context, a *app.App, arg, target string) (job.Job, error) {
			ai, ok := app.FamilyOf[*aifamily.Family](a)
			if !ok {
				return job.Job{}, errNoAI
			}
			where, err := app.JobTarget(ctx, a.DataDir(), target, aijob.TypeEligibility, "")
			if err != nil {
				return job.Job{}, err
			}
			return ai.SubmitEligibilityOn(ctx, where, arg)
		})
}

// oneInputAIJob is an AI subcommand that takes exactly one input (an image, a file or a job id)
// and the AI, --target, --wait and --json flags; submit makes its job on target (device, cloud
// or auto, as given).
func (c *CLI) oneInputAIJob(name, usage string, args []string, submit func(ctx context.Context, a *app.App, arg, target string) (job.Job, error)) int {
	fs := c.Flags(name)
	target := fs.String("target", "device", "where the job runs: device, cloud or auto")
	wait := fs.Bool("wait", false, "wait for the job, showing progress on stderr")
	asJSON := fs.Bool("json", false, "print the job as JSON")
	apply := aiFlags(fs)
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return c.Usage(name+": "+usage, name+": 使い方: "+usage)
	}
	apply()
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	return c.submitAndMaybeWait(a, func(ctx context.Context) (job.Job, error) { return submit(ctx, a, pos[0], *target) }, *wait, *asJSON)
}

func (c *CLI) cmdGoals(args []string) int {
	if len(args) == 0 || (args[0] != "show" && args[0] != "ls") {
		return c.Usage("goals: use goals show ID or goals ls", "goals: goals show ID か goals ls を使ってください。")
	}
	fs := c.Flags("goals " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	cell := fs.Int("width", 14, "chart cell width in columns")
	pos, err := Parse(fs, args[1:])
	if err != nil {
		return ExitUsage
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ai, ok := c.ai(a)
	if !ok {
		return ExitFailed
	}
	svc := ai.Service()
	ctx := context.Background()
	if args[0] == "ls" {
		goals, err := svc.ListGoals(ctx)
		if err != nil {
			return c.Fail(err)
		}
		if *asJSON {
			enc := json.NewEncoder(c.Stdout)
			enc.SetEscapeHTML(false)
			for _, g := range goals {
				enc.Encode(g)
			}
			return ExitOK
		}
		for _, g := range goals {
			fmt.Fprintf(c.Stdout, "%d\t%s\t%s\t%s\n", g.ID, g.Status, g.Deadline, g.Title)
		}
		return ExitOK
	}
	id, ok := c.goalID(pos)
	if !ok {
		return ExitUsage
	}
	g, err := svc.LoadGoal(ctx, id)
	if err != nil {
		return c.Fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(g)
		return ExitOK
	}
	g.WriteChart(c.Stdout, *cell)
	return ExitOK
}

// goalID parses the single goal id in args (as goals ls prints it), printing a usage error
// when there is none.
func (c *CLI) goalID(args []string) (int64, bool) {
	if len(args) != 1 {
		c.Usage("name one goal id", "目標の ID を 1 つ指定してください。")
		return 0, false
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id <= 0 {
		c.Usage(fmt.Sprintf("%q is not a goal id (a number such as 3, as goals ls prints it)", args[0]),
			fmt.Sprintf("%q は目標の ID ではありません（goals ls が表示する 3 のような数字です）。", args[0]))
		return 0, false
	}
	return id, true
}

// errNoAI refuses an AI command in a build without the AI family.
var errNoAI = job.Errorf(job.E014, "AI generation is not available").WithJa("AI 生成を利用できません。")

// ai returns a's AI family; without one it has printed why.
func (c *CLI) ai(a *app.App) (*aifamily.Family, bool) {
	f, ok := app.FamilyOf[*aifamily.Family](a)
	if !ok {
		c.Fail(errNoAI)
	}
	return f, ok
}
