//go:build unix

package docjob

import (
	"syscall"
	"time"
)

// processCPU is the user plus system CPU time this process has used: benchmarks report it beside
// wall time, which on a shared machine says more about the neighbours than about the code.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
