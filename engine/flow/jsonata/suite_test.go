package jsonata

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/flow/jsonata/internal/xj"
)

// TestOfficialSuite runs JSONata's own test suite (the test/test-suite folder of the jsonata-js
// repository, given by JSONATA_SUITE) through this package and reports the share of cases that
// give the suite's result. It is skipped when JSONATA_SUITE is not set.
func TestOfficialSuite(t *testing.T) {
	root := os.Getenv("JSONATA_SUITE")
	if root == "" {
		t.Skip("JSONATA_SUITE is not set")
	}
	files, _ := filepath.Glob(filepath.Join(root, "groups", "*", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no cases under %s/groups", root)
	}
	sort.Strings(files)
	pass, total := 0, 0
	failed := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases := []any{raw}
		if list, ok := raw.([]any); ok {
			cases = list
		}
		for _, c := range cases {
			total++
			m, _ := c.(map[string]any)
			if file, ok := m["expr-file"].(string); ok {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(f), file))
				if err != nil {
					t.Fatal(err)
				}
				m["expr"] = string(b)
			}
			if ok, why := runCase(root, m); ok {
				pass++
			} else {
				group := filepath.Base(filepath.Dir(f))
				failed[group]++
				if testing.Verbose() {
					t.Logf("%s: %s", strings.TrimPrefix(f, root), why)
				}
			}
		}
	}
	rate := 100 * float64(pass) / float64(total)
	t.Logf("JSONata test suite: %d of %d cases pass (%.2f %%); failures by group: %v", pass, total, rate, failed)
	if floor := 99.0; rate < floor {
		t.Errorf("pass rate %.2f %% is below %.0f %%", rate, floor)
	}
}

func runCase(root string, c map[string]any) (ok bool, why string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ok, why = runCase1(root, c)
	}()
	select {
	case <-done:
		return ok, why
	case <-time.After(15 * time.Second):
		return false, "timeout"
	}
}

func runCase1(root string, c map[string]any) (bool, string) {
	src, _ := c["expr"].(string)
	var data any = undefinedInput{}
	if d, ok := c["data"]; ok {
		data = d
	} else if ds, ok := c["dataset"].(string); ok {
		b, _ := os.ReadFile(filepath.Join(root, "datasets", ds+".json"))
		json.Unmarshal(b, &data)
	}
	_, wantErr := c["code"]
	if _, ok := c["error"]; ok {
		wantErr = true
	}
	e, err := Compile(src)
	if err != nil {
		return wantErr, "compile: " + err.Error()
	}
	vars, _ := c["bindings"].(map[string]any)
	depth, limit := xj.DefaultMaxDepth, xj.DefaultTimeLimit
	if d, ok := c["depth"].(float64); ok {
		depth = int(d) // the suite's limit on the nesting of the evaluation
	}
	if ms, ok := c["timelimit"].(float64); ok {
		limit = time.Duration(ms) * time.Millisecond
	}
	v, defined, err := e.eval(data, vars, depth, limit)
	switch {
	case wantErr:
		return err != nil, "no error"
	case err != nil:
		return false, err.Error()
	case c["undefinedResult"] == true:
		return !defined, "defined"
	}
	want, _ := json.Marshal(c["result"])
	got, _ := json.Marshal(v)
	return defined && sameValue(v, c["result"]), "got " + string(got) + ", want " + string(want)
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(x)))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
