package aijob

import (
	"fmt"
	"io"
	"strings"

	"jobdesk/engine/textwidth"
)

// blockCell maps positions 1–8 around a 3×3 block (row, column), clockwise from the top left;
// the centre (1, 1) holds the block's theme.
var blockCell = [9][2]int{{1, 1}, {0, 0}, {0, 1}, {0, 2}, {1, 2}, {2, 2}, {2, 1}, {2, 0}, {1, 0}}

// Chart lays the goal out as the 9×9 mandala chart: the goal in the centre of the centre block,
// its eight sub-goals around it; each sub-goal again in the centre of the outer block at its
// position, with its eight actions around it. Empty cells are "".
func (g Goal) Chart() [9][9]string {
	var c [9][9]string
	put := func(block, pos int, text string) {
		b, p := blockCell[block], blockCell[pos]
		c[b[0]*3+p[0]][b[1]*3+p[1]] = text
	}
	put(0, 0, g.Title)
	for _, sg := range g.Subgoals {
		if sg.Position < 1 || sg.Position > 8 {
			continue
		}
		put(0, sg.Position, sg.Title)
		put(sg.Position, 0, sg.Title)
		for _, a := range sg.Actions {
			if a.Position >= 1 && a.Position <= 8 {
				put(sg.Position, a.Position, a.Title)
			}
		}
	}
	return c
}

// fit cuts s to at most w columns and pads it to exactly w.
func fit(s string, w int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		rw := textwidth.Of(string(r))
		if n+rw > w {
			break
		}
		b.WriteRune(r)
		n += rw
	}
	return b.String() + strings.Repeat(" ", w-n)
}

// WriteChart prints the 9×9 chart with cells cellWidth columns wide, blocks separated by
// double lines, followed by the task count of each action.
func (g Goal) WriteChart(w io.Writer, cellWidth int) {
	if cellWidth < 4 {
		cellWidth = 14
	}
	c := g.Chart()
	fmt.Fprintf(w, "Goal %d: %s [%s]\n", g.ID, g.Title, g.Status)
	if g.Deadline != "" {
		fmt.Fprintf(w, "Deadline: %s\n", g.Deadline)
	}
	line := func(ch string) {
		for j := 0; j < 9; j++ {
			sep := "+"
			if j%3 == 0 {
				sep = "#"
			}
			fmt.Fprint(w, sep+strings.Repeat(ch, cellWidth+2))
		}
		fmt.Fprintln(w, "#")
	}
	for i := 0; i < 9; i++ {
		if i%3 == 0 {
			line("=")
		} else {
			line("-")
		}
		for j := 0; j < 9; j++ {
			sep := "|"
			if j%3 == 0 {
				sep = "‖"
			}
			fmt.Fprint(w, sep+" "+fit(c[i][j], cellWidth)+" ")
		}
		fmt.Fprintln(w, "‖")
	}
	line("=")
	tasks := 0
	for _, a := range g.Actions() {
		tasks += len(a.Tasks)
	}
	fmt.Fprintf(w, "%d sub-goals, %d actions, %d tasks\n", len(g.Subgoals), len(g.Actions()), tasks)
	for _, sg := range g.Subgoals {
		for _, a := range sg.Actions {
			if len(a.Tasks) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%d-%d %s (%s)\n", sg.Position, a.Position, a.Title, a.Type)
			for _, t := range a.Tasks {
				fmt.Fprintf(w, "    - %s (%d min, %s)\n", t.Title, t.EstimatedMinutes, t.Type)
			}
		}
	}
}
