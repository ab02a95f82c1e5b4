package ui

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestReturnMemory: after a burst leaves free heap held, the window gives it back: the free
// memory held drops under the slack.
func TestReturnMemory(t *testing.T) {
	burst := make([][]byte, 0, 64)
	for range 64 {
		burst = append(burst, make([]byte, 1<<20))
	}
	runtime.KeepAlive(burst)
	burst = nil
	runtime.GC() // the burst is free now, and mostly still held
	if held := heapFreeHeld(); held < 32<<20 {
		t.Skipf("the runtime already gave the burst back (%d bytes held)", held)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if n := returnMemory(ctx, 100*time.Millisecond, 8<<20); n == 0 {
		t.Fatal("free memory was not given back")
	}
	if held := heapFreeHeld(); held > 8<<20 {
		t.Fatalf("%d bytes of free heap still held", held)
	}
}
