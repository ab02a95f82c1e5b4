package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlowStartSaysWhatHappens: an input over 256 KiB and one nested too deeply are refused in
// English and Japanese saying so, and a start without an engine running prints PENDING, not
// RUNNING.
func TestFlowStartSaysWhatHappens(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(t.TempDir(), "user-activity.asl.json")
	os.WriteFile(wf, []byte(testWorkflow), 0o644)
	big := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(big, []byte(`{"blob":"`+strings.Repeat("あ", 100<<10)+`"}`), 0o644)
	deep := filepath.Join(t.TempDir(), "deep.json")
	os.WriteFile(deep, []byte(`{"a":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+`}`), 0o644)

	for _, c := range []struct{ file, en, ja string }{
		{big, "at most 256 KiB", "256 KiB（262144 バイト）までです"},
		{deep, "nested too deeply", "深すぎます"},
	} {
		code, _, errOut := runCLI(t, "--data-dir", dir, "flow", "start", wf, "--input", "@"+c.file)
		if code != ExitUsage || !strings.Contains(errOut, "E014") || !strings.Contains(errOut, c.en) || !strings.Contains(errOut, c.ja) {
			t.Errorf("%s: exit %d\n%s", filepath.Base(c.file), code, errOut)
		}
	}
	code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "start", wf, "--input", `{"users":[]}`)
	if code != ExitOK || !strings.Contains(out, "status    PENDING") || strings.Contains(out, "RUNNING") {
		t.Fatalf("start without an engine: %d\n%s\n%s", code, out, errOut)
	}
}
