package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"jobdesk/app"
	"jobdesk/app/convertfamily"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
)

// convertCommand is the convert family's subcommand.
var convertCommand = Command{"convert", "convert [--target device|cloud|auto] [--force] [--furigana] [--no-ocr] [--json] FILE...",
	"convert documents (PDF, Word, Excel, ZIP, CSV, text, HTML, EPUB, JSON, XML, feeds, notebooks, EML, MSG, images by OCR) to Markdown and wait; prints where each .md is", (*CLI).cmdConvert}

// cmdConvert is `run --type convert --wait` with a summary of each conversion: its status, pages,
// text length, method and the Markdown file.
func (c *CLI) cmdConvert(args []string) int {
	fs := c.Flags("convert")
	force := fs.Bool("force", false, "convert again even when the same file was converted before")
	target := targetFlag(fs)
	furigana := fs.Bool("furigana", false, "write ruby readings after their base text, as 漢字(かんじ)")
	noOCR := fs.Bool("no-ocr", false, "never OCR scanned PDF pages or images")
	asJSON := fs.Bool("json", false, "print each conversion's result as JSON, one object a line")
	files, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(files) == 0 {
		return c.Usage("convert: name at least one file", "convert: ファイルを 1 つ以上指定してください。")
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	extra := map[string]string{}
	if *furigana {
		extra["furigana"] = "true"
	}
	if *noOCR {
		extra["no-ocr"] = "true"
	}
	jobs, err := a.Submit(ctx, files, app.SubmitOptions{Type: convertfamily.Type, Force: *force, Target: *target, Extra: extra})
	if err != nil {
		return c.Fail(err)
	}
	if jobs, err = c.RunAndWait(ctx, a, jobs); err != nil {
		return c.Fail(err)
	}
	enc := json.NewEncoder(c.Stdout)
	enc.SetEscapeHTML(false)
	tw := newTable(c.Stdout)
	if !*asJSON {
		fmt.Fprintln(tw, "JOB\tSTATUS\tPAGES\tCHARS\tMETHOD\tCACHED\tNAME\tMARKDOWN / REASON")
	}
	for _, j := range jobs {
		var res docjob.Result
		_ = json.Unmarshal(j.Result, &res)
		if *asJSON {
			// A failed job has no result: name and path come from the job, and its error
			// (code, message, message_ja) is printed beside them.
			if res.Name == "" {
				res.Name = j.Name
			}
			if res.Path == "" {
				var in docjob.Input
				if json.Unmarshal(j.Input, &in) == nil {
					res.Path = in.Path
				}
			}
			enc.Encode(struct {
				ID     int64  `json:"id"`
				Number int64  `json:"number"`
				Status string `json:"status"`
				docjob.Result
				Error *job.Error `json:"error,omitempty"`
			}{j.ID, j.Number, string(j.Status), res, j.Error})
			continue
		}
		last := res.OutputPath
		if res.Reason != "" {
			last += " (" + res.Reason + ")"
		}
		if j.Error != nil {
			last = string(j.Error.Code) + ": " + j.Error.Message
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%t\t%s\t%s\n", jobRef(j), j.Status, res.PageCount, res.TextLength, res.Method, res.Cached, j.Name, last)
	}
	tw.Flush()
	return ExitCode(jobs)
}
