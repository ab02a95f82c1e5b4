//go:build !unix

package cli

import "time"

// cpuTime is zero where the processor time is not read (benchmarks then report 0 cpu-ms/op).
func cpuTime() time.Duration { return 0 }
