// Package csvjob owns JobDesk's CSV jobs (seed 004): reading a user-log CSV in any of the
// encodings and dialects Japanese offices produce, validating every row against a job schema,
// combining the rows per user, and reflecting the users into the csv_users table with a
// tolerance for bad rows. It also writes the result files (an errors CSV and an XLSX workbook).
//
// The work is split the way the seed's Step Functions workflow splits it, so one function serves
// the desktop engine and AWS Lambda alike (FunctionName, "csv-processor", with its event types;
// Processor.Functions gives it to the function registry):
//
//   - CSV_VALIDATION detects encoding, delimiter and header, counts the rows and cuts the file into
//     byte-range chunks at record boundaries. Rows never travel through workflow state: the chunks
//     are written to a small JSON manifest the workflow's Map reads with ItemReader.
//   - CSV_CHUNK_PROCESSING reads one byte range, validates its rows and adds them up per user; the
//     partial sums are staged (one entry per chunk, so a retry replaces, never adds).
//   - RESULT_AGGREGATION merges the staged chunks, applies the tolerance and, only when the file
//     passes, hands the distinct users to the Store with the execution's record; it writes the
//     result files.
//   - AUDIT_LOGGING and ERROR_HANDLING record outcomes and failures.
//
// The handler owns neither a database nor a disk, so it links into a Lambda binary: what it keeps
// between events goes to a Store it declares (package csvsqlite is the device's, on SQLite;
// BlobStore keeps the same state as objects for a worker without a database), and every file it
// reads or writes goes through engine/blob by URI — the input (a path today, s3:// in the
// cloud), the chunks' byte ranges, and the work and result files under the job's output
// location (job.Info.Output, else Processor.Output) in the folder csv/<execution>. The seed's
// events name objects by bucket and key; Object converts between those and URIs.
//
// The app runs a CSV job as an execution of assets/workflows/csv-processing.asl.json, whose Tasks
// call this function through arn:aws:states:::lambda:invoke (the file deploys unchanged to Step
// Functions); there is no other path. That CSV job is declared here once (job.go: JobInput,
// Workflow, RunJob) and runs on the device's runtime (app/csvfamily) or the cloud's
// (sync/cloudjobs). Detect recognises a dropped CSV file (by extension or
// content), FileSHA256 identifies a file dropped twice, and Processor.ExecutionError turns a
// failed execution back into the seed's coded error. The reader is schema-specific and
// single-pass over raw bytes: Shift_JIS and EUC-JP never contain the bytes , " CR LF inside a
// multibyte character, so rows are split without transcoding and only the header, text values
// and error messages are decoded.
package csvjob
