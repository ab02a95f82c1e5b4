package ui

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWindowImportsOnlyTheServiceAPI: the window's code (ui and its packages, tests aside) names
// the engine only through the app's service API and the shared vocabulary engine/job: no engine
// package, no family's wiring under app/, no cloud package.
func TestWindowImportsOnlyTheServiceAPI(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, s := range f.Imports {
			imp, _ := strconv.Unquote(s.Path.Value)
			bad := (strings.HasPrefix(imp, "jobdesk/engine/") && imp != "jobdesk/engine/job") ||
				strings.HasPrefix(imp, "jobdesk/app/") || strings.HasPrefix(imp, "jobdesk/sync")
			if bad {
				t.Errorf("%s imports %s: the window goes through the app's service API (ui.Service)", path, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
