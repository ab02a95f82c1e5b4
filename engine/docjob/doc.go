// Package docjob owns JobDesk's document conversion: it turns PDF, Word (DOCX), Excel (XLSX and
// 97-2003 XLS), PowerPoint (PPTX), CSV, plain text and ZIP archives into Markdown that a person or an AI model can read, offline
// and Japanese-correct. The same functions serve the desktop engine and the cloud worker, so a
// file converts to the same Markdown wherever it runs.
//
// The pieces:
//
//   - PDF text is read page by page (at most Options.MaxPages pages), with spaces put back from
//     the gaps between words placed one by one, composite fonts decoded through their ToUnicode
//     map, predefined or embedded CMaps and the Adobe-Japan1, -GB1, -CNS1 and -Korea1 tables
//     embedded from cmaps/ (pdfcid.go, pdfcmapstream.go), simple fonts through their ToUnicode
//     map and glyph names (pdfsimple.go), vertical writing read right to left, right-to-left
//     lines put in logical order (pdfbidi.go), and scanned pages read by OCR
//     when tesseract is installed (marked in the Markdown and in ocr_pages so figures get
//     checked). Text that is no language in some font (pdfplausible.go) is never reported as
//     converted: it is left out or read by OCR, and the conversion is partial.
//   - Office Open XML packages (DOCX, PPTX, XLSX charts) are read part by part through one
//     reader (ooxml.go) that bounds every part and the package's expanded size; pictures are
//     extracted beside the Markdown (Doc.Assets, written by the handler into NAME_SHA8_files/),
//     charts give their cached data as tables (chart.go), equations become LaTeX (omml.go).
//     Excel 97-2003 workbooks are read from their OLE2 container (cfb.go) by a BIFF8/BIFF5
//     reader (xls.go); sheets of either Excel format split into one table per block of cells.
//   - HTML pages become Markdown through one HTML path (html.go; pages over 4 MB in one pass,
//     htmlstream.go) that EPUB chapters (epub.go), mail bodies and feed items reuse; JSON, XML,
//     notebooks and RSS/Atom are rendered in data.go; EML (mail.go) and Outlook MSG (msg.go, on
//     the compound-file reader cfb.go) become a header list, the body and their attachments
//     converted as children; images are read by OCR (image.go).
//   - Detect decides a file's kind from its bytes (magic numbers, container contents), using the
//     name only to break ties, so a renamed file is still read correctly.
//   - Convert runs the converter for that kind under recover() and a deadline, and returns a
//     Doc (Markdown plus page count, method and per-page notes) or a *job.Error: E005 for
//     password-protected files, E004 for damaged or unsupported ones, E011 on timeout.
//   - ListZip / ExtractZip read an archive safely (decoded CP932 names, zip-slip rejection,
//     declared-size and count limits enforced while reading) so a workflow's Map can fan the
//     entries out as child conversions; ConvertZip converts them in-process instead.
//   - Converter.Handle is the "document-converter" function (Converter.Functions registers it):
//     it hashes the input (SHA-256), reuses a stored result for the same bytes, converter version
//     and options unless forced, writes the Markdown under the job's output location
//     (OUTPUT/documents/NAME_SHA8.md) and records ready / partial / failed. Its modes (ingest,
//     convert, extract, collect) are the Tasks of assets/workflows/document-conversion.asl.json,
//     where a ZIP's entries fan out through a Map as child conversions; the app runs that
//     workflow on the device, and the same definition and function deploy to Step Functions and
//     Lambda.
//   - The conversion job that runs that workflow is declared here once (job.go: Type, Workflow,
//     RunJob) and runs on the device's runtime (app/convertfamily) or the cloud's
//     (sync/cloudjobs).
//
// The converter keeps no state of its own, so it links into a Lambda binary: inputs and outputs
// are URIs of a blob store (engine/blob: this PC's files, or S3 objects in the cloud), and
// results are remembered through the small Cache interface declared here. Its implementations
// are docsqlite.Cache (the docjob_results table of the device's database, with its migrations)
// and BlobCache (content-addressed JSON objects, for where there is no database).
//
// Errors carry Step Functions names (ErrNamePassword, ErrNameDamaged, …) so a workflow's Catch
// can tell them apart, and ErrorCode maps a name back to its E-code.
package docjob

// Version is the converter version. A stored result is reused only when it was made by the same
// version, so bump it whenever the Markdown a converter writes changes.
const Version = "docjob/12"

// FunctionName is the job type and the Lambda function name of the converter; it is the same on
// the device and in the cloud so a workflow's Task Resource names it once.
const FunctionName = "document-converter"

// Limits from seed 003 (Job B, 3-5): a single file, the expanded total of an archive and the
// number of entries in one archive.
const (
	MaxFileSize   = 50 << 20  // 50 MB per file (input or archive entry)
	MaxTotalSize  = 100 << 20 // 100 MB expanded per archive, nested archives included
	MaxZipEntries = 50        // entries per archive (directories and skipped entries excluded)
	MaxZipDepth   = 3         // archives inside archives, counting the outermost as 1
)
