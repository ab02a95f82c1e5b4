//go:build unix

package cli

import (
	"syscall"
	"time"
)

// cpuTime is the processor time this process has used so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
