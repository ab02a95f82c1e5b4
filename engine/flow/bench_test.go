package flow

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jobdesk/engine/cputime"
)

// chain builds a machine of n states alternating Pass (which adds to a counter) and Choice.
func chain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"S0","States":{`)
	for i := 0; i < n; i++ {
		next := fmt.Sprintf("S%d", i+1)
		if i > 0 {
			b.WriteString(",")
		}
		switch {
		case i == n-1:
			fmt.Fprintf(&b, `"S%d":{"Type":"Succeed"}`, i)
		case i%2 == 0:
			fmt.Fprintf(&b, `"S%d":{"Type":"Pass","Parameters":{"n.$":"States.MathAdd($.n, 1)","tag":"x"},"Next":"%s"}`, i, next)
		default:
			fmt.Fprintf(&b, `"S%d":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericGreaterThanEquals":0,"Next":"%s"}],"Default":"Fail"}`, i, next)
		}
	}
	b.WriteString(`,"Fail":{"Type":"Fail","Error":"Unexpected"}}}`)
	return b.String()
}

// BenchmarkPassChoiceChain runs a 1,000-state Pass/Choice chain per iteration, through the
// durable engine (queue job, history in SQLite), and reports state transitions per second.
func BenchmarkPassChoiceChain(b *testing.B) {
	v := newEnv(b)
	arn := v.machine(b, "chain", chain(1000))
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for i := 0; i < b.N; i++ {
		x := v.run(b, arn, fmt.Sprintf("c%d", i), `{"n":0}`)
		if x.Status != StatusSucceeded || !strings.Contains(string(x.Output), `"n":500`) {
			b.Fatalf("%s %s %s", x.Status, x.Output, x.Error)
		}
	}
	b.ReportMetric(float64(1000*b.N)/time.Since(start).Seconds(), "transitions/s")
	b.ReportMetric(float64(1000*b.N)/(cputime.Process()-cpu0).Seconds(), "transitions/cpu-s")
}

// BenchmarkMap10k runs a Map of 10,000 items with MaxConcurrency 8 over a no-op function (each
// item a queue job) and reports the wall time, the CPU time and the peak heap in use.
func BenchmarkMap10k(b *testing.B) {
	v := newEnv(b)
	arn := v.machine(b, "map10k", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":8,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"N","States":{"N":{"Type":"Task","Resource":"λnoop","End":true}}},
		"ResultSelector":{"n.$":"States.ArrayLength($)"},"End":true}}}`)
	items := make([]int, 10000)
	for i := range items {
		items[i] = i
	}
	ib, _ := json.Marshal(map[string]any{"items": items})
	input := string(ib)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for i := 0; i < b.N; i++ {
		x := v.run(b, arn, fmt.Sprintf("m%d", i), input)
		if x.Status != StatusSucceeded || string(x.Output) != `{"n":10000}` {
			b.Fatalf("%s %s %s %s", x.Status, x.Output, x.Error, x.Cause)
		}
	}
	close(stop)
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/map")
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
}

// jsonataChain is chain in the JSONata query language: each Pass adds one to n through Output
// (the same work as chain), each Choice tests n with a Condition.
func jsonataChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"QueryLanguage":"JSONata","StartAt":"S0","States":{`)
	for i := 0; i < n; i++ {
		next := fmt.Sprintf("S%d", i+1)
		if i > 0 {
			b.WriteString(",")
		}
		switch {
		case i == n-1:
			fmt.Fprintf(&b, `"S%d":{"Type":"Succeed"}`, i)
		case i%2 == 0:
			fmt.Fprintf(&b, `"S%d":{"Type":"Pass","Output":{"n":"{%% $states.input.n + 1 %%}","tag":"x"},"Next":"%s"}`, i, next)
		default:
			fmt.Fprintf(&b, `"S%d":{"Type":"Choice","Choices":[{"Condition":"{%% $states.input.n >= 0 %%}","Next":"%s"}],"Default":"Fail"}`, i, next)
		}
	}
	b.WriteString(`,"Fail":{"Type":"Fail","Error":"Unexpected"}}}`)
	return b.String()
}

// BenchmarkJSONataPassChoiceChain is BenchmarkPassChoiceChain in the JSONata query language.
func BenchmarkJSONataPassChoiceChain(b *testing.B) {
	v := newEnv(b)
	arn := v.machine(b, "jchain", jsonataChain(1000))
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for i := 0; i < b.N; i++ {
		x := v.run(b, arn, fmt.Sprintf("c%d", i), `{"n":0}`)
		if x.Status != StatusSucceeded || !strings.Contains(string(x.Output), `"n":500`) {
			b.Fatalf("%s %s %s %s", x.Status, x.Output, x.Error, x.Cause)
		}
	}
	b.ReportMetric(float64(1000*b.N)/time.Since(start).Seconds(), "transitions/s")
	b.ReportMetric(float64(1000*b.N)/(cputime.Process()-cpu0).Seconds(), "transitions/cpu-s")
}

// BenchmarkJSONataMap10k is BenchmarkMap10k in the JSONata query language (Items, an
// ItemSelector per item, Output over the results).
func BenchmarkJSONataMap10k(b *testing.B) {
	v := newEnv(b)
	arn := v.machine(b, "jmap10k", `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% $states.input.items %}","MaxConcurrency":8,
		"ItemSelector":{"i":"{% $states.context.Map.Item.Value %}"},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"N","States":{"N":{"Type":"Task","Resource":"λnoop","End":true}}},
		"Output":{"n":"{% $count($states.result) %}"},"End":true}}}`)
	items := make([]int, 10000)
	for i := range items {
		items[i] = i
	}
	ib, _ := json.Marshal(map[string]any{"items": items})
	input := string(ib)
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for i := 0; i < b.N; i++ {
		x := v.run(b, arn, fmt.Sprintf("m%d", i), input)
		if x.Status != StatusSucceeded || string(x.Output) != `{"n":10000}` {
			b.Fatalf("%s %s %s %s", x.Status, x.Output, x.Error, x.Cause)
		}
	}
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/map")
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
