package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// cmdExport is `jobdesk export JOB --format F -o FILE`.
func (c *CLI) cmdExport(args []string) int {
	fs := c.Flags("export")
	format := fs.String("format", "", "csv, xlsx or md (default: from the -o file's extension)")
	out := fs.String("o", "", "the file to write")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	ref, ok := c.JobArg(pos)
	if !ok {
		return ExitUsage
	}
	if *out == "" {
		return c.Usage("export: name the file to write with -o FILE", "export: 書き出すファイルを -o FILE で指定してください。")
	}
	if *format == "" {
		*format = strings.TrimPrefix(strings.ToLower(filepath.Ext(*out)), ".")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx := context.Background()
	j, err := FindJob(ctx, a, ref)
	if err != nil {
		return c.Fail(err)
	}
	if err := a.Export(ctx, j.ID, *format, *out); err != nil {
		return c.Fail(err)
	}
	fmt.Fprintf(c.Stdout, "job %s: wrote %s\n", j.Ref(), *out)
	return ExitOK
}
