package ui

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// This file keeps the window's footprint small over a working day. The runtime hands free heap
// memory back to the system slowly, keeping about a tenth over its next collection's goal; after
// a burst (a large import, scrolling through thousands of jobs) tens of megabytes stay with a
// window that then sits idle for hours. Every half minute, when more than freeSlack of the heap
// is free but still held, it is given back at once.

const (
	// releaseEvery is how often the window looks at its free heap.
	releaseEvery = 30 * time.Second
	// freeSlack is how much free heap the window keeps without giving it back.
	freeSlack = 16 << 20
)

// heapFreeHeld is the heap memory that is free but not yet returned to the system.
func heapFreeHeld() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// returnMemory gives free heap memory back to the system whenever more than freeSlack of it is
// held, until ctx ends. It reports how many times it did.
func returnMemory(ctx context.Context, every time.Duration, slack uint64) int {
	t := time.NewTicker(every)
	defer t.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
			if heapFreeHeld() > slack {
				debug.FreeOSMemory()
				n++
			}
		}
	}
}
