package app

import (
	"context"
	"flag"
	"os"
	"sort"

	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Family is one job family's part in the app: its schema, its handlers, the job types a person
// can ask for, how it recognises a dropped file, and its own subcommands. Each family declares
// itself in a file of its own (family_*.go) with RegisterFamily in an init function, so adding a
// family never means editing the app's core.
type Family struct {
	// Name names the family in messages and in App.State ("checksum", "csv", "convert", …).
	Name string
	// Migrations are the family's schema sets, applied when the database opens.
	Migrations []store.Migrations
	// Open builds the family's own state once the database is open (a processor, an engine);
	// keep it with a.SetState. It may be nil.
	Open func(a *App) error
	// Register adds the family's handlers to w; StartEngine calls it.
	Register func(a *App, w *queue.Worker)
	// Types are the job types a person may name with `run --type`.
	Types []string
	// Detect returns the job type for a file this family takes, or "". head holds the file's
	// first bytes (up to 8 KiB). Families are asked in Priority order, highest first.
	Detect func(path string, head []byte) string
	// Priority orders Detect calls (higher first); the checksum family, which takes anything,
	// has the lowest.
	Priority int
	// Submit, when set, submits one file of one of Types itself (for example as a workflow
	// execution). When nil, a plain job with input {"path": …} is enqueued.
	Submit func(ctx context.Context, a *App, path, typ string, o SubmitOptions) (job.Job, error)
	// RunFlags are extra `run` flags; their values reach Submit in SubmitOptions.Extra.
	RunFlags []RunFlag
	// Commands are the family's own subcommands of the jobdesk binary.
	Commands []Command
	// Export writes the result of finished job j (of one of Types) to out in format ("csv",
	// "xlsx", "md", …) for `jobdesk export`. It returns a *job.Error (E014) for a format the
	// family does not write.
	Export func(ctx context.Context, a *App, j job.Job, format, out string) error
	// ShowHistory prints more history of job j for `jobdesk show --history` (a workflow's
	// own events) and reports whether it had any.
	ShowHistory func(c *CLI, a *App, j job.Job) bool
	// Close releases the family's own state when the App closes, before the database does.
	Close func(a *App)
	// Retry, when set, runs finished job j (of one of Types) again for `jobdesk retry` and the
	// window's Retry, and returns the job that will run: the AI family starts a new job linked to
	// j (seed 000). When nil, the queue runs the same job again (App.Retry).
	Retry func(ctx context.Context, a *App, j job.Job) (job.Job, error)
}

// RunFlag is one extra flag of `jobdesk run`. Bool flags take no value ("true" when given).
type RunFlag struct {
	Name, Usage string
	Bool        bool
}

// Command is one subcommand of the jobdesk binary. Run receives the arguments after the
// command's name and returns the exit code; it opens the App through the CLI it is given.
type Command struct {
	Name, Usage, Help string
	Run               func(c *CLI, args []string) int
}

var families []Family

// RegisterFamily adds f to every App. Call it from an init function.
func RegisterFamily(f Family) {
	families = append(families, f)
	sort.SliceStable(families, func(i, j int) bool { return families[i].Priority > families[j].Priority })
}

// Families returns the registered families, highest detection priority first.
func Families() []Family { return families }

// SetState keeps a family's own state (its processor, engine, …) under name.
func (a *App) SetState(name string, v any) {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	if a.state == nil {
		a.state = map[string]any{}
	}
	a.state[name] = v
}

// State returns what SetState kept under name, or nil.
func (a *App) State(name string) any {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return a.state[name]
}

// familyOf returns the family that offers typ.
func familyOf(typ string) (Family, bool) {
	for _, f := range families {
		for _, t := range f.Types {
			if t == typ {
				return f, true
			}
		}
	}
	return Family{}, false
}

// readHead returns up to 8 KiB from the start of path.
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 8<<10)
	n, _ := f.Read(buf)
	return buf[:n]
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
	seen := map[string]bool{}
	for _, f := range families {
		for _, rf := range f.RunFlags {
			if seen[rf.Name] {
				continue
			}
			seen[rf.Name] = true
			if rf.Bool {
				es = append(es, entry{name: rf.Name, b: fs.Bool(rf.Name, false, rf.Usage)})
			} else {
				es = append(es, entry{name: rf.Name, s: fs.String(rf.Name, "", rf.Usage)})
			}
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
