package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"jobdesk/engine/docjob"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// DocType is the job type of a document conversion (`jobdesk run --type convert FILE`).
const DocType = "convert"

// docState is the convert family's state kept in App.State: the converter with its result cache
// (the database) and its files (this PC's).
type docState struct {
	conv *docjob.Converter
}

// The convert family: PDF, Word, Excel, ZIP, CSV and text files to Markdown (seed 003 Jobs B and
// C). A conversion is one job of type "convert" that runs the document-conversion workflow as its
// child (see registerDoc); every Task of the workflow is the document-converter function, the same
// handler the cloud runs as a Lambda function. Results are cached by SHA-256, converter version
// and options, so converting the same bytes again reuses them unless --force.
func init() {
	RegisterFamily(Family{
		Name:       "convert",
		Migrations: []store.Migrations{docsqlite.Migrations},
		Open: func(a *App) error {
			conv := newDocConverter(a)
			a.SetState("convert", &docState{conv: conv})
			// The workflow's Tasks call the same handler as the Lambda function
			// document-converter.
			if eng := FlowEngine(a); eng != nil {
				for _, f := range conv.Functions() {
					eng.RegisterFunction(f.Name, confined(f.Handler), f.Options)
				}
			}
			return nil
		},
		Register: registerDoc,
		Types:    []string{DocType},
		Detect:   detectDoc,
		Priority: 10,
		Submit:   submitDoc,
		RunFlags: []RunFlag{
			{Name: "furigana", Bool: true, Usage: "convert: write ruby readings after their base text, as 漢字(かんじ)"},
			{Name: "no-ocr", Bool: true, Usage: "convert: never OCR scanned PDF pages, even when tesseract is installed"},
		},
		Commands: docCommands,
		Export:   exportDoc,
	})
}

// newDocConverter returns a converter caching in the App's database and reading and writing
// this PC's files (relative paths under the data folder).
func newDocConverter(a *App) *docjob.Converter {
	return docjob.NewConverter(docsqlite.New(a.DB), DeviceBlobs(a))
}

// docConverter returns the family's converter (one per App, sharing its database).
func docConverter(a *App) *docjob.Converter {
	if s, ok := a.State("convert").(*docState); ok {
		return s.conv
	}
	return newDocConverter(a)
}

// detectDoc takes PDF, Office and ZIP files by their content, and plain text named as text (.txt,
// .md, .markdown, .text, .log or no extension). Office formats JobDesk does not convert (.doc,
// .xls, .pptx, OpenDocument, RTF) are taken too, so the person hears "unsupported file type" (E004)
// instead of getting a checksum. A .csv is left to the CSV family, which is asked first; any text
// file can still be converted with --type convert.
func detectDoc(path string, head []byte) string {
	ext := strings.ToLower(filepath.Ext(path))
	switch docjob.Detect(head, filepath.Base(path)) {
	case docjob.KindPDF, docjob.KindDOCX, docjob.KindXLSX, docjob.KindZIP, docjob.KindPPTX, docjob.KindODF,
		docjob.KindOffice, docjob.KindDOC, docjob.KindXLS, docjob.KindRTF:
		return DocType
	case docjob.KindOLE:
		// An encrypted OOXML file is an OLE container; its EncryptionInfo stream may lie past
		// the first 8 KiB, so the extension decides here and the converter checks the content.
		switch ext {
		case ".docx", ".docm", ".xlsx", ".xlsm":
			return DocType
		}
	case docjob.KindText, docjob.KindCSV:
		switch ext {
		case ".txt", ".md", ".markdown", ".text", ".log", "":
			return DocType
		}
	}
	return ""
}

// docInput builds the converter's input for path from the run options.
func docInput(path string, o SubmitOptions) docjob.Input {
	return docjob.Input{Path: path, Name: filepath.Base(path), Force: o.Force,
		Furigana: o.Extra["furigana"] == "true", NoOCR: o.Extra["no-ocr"] == "true"}
}

// submitDoc enqueues one conversion job for path, or returns the job that already converts the
// same bytes with the same options (submitOnce); --force converts again.
func submitDoc(ctx context.Context, a *App, path, typ string, o SubmitOptions) (job.Job, error) {
	di := docInput(path, o)
	in, err := json.Marshal(di)
	if err != nil {
		return job.Job{}, err
	}
	sha, err := fileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	options := struct {
		Furigana bool `json:"furigana"`
		NoOCR    bool `json:"no_ocr"`
	}{di.Furigana, di.NoOCR}
	return submitOnce(ctx, a, sha, options, queue.Params{Type: DocType, Name: filepath.Base(path), Input: in, Priority: o.Priority}, o.Force)
}

// exportDoc writes a finished conversion's Markdown to out (format "md").
func exportDoc(ctx context.Context, a *App, j job.Job, format, out string) error {
	if format != "md" && format != "markdown" {
		return job.Errorf(job.E014, "a conversion exports as md, not %q", format).
			WithJa(fmt.Sprintf("変換結果は md 形式で書き出せます（%q は使えません）。", format))
	}
	if j.Status != job.Succeeded && j.Status != job.Partial {
		return job.Errorf(job.E014, "job %d ended %s and has no converted document", j.ID, j.Status).
			WithJa(fmt.Sprintf("ジョブ %d は %s で終了したため、書き出せる変換結果がありません。", j.ID, j.Status))
	}
	var buf bytes.Buffer
	if err := docConverter(a).ExportMarkdown(ctx, j.Result, &buf); err != nil {
		return err
	}
	return writeDocFile(out, buf.Bytes())
}

// writeDocFile writes data to path through a temporary file in the same folder, so a reader
// never sees half a file.
func writeDocFile(path string, data []byte) error {
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

// DocWorkflow is the shipped workflow a conversion runs (assets/workflows/document-conversion.asl.json).
const DocWorkflow = "document-conversion"

// registerDoc adds the "convert" job type: a conversion job runs the document-conversion
// workflow (embedded, so always there) as its child (ingest → convert, or for a ZIP extract →
// Map of child conversions → collect) and reports what the workflow produced with the
// converter's own status and error code; it only waits, so it takes no worker slot.
func registerDoc(a *App, w *queue.Worker) {
	eng := FlowEngine(a)
	if eng == nil {
		return // the engine could not start, and FlowEngine has said why
	}
	w.Handle(DocType, docWorkflowHandler(a, eng), queue.TypeOptions{Orchestrator: true, Concurrency: 64})
}

// docWorkflowInput is the workflow's input; every field is always present because the
// workflow's paths name them.
type docWorkflowInput struct {
	Path     string `json:"path"`
	Force    bool   `json:"force"`
	Furigana bool   `json:"furigana"`
	NoOCR    bool   `json:"no_ocr"`
}

// docWorkflowHandler runs one conversion through the workflow, with the orchestrator. The
// execution is named after the job ("convert-ID"), so a job resumed after JobDesk stopped finds
// its execution again instead of starting a second one. A failed conversion ends with the
// converter's own coded error (E005 password-protected, E004 damaged, …), carried in the
// execution's cause, so a workflow run reads exactly like a direct one.
func docWorkflowHandler(a *App, eng *flow.Engine) job.Handler {
	return func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var in docjob.Input
		if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
			return nil, job.Errorf(job.E014, "the conversion job needs a file path").WithJa("変換ジョブにファイルのパスがありません。")
		}
		info, _ := job.InfoFrom(ctx)
		if in.Name == "" {
			in.Name = filepath.Base(in.Path)
		}
		wfIn, _ := json.Marshal(docWorkflowInput{Path: in.Path, Force: in.Force, Furigana: in.Furigana, NoOCR: in.NoOCR})
		r.Progress(1, "starting the document-conversion workflow")
		return orchestrator.Run(ctx, eng.Executions(), orchestrator.Spec{
			Workflow: DocWorkflow, Name: fmt.Sprintf("convert-%d", info.ID), Input: wfIn,
			What: "the conversion", WhatJa: "変換",
			Outcome: docOutcome,
		}, r)
	}
}

// docOutcome is a finished conversion's result: PARTIAL when the converter says partial.
func docOutcome(_ context.Context, x orchestrator.Execution) (json.RawMessage, error) {
	var res docjob.Result
	if err := json.Unmarshal(x.Output, &res); err != nil {
		return nil, job.Wrap(job.E015, err, "the document-conversion workflow returned no conversion result").
			WithJa("文書変換ワークフローの結果を読み取れませんでした。")
	}
	if res.Status == docjob.StatusPartial {
		return x.Output, job.PartialSuccess(x.Output, res.Reason)
	}
	return x.Output, nil
}
