package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"jobdesk/engine/csvjob"
)

// csvCommand is the csv family's subcommand.
var csvCommand = Command{"csv", "csv sniff FILE [--json]", "show a CSV file's encoding, delimiter and the schema inferred from its rows (save it for run --schema)", (*CLI).cmdCSV}

func (c *CLI) cmdCSV(args []string) int {
	if len(args) == 0 || args[0] != "sniff" {
		fmt.Fprintln(c.Stderr, "usage: jobdesk csv sniff FILE [--json]")
		return ExitUsage
	}
	fs := c.Flags("csv sniff")
	asJSON := fs.Bool("json", false, "print only the schema as JSON (ready for run --schema)")
	pos, err := Parse(fs, args[1:])
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return c.Usage("csv sniff: name one file", "csv sniff: ファイルを 1 つ指定してください。")
	}
	res, err := csvjob.Sniff(pos[0])
	if err != nil {
		return c.Fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(res.Schema)
		return ExitOK
	}
	delim := res.Delimiter
	if delim == "\t" {
		delim = `\t (tab)`
	}
	fmt.Fprintf(c.Stdout, "Encoding:  %s\nDelimiter: %s\nSampled:   %d rows\nKey:       %s\nCounts:    %s (%s)\n\n",
		res.Encoding, delim, res.Rows, res.Schema.Key, res.Schema.Entity, res.Schema.EntityEn)
	tw := newTable(c.Stdout)
	fmt.Fprintln(tw, "COLUMN\tTYPE\tREQUIRED\tFIELD\tPATTERN\tMIN")
	for _, col := range res.Schema.Columns {
		min := ""
		if col.Min != nil {
			min = fmt.Sprint(*col.Min)
		}
		field := col.Field
		if field == "" {
			field = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\n", col.Name, col.Type, col.Required, field, col.Pattern, min)
	}
	tw.Flush()
	fmt.Fprintln(c.Stdout, "\nSchema (save as a file and pass it with run --type csv --schema FILE):")
	b, _ := json.MarshalIndent(res.Schema, "", "  ")
	fmt.Fprintln(c.Stdout, strings.TrimSpace(string(b)))
	return ExitOK
}
