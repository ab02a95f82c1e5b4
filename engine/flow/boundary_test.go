package flow

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// queueTables matches SQL on the queue's own tables: the flow engine reads and changes job rows
// through the queue's verbs (Get, Outcome, SucceededByKey, Enqueue, …), never with SQL of its own.
var queueTables = regexp.MustCompile(`(?i)\b(FROM|JOIN|UPDATE|INTO)\s+(jobs|job_events|queue_owners)\b`)

func TestFlowHoldsNoSQLOnTheQueuesTables(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && queueTables.MatchString(s) {
				t.Errorf("%s holds SQL on the queue's tables (%.70q): use the queue's verbs", f, s)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files found")
	}
}
