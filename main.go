// Command jobdesk is JobDesk: with no command it opens the desktop window (and runs the engine
// inside it); with a command (run, ls, show, cancel, retry, worker, …) it is the command line.
// The data folder comes from --data-dir, else JOBDESK_DATA_DIR, else the user's data folder.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"jobdesk/app"
	"jobdesk/app/cli"
	_ "jobdesk/app/syslocale" // before the toolkit reads the locale
	"jobdesk/engine/job"
	"jobdesk/ui"
)

func main() {
	useParentConsole(os.Args[1:])
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	dataDir, rest, err := cli.SplitGlobal(args)
	if err != nil || len(rest) > 0 {
		return cli.Main(args, os.Stdout, os.Stderr)
	}
	if !ui.CanOpenDisplay() {
		fmt.Fprint(os.Stderr, ui.NoDisplayMessage)
		return ui.ExitNoDisplay
	}
	windowMemory()
	cfg := app.Config{DataDir: dataDir}
	if s, err := app.LoadSettings(dataDirOrDefault(dataDir)); err == nil {
		cfg.Workers = s.Engine.Workers // the engine page of the settings (0: one per CPU)
	}
	a, err := app.Open(cfg)
	if err != nil {
		e := job.AsError(err)
		fmt.Fprintf(os.Stderr, "jobdesk: %s: %s\n         %s\n", e.Code, e.Message, e.MessageJa)
		return cli.ExitFailed
	}
	defer a.Close()
	fa := fyneapp.NewWithID(ui.AppID)
	// Ctrl-C or a logout closes the window the normal way: running jobs return to the queue.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		fyne.Do(fa.Quit)
	}()
	if err := ui.Run(a, fa); err != nil {
		e := job.AsError(err)
		fmt.Fprintf(os.Stderr, "jobdesk: %s: %s\n         %s\n", e.Code, e.Message, e.MessageJa)
		return cli.ExitFailed
	}
	return cli.ExitOK
}

// windowMemory sets the garbage collector of the window's process, which lives for a whole
// working day: the heap may grow to 1.5× what is live instead of 2×. Most of what is live is the
// toolkit's copy of the system's Japanese typefaces (about 17 MB a weight), so the default
// doubling keeps tens of megabytes nobody uses; the cost is more frequent collections during a
// large import, a few percent of one core. GOGC in the environment still decides when set.
func windowMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}

// dataDirOrDefault is the data folder the App will use.
func dataDirOrDefault(dir string) string {
	if dir != "" {
		return dir
	}
	d, _ := app.DefaultDataDir() // JOBDESK_DATA_DIR, else the user's data folder

	return d
}
