package docjob

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// longNames are file names of 254 bytes, legal on Linux: ASCII, Japanese (three bytes a
// character, so a cut at a byte count lands inside one) and four-byte characters.
func longNames() []string {
	return []string{
		strings.Repeat("a", 250) + ".txt",
		"a" + strings.Repeat("あ", 83) + ".txt",
		"ab" + strings.Repeat("😀", 62) + ".txt",
	}
}

// Output names of long input names fit in a file name (with room for the temporary name of an
// atomic write), are cut at a character boundary, and keep the hash and .md.
func TestOutputNameOfLongNames(t *testing.T) {
	sha := "0123456789abcdef"
	for _, name := range longNames() {
		if len(name) != 254 {
			t.Fatalf("%d bytes", len(name))
		}
		got := OutputName(name, sha)
		if len(got) > MaxOutputName || !utf8.ValidString(got) || !strings.HasSuffix(got, "_01234567.md") {
			t.Errorf("OutputName(%d bytes) = %q (%d bytes)", len(name), got, len(got))
		}
		if stem := strings.TrimSuffix(got, "_01234567.md"); !strings.HasPrefix(name, stem) || len(stem) < MaxOutputName-16 {
			t.Errorf("stem %q is not the name's start cut near the limit", stem)
		}
	}
	if got := OutputName("report.pdf", sha); got != "report_01234567.md" {
		t.Errorf("a short name changed: %s", got)
	}
}

// A file whose name has 254 bytes converts, and its Markdown is written (it failed E009
// "could not write the Markdown file" when the name grew past 255 bytes).
func TestConvertLongFileName(t *testing.T) {
	c, _ := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	for _, name := range longNames() {
		p := filepath.Join(in, name)
		if err := os.WriteFile(p, []byte("本文です。\n"+name+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := run(t, c, dataDir, Input{Path: p})
		if err != nil {
			t.Fatalf("%d-byte name: %v", len(name), err)
		}
		if _, err := os.Stat(res.OutputPath); err != nil || len(filepath.Base(res.OutputPath)) > MaxOutputName {
			t.Fatalf("output %s: %v", res.OutputPath, err)
		}
	}
}

// A ZIP's entries with names too long for a file, and entries of one name, are each extracted
// to a file of their own, numbered in archive order.
func TestExtractZipLongAndRepeatedNames(t *testing.T) {
	long := longNames()[1]
	data := makeZip(t, []zipEntry{
		{name: long, data: []byte("1"), flags: 0x800},
		{name: long, data: []byte("2"), flags: 0x800},
		{name: "same.txt", data: []byte("3")},
		{name: "same.txt", data: []byte("3")},
		{name: "same (2).txt", data: []byte("4")},
	})
	var got []string
	for range 2 {
		dir := t.TempDir()
		l, err := ExtractZip(context.Background(), data, blob.Local{}, dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range l.Entries {
			b := filepath.Base(e.Path)
			if len(b) > MaxOutputName || !utf8.ValidString(b) {
				t.Errorf("entry %q written as %q (%d bytes)", e.Name, b, len(b))
			}
			body, err := os.ReadFile(e.Path)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, b+"="+string(body))
		}
		if len(names) != 5 {
			t.Fatalf("%d entries written: %v", len(names), names)
		}
		seen := map[string]bool{}
		for _, n := range names {
			base, _, _ := strings.Cut(n, "=")
			if seen[base] {
				t.Errorf("two entries written to %s: %v", base, names)
			}
			seen[base] = true
		}
		got = append(got, strings.Join(names, "|"))
	}
	if got[0] != got[1] {
		t.Errorf("two extractions differ:\n%s\n%s", got[0], got[1])
	}
	if !strings.Contains(got[0], "same.txt=3|same (2).txt=3|same (2) (2).txt=4") && !strings.Contains(got[0], "same.txt=3|same (2).txt=3|same (3).txt=4") {
		t.Errorf("repeated names: %s", got[0])
	}
}

// Which per-entry Markdown files a ZIP's conversion writes does not depend on the order its
// entries are converted in (the workflow's Map runs them at once): entries of one name, and
// entries with the same bytes under other names, each get their file, named after the entry's
// extracted file.
func TestZipEntryMarkdownIndependentOfOrder(t *testing.T) {
	data := makeZip(t, []zipEntry{
		{name: "same.txt", data: []byte("同じ内容\n")},
		{name: "x/same.txt", data: []byte("同じ内容\n")},
		{name: "other.txt", data: []byte("同じ内容\n")},
		{name: "same.txt", data: []byte("別の内容\n")},
	})
	written := func(order []int) []string {
		c, _ := newConverter(t)
		dataDir := t.TempDir()
		zipPath := filepath.Join(t.TempDir(), "bundle.zip")
		if err := os.WriteFile(zipPath, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx := job.WithInfo(context.Background(), job.Info{ID: 7, Output: dataDir})
		raw, _ := json.Marshal(Input{Path: zipPath, Mode: ModeExtract})
		out, err := c.Handle(ctx, raw, job.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var ex ExtractOutput
		if err := json.Unmarshal(out, &ex); err != nil || len(ex.Entries) != 4 {
			t.Fatalf("extract: %s %v", out, err)
		}
		for _, i := range order {
			e := ex.Entries[i]
			raw, _ := json.Marshal(Input{Path: e.Path, Name: e.Name, Depth: 1, Mode: ModeConvert})
			out, err := c.Handle(ctx, raw, job.Discard)
			if err != nil {
				t.Fatalf("entry %s: %v", e.Name, err)
			}
			var res Result
			json.Unmarshal(out, &res)
			if _, err := os.Stat(res.OutputPath); err != nil {
				t.Fatalf("entry %s: its Markdown %s: %v", e.Name, res.OutputPath, err)
			}
		}
		files, err := os.ReadDir(filepath.Join(dataDir, "documents"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range files {
			if !f.IsDir() {
				names = append(names, f.Name())
			}
		}
		sort.Strings(names)
		return names
	}
	forward := written([]int{0, 1, 2, 3})
	backward := written([]int{3, 2, 1, 0})
	if strings.Join(forward, " ") != strings.Join(backward, " ") {
		t.Fatalf("the Markdown files depend on the order:\n%v\n%v", forward, backward)
	}
	// same.txt and x/same.txt hold the same bytes under the same file name: one file.
	if want := "other_"; len(forward) != 3 || !strings.HasPrefix(forward[0], want) || !strings.HasPrefix(forward[1], "same (2)_") {
		t.Fatalf("want other, same (2) and same: %v", forward)
	}
}
