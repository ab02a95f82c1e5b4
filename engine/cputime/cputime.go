// Package cputime reads the CPU time this process has used. Benchmarks report it beside wall
// time, which on a shared machine says more about the neighbours than about the code.
package cputime

import "time"

// Process returns the user plus system CPU time of this process (0 where it cannot be read).
func Process() time.Duration { return process() }
