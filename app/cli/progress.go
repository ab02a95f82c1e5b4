package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// printedLines remembers the plain progress lines printed for each job, so that a job going
// back and forth (PENDING, then RUNNING, then PENDING again while its AI provider is offline)
// prints each line once instead of once a turn.
type printedLines map[int64]map[string]bool

// drawProgress draws the progress of jobs on Stderr: on a terminal one bar redrawn in place,
// else one line per change (printed remembers what was printed).
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
