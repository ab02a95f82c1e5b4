// Package assets holds what JobDesk ships inside its binary: the workflows (Amazon States
// Language files that run on the device and deploy unchanged to Step Functions), the icon and
// the translations. Everything is embedded, so the app runs from a single file.
package assets

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

//go:embed workflows/*.asl.json
var workflows embed.FS

// Workflow returns the definition of the named workflow ("csv-processing" for
// workflows/csv-processing.asl.json).
func Workflow(name string) ([]byte, error) {
	return workflows.ReadFile(path.Join("workflows", name+".asl.json"))
}

// Workflows returns the names of every shipped workflow, sorted.
func Workflows() []string {
	entries, _ := fs.ReadDir(workflows, "workflows")
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".asl.json"); ok {
			out = append(out, name)
		}
	}
	return out
}
