package main

// The shape JobDesk keeps, checked on every `make test`:
//   - handler packages (and what they build on) link neither SQLite, nor Fyne, nor the AWS SDK,
//     so the same code runs in the desktop app and in the Lambda worker;
//   - the window and the command line talk to the app's service API only: ui/ and app/cli
//     import neither engine/queue nor engine/store, and App exports no database, queue or
//     workflow engine;
//   - a family's wiring (app/*family) never imports the app, only the contract app/family;
//   - only sync/ imports the AWS SDK;
//   - app/ and ui/ hold no SQL.

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "jobdesk"

// handlerPackages must run anywhere: on the device and inside Lambda.
var handlerPackages = []string{
	"engine/job", "engine/blob", "engine/functions", "engine/orchestrator",
	"engine/csvjob", "engine/docjob", "engine/aijob", "engine/checksum",
}

// forbiddenInHandlers are module path prefixes a handler package must not depend on.
var forbiddenInHandlers = []string{
	"modernc.org/sqlite", "fyne.io/", "github.com/aws/aws-sdk-go-v2", "database/sql",
	module + "/engine/store", module + "/engine/queue", module + "/ui", module + "/app",
}

type goPackage struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

func listPackages(t *testing.T, patterns ...string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

func hasPrefix(path string, prefixes []string) string {
	for _, p := range prefixes {
		if path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return p
		}
	}
	return ""
}

func TestHandlersLinkNoDatabaseUIOrCloud(t *testing.T) {
	var patterns []string
	for _, p := range handlerPackages {
		patterns = append(patterns, "./"+p)
	}
	for _, p := range listPackages(t, patterns...) {
		reported := map[string]bool{}
		for _, d := range p.Deps {
			if bad := hasPrefix(d, forbiddenInHandlers); bad != "" && !reported[bad] {
				reported[bad] = true
				t.Errorf("%s depends on %s: handler packages must link into the Lambda worker", p.ImportPath, d)
			}
		}
	}
}

// lambdaMain is the cloud worker's main (the Lambda zip's bootstrap): it may link the AWS SDK,
// never the database, the UI or cgo.
const lambdaMain = "app/lambda"

var forbiddenInLambda = []string{
	"modernc.org/sqlite", "fyne.io/", "database/sql", "runtime/cgo", "C",
	module + "/engine/store", module + "/engine/queue", module + "/ui",
}

func TestLambdaLinksNoDatabaseUIOrCgo(t *testing.T) {
	// Listed as `make lambda` builds it: with CGO_ENABLED=0 the listing of a package that needs
	// cgo fails, and a dependency that has a pure-Go fallback is linked without cgo.
	t.Setenv("CGO_ENABLED", "0")
	t.Setenv("GOFLAGS", "-tags=lambda.norpc")
	for _, p := range listPackages(t, "./"+lambdaMain) {
		reported := map[string]bool{}
		for _, d := range p.Deps {
			if bad := hasPrefix(d, forbiddenInLambda); bad != "" && !reported[bad] {
				reported[bad] = true
				t.Errorf("%s depends on %s: the Lambda worker links no database, UI or cgo", p.ImportPath, d)
			}
		}
	}
}

func TestWindowAndCLIUseTheServiceAPIOnly(t *testing.T) {
	for _, p := range listPackages(t, "./ui/...", "./app/cli/...") {
		imports := append(append(p.Imports, p.TestImports...), p.XTestImports...)
		if strings.HasPrefix(p.ImportPath, module+"/app/cli") {
			// The command line's end-to-end tests read the data folder's database from outside,
			// as an observer beside the App (what a job left in its tables); the commands may not.
			imports = p.Imports
		}
		for _, imp := range imports {
			if bad := hasPrefix(imp, []string{module + "/engine/queue", module + "/engine/store", "database/sql"}); bad != "" {
				t.Errorf("%s imports %s: the window and the command line use app's service API only", p.ImportPath, imp)
			}
		}
	}
}

// TestFamiliesDoNotImportTheApp: the app lists the families; a family knows only the contract.
func TestFamiliesDoNotImportTheApp(t *testing.T) {
	for _, p := range listPackages(t, "./app/...") {
		if p.ImportPath == module+"/app" || !strings.HasSuffix(p.ImportPath, "family") {
			continue
		}
		for _, imp := range p.Imports {
			if imp == module+"/app" || imp == module+"/app/cli" || imp == module+"/ui" {
				t.Errorf("%s imports %s: a family's wiring knows only app/family", p.ImportPath, imp)
			}
		}
	}
}

// TestAppExportsNoDatabaseOrQueue: nothing exported by package app — a field, a method, a
// function's or method's parameter or result — is or holds an *store.DB, a *queue.Queue or the
// workflow engine (*flow.Engine), so callers cannot go around the service API.
func TestAppExportsNoDatabaseOrQueue(t *testing.T) {
	pkgs := listPackages(t, "./app")
	if len(pkgs) != 1 {
		t.Fatalf("go list ./app: %d packages", len(pkgs))
	}
	forbidden := map[string]map[string]bool{ // import path → type names
		module + "/engine/store": {"DB": true},
		module + "/engine/queue": {"Queue": true, "Worker": true},
		module + "/engine/flow":  {"Engine": true},
	}
	fset := token.NewFileSet()
	for _, f := range pkgs[0].GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(pkgs[0].Dir, f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		local := map[string]string{} // file's import name → path
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = path
		}
		mentions := func(n ast.Node) string {
			found := ""
			ast.Inspect(n, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && forbidden[local[id.Name]][sel.Sel.Name] {
					found = id.Name + "." + sel.Sel.Name
				}
				return found == ""
			})
			return found
		}
		report := func(what string, n ast.Node) {
			if bad := mentions(n); bad != "" {
				t.Errorf("%s: app exports %s, which reaches %s: callers use the service API", fset.Position(n.Pos()), what, bad)
			}
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() {
					report(d.Name.Name, d.Type)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, name := range fld.Names {
									if name.IsExported() {
										report(s.Name.Name+"."+name.Name, fld.Type)
									}
								}
								if len(fld.Names) == 0 { // an embedded field is exported through its type
									report(s.Name.Name+" (embedded)", fld.Type)
								}
							}
						} else {
							report(s.Name.Name, s.Type)
						}
					case *ast.ValueSpec:
						for i, name := range s.Names {
							if !name.IsExported() {
								continue
							}
							if s.Type != nil {
								report(name.Name, s.Type)
							}
							if i < len(s.Values) {
								report(name.Name, s.Values[i])
							}
						}
					}
				}
			}
		}
	}
}

func TestOnlySyncImportsAWS(t *testing.T) {
	for _, p := range listPackages(t, "./...") {
		if strings.HasPrefix(p.ImportPath, module+"/sync/") || p.ImportPath == module+"/sync" {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/aws/aws-sdk-go-v2") || strings.HasPrefix(imp, "github.com/aws/smithy-go") {
				t.Errorf("%s imports %s: only sync/ talks to AWS", p.ImportPath, imp)
			}
		}
	}
}

// sqlText matches SQL statements in string literals: the keywords in capitals, as JobDesk writes SQL.
var sqlText = regexp.MustCompile(`(?s)\b(SELECT\s.+\sFROM\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX|VIEW)\s|PRAGMA\s+\w)`)

func TestAppAndUIHoldNoSQL(t *testing.T) {
	for _, p := range listPackages(t, "./app/...", "./ui/...") {
		for _, imp := range p.Imports {
			if imp == "database/sql" {
				t.Errorf("%s imports database/sql", p.ImportPath)
			}
		}
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err == nil && sqlText.MatchString(s) {
					rel := path
					if wd, err := os.Getwd(); err == nil {
						rel, _ = filepath.Rel(wd, path)
					}
					t.Errorf("%s holds SQL (%.60q): SQL belongs to the store packages", rel, s)
				}
				return true
			})
		}
	}
}

func TestSQLDetector(t *testing.T) {
	for s, want := range map[string]bool{
		"SELECT status, count(*) FROM jobs WHERE parent_id IS NULL": true,
		"INSERT OR REPLACE INTO csv_stage(execution) VALUES(?)":     true,
		"UPDATE goals SET job_id=? WHERE id=?":                      true,
		"Select the files to convert from the list":                 false,
		"update the window": false,
		"Select the job, then choose Retry. Update from the list": false,
	} {
		if got := sqlText.MatchString(s); got != want {
			t.Errorf("sqlText(%q) = %v, want %v", s, got, want)
		}
	}
}
