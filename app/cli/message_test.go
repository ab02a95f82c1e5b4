package cli

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A finished job's message in `run --wait --json`, `show --json` and `show` says what came of
// it, as `ls` does (a ZIP of 20 documents: its pages and characters), not the workflow's last
// progress report ("ConvertEntries: 11 of 20 items").
func TestJSONMessageIsTheOutcome(t *testing.T) {
	dataDir, in := t.TempDir(), t.TempDir()
	p := filepath.Join(in, "資料20.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i := range 20 {
		w, _ := zw.Create(fmt.Sprintf("文書%02d.txt", i))
		fmt.Fprintf(w, "文書 %d の本文です。\n", i)
	}
	zw.Close()
	f.Close()
	code, out, errOut := runCLI(t, "--data-dir", dataDir, "run", "--wait", "--json", p)
	if code != ExitOK {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	var ran struct {
		Message string `json:"message"`
		Number  int64  `json:"number"`
	}
	if err := json.Unmarshal([]byte(out), &ran); err != nil {
		t.Fatal(err)
	}
	_, ls, _ := runCLI(t, "--data-dir", dataDir, "ls")
	if !strings.HasPrefix(ran.Message, "20 pages · ") || !strings.Contains(ls, ran.Message) {
		t.Fatalf("run --wait --json says %q; ls says\n%s", ran.Message, ls)
	}
	_, out, _ = runCLI(t, "--data-dir", dataDir, "show", "--json", fmt.Sprint(ran.Number))
	var shown struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.Message != ran.Message {
		t.Fatalf("show --json says %q (%v), want %q", shown.Message, err, ran.Message)
	}
	_, out, _ = runCLI(t, "--data-dir", dataDir, "show", fmt.Sprint(ran.Number))
	if !strings.Contains(out, "Message    "+ran.Message) {
		t.Fatalf("show:\n%s", out)
	}
	_, out, _ = runCLI(t, "--data-dir", dataDir, "ls", "--json")
	if !strings.Contains(out, `"message":"`+ran.Message+`"`) {
		t.Fatalf("ls --json:\n%s", out)
	}
}
