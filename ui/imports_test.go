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

// windowEngine are the engine packages the window may import: the shared vocabulary engine/job,
// and engine/mdtext, a leaf on the standard library alone, so that the window reads a converted
// document's escaped text back exactly as the converters and the app's section titles do.
var windowEngine = map[string]bool{"jobdesk/engine/job": true, "jobdesk/engine/mdtext": true}

// TestWindowImportsOnlyTheServiceAPI: the window's code (ui and its packages, tests aside) names
// the engine only through the app's service API and windowEngine: no other engine package, no
// family's wiring under app/, no cloud package.
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
			bad := (strings.HasPrefix(imp, "jobdesk/engine/") && !windowEngine[imp]) ||
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
