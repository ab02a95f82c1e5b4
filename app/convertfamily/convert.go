// Package convertfamily wires document conversion into the app: PDF, Word, Excel (XLSX and
// XLS), PowerPoint, ZIP, CSV and text files to Markdown (seed 003 Jobs B and C). A conversion is
// one job of type "convert" that runs the document-conversion workflow as its child (see
// Register); every Task of the workflow is the document-converter function, the same handler
// the cloud runs as a Lambda function. Results are cached by SHA-256, converter version and
// options, so converting the same bytes again reuses them unless --force.
package convertfamily

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"jobdesk/app/family"
	"jobdesk/engine/docjob"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Type is the job type of a document conversion (docjob.Type).
const Type = docjob.Type

// Family is the convert family of one App: the converter with its result cache (the database)
// and its files (this PC's, relative paths under the data folder).
type Family struct {
	host *family.Host
	conv *docjob.Converter
}

var (
	_ family.Family         = (*Family)(nil)
	_ family.FunctionSource = (*Family)(nil)
	_ family.Exporter       = (*Family)(nil)
	_ family.Flagged        = (*Family)(nil)
)

func (*Family) Name() string                   { return "convert" }
func (*Family) Migrations() []store.Migrations { return []store.Migrations{docsqlite.Migrations} }
func (*Family) Types() []string                { return []string{Type} }

// Open builds the converter caching in the App's database and reading and writing through the
// device's blob store.
func (f *Family) Open(h *family.Host) error {
	f.host = h
	f.conv = docjob.NewConverter(docsqlite.New(h.DB), h.Blobs)
	return nil
}

// Converter is the family's converter: the handler of the document-converter function.
// Replacing its Cache or Blobs before the engine starts changes what every conversion uses.
func (f *Family) Converter() *docjob.Converter { return f.conv }

// Functions are the converter's Lambda functions: the workflow's Tasks call the same handler as
// the Lambda function document-converter.
func (f *Family) Functions() []functions.Function { return f.conv.Functions() }

// RunFlags are the conversion options of `jobdesk run`.
func (*Family) RunFlags() []family.RunFlag {
	return []family.RunFlag{
		{Name: "furigana", Bool: true, Usage: "convert: write ruby readings after their base text, as 漢字(かんじ)"},
		{Name: "no-ocr", Bool: true, Usage: "convert: never OCR scanned PDF pages or images, even when tesseract is installed"},
	}
}

// Detect takes PDF, Office (Word, Excel, PowerPoint, Excel 97-2003), ZIP, mail (EML, MSG), web
// pages, EPUB, JSON, XML, notebooks and feeds by their content, files whose name claims one of
// them, images when OCR is installed and no AI service is set up, and plain text named as text
// (.txt, .md, .markdown, .text, .log or no extension). Office formats JobDesk does not convert
// (.doc, OpenDocument, RTF) are taken too, so the person hears "unsupported file type" (E004)
// instead of getting a checksum. A .csv is left to the CSV family, which is asked first; any text
// file can still be converted with --type convert.
func (*Family) Detect(path string, head []byte) string {
	ext := strings.ToLower(filepath.Ext(path))
	kind := docjob.Detect(head, filepath.Base(path))
	if claimed := docjob.ClaimedKind(path); claimed != "" && kind != docjob.KindCSV {
		// A name that claims a document (report.pdf, mail.msg) is converted whatever its bytes
		// are, so content that is not what the name says fails E004 instead of getting a checksum.
		return Type
	}
	switch kind {
	case docjob.KindPDF, docjob.KindDOCX, docjob.KindXLSX, docjob.KindZIP, docjob.KindPPTX, docjob.KindODF,
		docjob.KindOffice, docjob.KindDOC, docjob.KindXLS, docjob.KindRTF,
		docjob.KindHTML, docjob.KindEPUB, docjob.KindJSON, docjob.KindXML, docjob.KindNotebook, docjob.KindFeed,
		docjob.KindEML, docjob.KindMSG, docjob.KindMHTML:
		return Type
	case docjob.KindImage:
		// Asked after the AI family: an image comes here when no AI service is set up and OCR
		// can read its text.
		if ok, _ := docjob.ImageOCRAvailable(); ok {
			return Type
		}
	case docjob.KindOLE:
		// An encrypted OOXML file is an OLE container; its EncryptionInfo stream (and an Excel
		// 97-2003 workbook's directory) may lie past the first 8 KiB, so the extension decides
		// here and the converter checks the content.
		switch ext {
		case ".docx", ".docm", ".xlsx", ".xlsm", ".pptx", ".pptm", ".xls":
			return Type
		}
	case docjob.KindUnknown:
		// bytes of no known type named as a converted one: the conversion fails with E004
		// "damaged" naming the type, instead of a checksum job that succeeds
		if docjob.ClaimedKind(path) != "" {
			return Type
		}
	case docjob.KindText, docjob.KindCSV:
		switch ext {
		case ".txt", ".md", ".markdown", ".text", ".log", "":
			return Type
		}
	}
	return ""
}

// input builds the converter's input for path from the run options.
func input(path string, o family.SubmitOptions) docjob.Input {
	in := docjob.Input{Path: path, Name: filepath.Base(path), Force: o.Force,
		Furigana: o.Extra["furigana"] == "true", NoOCR: o.Extra["no-ocr"] == "true"}
	if n, err := strconv.Atoi(o.Extra["max-pages"]); err == nil && n > 0 {
		in.MaxPages = n
	}
	return in
}

// Submit enqueues one conversion job for path, or returns the job that already converts the
// same bytes with the same options (Host.SubmitOnce); --force converts again.
func (f *Family) Submit(ctx context.Context, path, typ string, o family.SubmitOptions) (job.Job, error) {
	di := input(path, o)
	in, err := json.Marshal(di)
	if err != nil {
		return job.Job{}, err
	}
	sha, err := family.FileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	options := struct {
		Furigana bool `json:"furigana"`
		NoOCR    bool `json:"no_ocr"`
		MaxPages int  `json:"max_pages,omitempty"` // omitted when default: keys made before stay the same
	}{di.Furigana, di.NoOCR, di.MaxPages}
	return f.host.SubmitOnce(ctx, sha, options, queue.Params{Type: Type, Name: filepath.Base(path), Input: in, Priority: o.Priority, Target: o.Target}, o.Force)
}

// Export writes a finished conversion's Markdown to out (format "md").
func (f *Family) Export(ctx context.Context, j job.Job, format, out string) error {
	if format != "md" && format != "markdown" {
		return job.Errorf(job.E014, "a conversion exports as md, not %q", format).
			WithJa(fmt.Sprintf("変換結果は md 形式で書き出せます（%q は使えません）。", format))
	}
	if j.Status != job.Succeeded && j.Status != job.Partial {
		return job.Errorf(job.E014, "job %s ended %s and has no converted document", j.Ref(), j.Status).
			WithJa(fmt.Sprintf("ジョブ %s は %s で終了したため、書き出せる変換結果がありません。", j.Ref(), j.Status))
	}
	var buf bytes.Buffer
	if err := f.conv.ExportMarkdown(ctx, j.Result, &buf); err != nil {
		return err
	}
	return writeFile(out, buf.Bytes())
}

// writeFile writes data to path through a temporary file in the same folder, so a reader
// never sees half a file.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".jobdesk-export-*")
	if err != nil {
		return job.Wrap(job.E014, err, fmt.Sprintf("cannot write into %s", dir)).
			WithJa(fmt.Sprintf("%s に書き込めません。", dir))
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return job.Wrap(job.E009, werr, fmt.Sprintf("could not write %s", path)).
			WithJa(fmt.Sprintf("%s を書き込めませんでした。", path))
	}
	return nil
}

// Workflow is the shipped workflow a conversion runs (docjob.Workflow).
const Workflow = docjob.Workflow

// Register adds the "convert" job type: a conversion job runs the document-conversion
// workflow (embedded, so always there) as its child and reports what the workflow produced with
// the converter's own status and error code; it only waits, so it takes no worker slot.
func (f *Family) Register(w *queue.Worker) {
	w.Handle(Type, f.workflowHandler(), queue.TypeOptions{Orchestrator: true, Concurrency: 64})
}

// workflowHandler runs one conversion on the device (docjob.RunJob): the workflow reads the
// file where it is, on the App's flow engine, and its output is the job's result.
func (f *Family) workflowHandler() job.Handler {
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return docjob.RunJob(ctx, docjob.Runtime{Runtime: orchestrator.Runtime{Executions: f.host.Flow.Executions()}}, raw, r)
	}
}
