package docjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"jobdesk/engine/blob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// Modes of the converter job (Input.Mode). The workflow in
// assets/workflows/document-conversion.asl.json chains them; a plain run uses ModeConvert.
const (
	ModeConvert = "convert" // hash, reuse or convert, store the Markdown (default)
	ModeIngest  = "ingest"  // hash, detect and look up the cache only
	ModeExtract = "extract" // ZIP: write the safe entries for a Map to fan out
	ModeCollect = "collect" // ZIP: join the Map's child results into one document
)

// Input is the converter job's input.
type Input struct {
	Path     string `json:"path"`               // the file to convert: a path or URI of the blob store
	Name     string `json:"name,omitempty"`     // display name (default: the file's base name)
	Force    bool   `json:"force,omitempty"`    // convert again even when a stored result exists
	Furigana bool   `json:"furigana,omitempty"` // DOCX: write ruby readings as 漢字(かんじ)
	NoOCR    bool   `json:"no_ocr,omitempty"`   // PDF and images: never OCR scanned pages or images
	Mode     string `json:"mode,omitempty"`     // ModeConvert (default), ModeIngest, ModeExtract, ModeCollect
	Depth    int    `json:"depth,omitempty"`    // archive nesting level of this file (Map children: parent+1)
	// MaxPages caps the PDF pages read from one document (default DefaultMaxPages); a longer
	// document converts partially, the result naming the limit.
	MaxPages int `json:"max_pages,omitempty"`
	// TimeoutSeconds bounds the conversion (default DefaultTimeout).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
	// Children are the Map's child results (ModeCollect); Rejected the entries ExtractZip refused.
	Children []json.RawMessage `json:"children,omitempty"`
	Rejected []Child           `json:"rejected,omitempty"`
}

// WorkflowInput is the input of the document-conversion workflow
// (assets/workflows/document-conversion.asl.json), on the device and in the cloud. Every field is
// always present because the workflow's paths name them.
type WorkflowInput struct {
	Path     string `json:"path"`
	Force    bool   `json:"force"`
	Furigana bool   `json:"furigana"`
	NoOCR    bool   `json:"no_ocr"`
	MaxPages int    `json:"max_pages"` // 0: DefaultMaxPages
}

// WorkflowInput is the workflow input that converts the file at uri with in's options.
func (in Input) WorkflowInput(uri string) WorkflowInput {
	return WorkflowInput{Path: uri, Force: in.Force, Furigana: in.Furigana, NoOCR: in.NoOCR, MaxPages: in.MaxPages}
}

// Result is what a conversion records (seed 003, Job C output, plus JobDesk's fields).
type Result struct {
	Status       Status     `json:"status"`              // ready / partial / failed
	Reason       string     `json:"reason,omitempty"`    // why partial or failed
	ReasonJa     string     `json:"reason_ja,omitempty"` // the reason in Japanese
	Name         string     `json:"name"`
	Path         string     `json:"path"`
	Kind         Kind       `json:"kind"`
	SHA256       string     `json:"sha256"`
	Version      string     `json:"converter_version"`
	PageCount    int        `json:"page_count"`
	TextLength   int        `json:"extracted_text_length"` // characters of Markdown
	Method       Method     `json:"extraction_method,omitempty"`
	OutputPath   string     `json:"output_path,omitempty"`
	Cached       bool       `json:"cached"`
	Encoding     string     `json:"encoding,omitempty"`
	Rows         int        `json:"rows,omitempty"`
	NoTextPages  []int      `json:"no_text_pages,omitempty"`
	OCRPages     []int      `json:"ocr_pages,omitempty"`
	DamagedPages []int      `json:"damaged_pages,omitempty"`
	PageLimit    int        `json:"page_limit,omitempty"` // only the first PageLimit pages were read
	Notes        []string   `json:"notes,omitempty"`
	Children     []Child    `json:"children,omitempty"`
	Entries      []Entry    `json:"entries,omitempty"` // ModeExtract: the files for the Map
	Depth        int        `json:"depth,omitempty"`
	Error        *job.Error `json:"error,omitempty"` // failed results kept in the cache

	// Mail is a mail's header fields (EML, MSG), for a window's view of the mail.
	Mail *MailHeader `json:"mail,omitempty"`
}

// ExtractOutput is the result of ModeExtract: the archive's Result with the safe entries written
// for the Map (entries) and the refused ones (rejected), both always present.
type ExtractOutput struct {
	*Result
	Entries  []Entry `json:"entries"`
	Rejected []Child `json:"rejected"`
}

// Converter is the document-converter function. It reads its input and writes its Markdown
// through a blob store and remembers results in a Cache, so it knows neither SQLite nor the local
// disk: on the device the cache is the database (package docsqlite) and the store the PC's files;
// in the cloud they are objects in S3.
type Converter struct {
	// Cache keeps results for reuse by SHA-256, Version and options (nil: convert every time).
	Cache Cache
	// Blobs reads inputs and writes outputs (nil: blob.Local{}, this machine's absolute paths).
	Blobs blob.Store
}

// NewConverter returns a converter caching results in cache (nil: no cache) and reading and
// writing files through blobs (nil: this machine's files).
func NewConverter(cache Cache, blobs blob.Store) *Converter {
	return &Converter{Cache: cache, Blobs: blobs}
}

// Functions returns the converter's functions for the registry: FunctionName, which every Task
// of the document-conversion workflow calls. On the device two conversions run at once (each may
// hold a 50 MB file in memory, and a laptop stays responsive) for at most 15 minutes each (seed
// 003 gives Job C 15 minutes).
func (c *Converter) Functions() []functions.Function {
	return []functions.Function{{Name: FunctionName, Handler: c.Handle,
		Options: functions.Options{Concurrency: 2, Timeout: 15 * time.Minute}}}
}

// blobs returns the store of inputs and outputs.
func (c *Converter) blobs() blob.Store {
	if c.Blobs == nil {
		return blob.Local{}
	}
	return c.Blobs
}

// Handle runs one conversion job: see Input and Result. It ends SUCCEEDED for ready, PARTIAL
// (job.PartialSuccess) for partial, and FAILED with the *job.Error for failed.
func (c *Converter) Handle(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	if r == nil {
		r = job.Discard
	}
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
		return nil, job.Errorf(job.E014, "the conversion job needs a file path").WithJa("変換ジョブにファイルのパスがありません。")
	}
	if in.Name == "" {
		in.Name = filepath.Base(in.Path)
	}
	if in.Mode == ModeCollect {
		return c.collect(ctx, in, r)
	}
	data, err := c.readInput(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		// before the cache: an older converter stored empty files as ready
		return nil, errEmpty()
	}
	sum := sha256.Sum256(data)
	res := &Result{Name: in.Name, Path: in.Path, SHA256: hex.EncodeToString(sum[:]), Version: Version,
		Kind: Detect(data, in.Name), Depth: in.Depth}
	key := cacheKey(res.SHA256, in)
	r.Progress(2, "hashed "+in.Name)
	if !in.Force && c.Cache != nil && in.Mode != ModeExtract { // extract always writes the entries for the Map
		// The kind can depend on the name (an encrypted Office file is Word or Excel by its
		// extension, text is CSV by .csv): a stored result of the same bytes read as another
		// kind is not this file's, so it is converted again.
		if cached := c.lookup(ctx, key); cached != nil && cached.Kind == res.Kind {
			cached.Cached, cached.Path, cached.Name, cached.Depth = true, in.Path, in.Name, in.Depth
			if in.Mode == ModeIngest {
				return json.Marshal(cached)
			}
			if c.ownMarkdown(ctx, cached, in) {
				return finish(cached)
			}
		}
	}
	switch in.Mode {
	case ModeIngest:
		return json.Marshal(res)
	case ModeExtract:
		if res.Kind != KindZIP {
			return nil, job.Errorf(job.E014, "%s is not a ZIP archive (%s)", in.Name, res.Kind.Label()).
				WithJa(fmt.Sprintf("%s はZIPファイルではありません（%s）。", in.Name, res.Kind.LabelJa()))
		}
		l, err := ExtractZip(ctx, data, c.blobs(), outputURI(outputPrefix(ctx), "entries", res.SHA256[:16]))
		if err != nil {
			return nil, err
		}
		res.Status, res.Entries, res.Children, res.Method = StatusReady, l.Entries, l.Rejected, MethodNative
		if len(l.Skipped) > 0 {
			res.Notes = append(res.Notes, "skipped: "+strings.Join(l.Skipped, ", "))
		}
		// entries and rejected are always present (possibly empty): a workflow's JSONPath to a
		// missing field would fail the execution.
		out := ExtractOutput{Result: res, Entries: l.Entries, Rejected: l.Rejected}
		if out.Entries == nil {
			out.Entries = []Entry{}
		}
		if out.Rejected == nil {
			out.Rejected = []Child{}
		}
		return json.Marshal(out)
	case "", ModeConvert:
	default:
		return nil, job.Errorf(job.E014, "unknown conversion mode %q", in.Mode).WithJa(fmt.Sprintf("変換モード %q は使えません。", in.Mode))
	}
	opt := Options{Furigana: in.Furigana, NoOCR: in.NoOCR, MaxPages: in.MaxPages, depth: in.Depth,
		Progress: func(p float64, m string) { r.Progress(5+p*0.9, m) }}
	if in.TimeoutSeconds > 0 {
		opt.Timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	if in.Depth > 0 && res.Kind == KindZIP && in.Depth >= MaxZipDepth {
		opt.depth = in.Depth
	}
	opt.assetDir = AssetDir(in.Name, res.SHA256)
	mdName := markdownName(in)
	d, err := convertSafely(ctx, data, in.Name, res.Kind, opt, func() (blob.Writer, error) {
		return c.blobs().Create(ctx, markdownURI(ctx, mdName, res.SHA256))
	})
	if err != nil {
		je := job.AsError(err)
		if je != nil && !je.Retryable && (je.Code == job.E003 || je.Code == job.E004 || je.Code == job.E005 || je.Code == job.E006) {
			res.Status, res.Reason, res.ReasonJa, res.Error = StatusFailed, je.Message, je.MessageJa, je
			c.store(ctx, key, res)
		}
		return nil, err
	}
	defer d.release()
	res.fill(d)
	for _, a := range d.Assets {
		uri := outputURI(outputPrefix(ctx), "documents", opt.assetDir, a.Name)
		if err := blob.WriteAll(ctx, c.blobs(), uri, a.Data); err != nil {
			return nil, job.Wrap(job.E009, err, "could not write a picture beside the Markdown file").WithJa("Markdownファイルの横に画像を書き込めませんでした。")
		}
	}
	out, err := c.writeMarkdown(ctx, mdName, res.SHA256, d)
	if err != nil {
		return nil, err
	}
	res.OutputPath = out
	c.store(ctx, key, res)
	r.Progress(100, string(res.Status))
	return finish(res)
}

func (res *Result) fill(d *Doc) {
	res.Kind, res.PageCount, res.Method = d.Kind, d.Pages, d.Method
	res.TextLength = d.chars()
	res.Encoding, res.Rows, res.NoTextPages, res.OCRPages, res.DamagedPages = d.Encoding, d.Rows, d.NoTextPages, d.OCRPages, d.DamagedPages
	res.Notes, res.Children, res.PageLimit = d.Notes, d.Children, d.PageLimit
	res.Mail = d.Mail
	res.Status, res.Reason, res.ReasonJa = d.status()
	if res.Status == StatusPartial && len(d.NoTextPages) > 0 && len(d.Notes) > 0 {
		for _, n := range d.Notes {
			if strings.HasPrefix(n, "OCR is not available") {
				res.Reason += "; OCR is not available"
				res.ReasonJa += "。OCR を利用できません"
			}
		}
	}
}

// finish turns a result into the handler's return: PARTIAL through job.PartialSuccess, a stored
// failure back into its error.
func finish(res *Result) (json.RawMessage, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	switch res.Status {
	case StatusPartial:
		return b, job.PartialSuccess(b, res.Reason)
	case StatusFailed:
		if res.Error != nil {
			return nil, res.Error
		}
		return nil, job.Errorf(job.E006, "%s", res.Reason).WithJa("テキストを抽出できませんでした。")
	}
	return b, nil
}

// readInput reads the whole input at uri, refusing a folder and anything over MaxFileSize.
func (c *Converter) readInput(ctx context.Context, uri string) ([]byte, error) {
	cannotRead := func(err error) error {
		if blob.InUse(err) {
			return blob.InUseError(uri, err)
		}
		return job.Wrap(job.E004, err, fmt.Sprintf("the file %s cannot be read", uri)).WithJa(fmt.Sprintf("ファイル %s を読み取れません。", uri))
	}
	s := c.blobs()
	st, err := s.Stat(ctx, uri)
	if errors.Is(err, blob.ErrNotExist) {
		// No object by that name. A folder is not an object either, but a local one opens:
		// that tells "is a folder" from "does not exist" without asking the disk directly.
		if f, oerr := s.Open(ctx, uri); oerr == nil {
			f.Close()
			return nil, job.Errorf(job.E014, "%s is a folder, not a file", uri).WithJa(fmt.Sprintf("%s はフォルダーです。ファイルを指定してください。", uri))
		}
		return nil, job.Wrap(job.E014, err, fmt.Sprintf("the file %s does not exist", uri)).WithJa(fmt.Sprintf("ファイル %s が見つかりません。", uri))
	}
	if err != nil {
		return nil, cannotRead(err)
	}
	if st.Size > MaxFileSize {
		return nil, errTooLarge("the file", "ファイル", st.Size, MaxFileSize)
	}
	f, err := s.Open(ctx, uri)
	if err != nil {
		return nil, cannotRead(err)
	}
	defer f.Close()
	buf := bytes.NewBuffer(make([]byte, 0, st.Size+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileSize+1)); err != nil {
		return nil, job.Wrap(job.E004, err, "the file could not be read to the end").WithJa("ファイルを最後まで読み取れませんでした。")
	}
	if buf.Len() > MaxFileSize {
		return nil, errTooLarge("the file", "ファイル", int64(buf.Len()), MaxFileSize)
	}
	return buf.Bytes(), nil
}

// outputPrefix is where a job's files go: the job's output location (job.Info.Output: the data
// folder on the device, an S3 prefix in the cloud), or the system temp folder for a call that
// carries none.
func outputPrefix(ctx context.Context) string {
	if info, ok := job.InfoFrom(ctx); ok && info.Output != "" {
		return info.Output
	}
	return filepath.Join(os.TempDir(), "jobdesk")
}

// outputURI joins parts to an output prefix. A local path stays a clean path in the system's
// own form (what the window and the CLI show); other URIs are joined with slashes.
func outputURI(prefix string, parts ...string) string {
	u := blob.Join(prefix, parts...)
	if blob.Scheme(u) == "file" && !strings.HasPrefix(strings.ToLower(u), "file://") {
		return filepath.Clean(u)
	}
	return u
}

// MaxOutputName is the longest file name OutputName and ExtractZip make, in bytes. File systems
// allow 255 bytes a name (Linux, macOS; NTFS 255 UTF-16 units), and an atomic write first
// writes its temporary file under a name 16 bytes longer ("." + name + ".NNNNNNNNNN.tmp").
const MaxOutputName = 255 - 16

// OutputName is the Markdown file name for an input: its name without extension, the first 8
// hex digits of its SHA-256 (so different files of one name never overwrite each other) and .md.
// A name too long for that is shortened at a character boundary, keeping the hash and .md, so
// the result never exceeds MaxOutputName bytes.
func OutputName(name, sha string) string {
	base := filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	stem = strings.Map(func(r rune) rune {
		if r < 0x20 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, stem)
	if stem == "" || stem == "." || stem == ".." {
		stem = "document"
	}
	if len(sha) > 8 {
		sha = sha[:8]
	}
	return cutUTF8(stem, MaxOutputName-len("_"+sha+".md")) + "_" + sha + ".md"
}

// cutUTF8 returns s cut to at most n bytes, never inside a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// fitName returns the file name base with suffix put before its extension (" (2)" in
// "a (2).txt"), its stem shortened at a character boundary so that the whole takes at most
// MaxOutputName bytes. An extension too long to keep is cut with the stem.
func fitName(base, suffix string) string {
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if len(ext)+len(suffix) >= MaxOutputName/2 {
		stem, ext = base, ""
	}
	return cutUTF8(stem, MaxOutputName-len(suffix)-len(ext)) + suffix + ext
}

// markdownName is the name a conversion's Markdown file is named after: the name of the file a
// person gave; for an archive's entry (Depth > 0), the name of its extracted file, which
// ExtractZip made unique within the archive in archive order ("a.txt", "a (2).txt"), so every
// entry writes a Markdown file of its own whatever order the entries are converted in.
func markdownName(in Input) string {
	if in.Depth > 0 && in.Path != "" {
		return path.Base(filepath.ToSlash(in.Path))
	}
	return in.Name
}

// ownMarkdown makes a stored result (of the same bytes, maybe converted under another name)
// an archive entry's own: when its Markdown is not at the entry's own file name it is copied
// there, so which files a ZIP's conversion writes never depends on which of its entries with
// the same bytes converted first (the Map runs them at once). A file a person gave keeps the
// stored result's file, as before. It reports false when the stored Markdown cannot be had
// (convert again).
func (c *Converter) ownMarkdown(ctx context.Context, res *Result, in Input) bool {
	if in.Depth == 0 || res.Status == StatusFailed || res.OutputPath == "" {
		return true
	}
	own := outputURI(outputPrefix(ctx), "documents", OutputName(markdownName(in), res.SHA256))
	if res.OutputPath == own {
		return true
	}
	md, err := blob.ReadAll(ctx, c.blobs(), res.OutputPath)
	if err != nil || blob.WriteAll(ctx, c.blobs(), own, md) != nil {
		return false
	}
	res.OutputPath = own
	return true
}

// AssetDir is the folder beside a conversion's Markdown (OutputName without ".md", then
// "_files") that holds the pictures it links to.
func AssetDir(name, sha string) string {
	return strings.TrimSuffix(OutputName(name, sha), ".md") + "_files"
}

// markdownURI is where the Markdown of the file name (markdownName) with the bytes sha goes:
// OUTPUT/documents/NAME_SHA8.md.
func markdownURI(ctx context.Context, name, sha string) string {
	return outputURI(outputPrefix(ctx), "documents", OutputName(name, sha))
}

// writeMarkdown writes d's Markdown atomically as OUTPUT/documents/NAME_SHA8.md and returns its
// URI; a Markdown streamed into that file as it was made is committed.
func (c *Converter) writeMarkdown(ctx context.Context, name, sha string, d *Doc) (string, error) {
	uri := markdownURI(ctx, name, sha)
	var err error
	if sp := d.spooled; sp != nil && sp.out != nil {
		err = sp.out.Commit()
	} else {
		var r io.Reader
		if r, err = d.markdownReader(); err == nil {
			_, err = blob.Copy(ctx, c.blobs(), uri, r)
		}
	}
	if err != nil {
		return "", job.Wrap(job.E009, err, "could not write the Markdown file").WithJa("Markdownファイルを書き込めませんでした。")
	}
	return uri, nil
}

// cacheKey is the cache key of a conversion of the bytes sha with in's options.
func cacheKey(sha string, in Input) Key {
	opts := fmt.Sprintf("furigana=%t;ocr=%t", in.Furigana, !in.NoOCR)
	if in.MaxPages > 0 && in.MaxPages != DefaultMaxPages {
		opts += fmt.Sprintf(";max_pages=%d", in.MaxPages)
	}
	return Key{SHA256: sha, Version: Version, Options: opts}
}

// lookup returns the stored result for k, or nil when none is usable (not stored, unreadable,
// or its Markdown file has gone).
func (c *Converter) lookup(ctx context.Context, k Key) *Result {
	res, found, err := c.Cache.Get(ctx, k)
	if err != nil || !found {
		return nil
	}
	if res.Status != StatusFailed {
		if _, err := c.blobs().Stat(ctx, res.OutputPath); err != nil {
			return nil
		}
	}
	return &res
}

// store keeps res for later reuse; a failure to write the cache does not fail the conversion,
// and a cancelled job still records what it finished.
func (c *Converter) store(ctx context.Context, k Key, res *Result) {
	if c.Cache == nil {
		return
	}
	_ = c.Cache.Put(context.WithoutCancel(ctx), k, *res)
}

// collect joins a Map's child results (ModeCollect) into one Markdown file for the archive and
// ends PARTIAL listing the children that failed. The archive's result is stored under its
// SHA-256 and options (Input.Furigana / NoOCR, which the workflow passes to Collect as to
// Ingest) like a direct conversion's.
func (c *Converter) collect(ctx context.Context, in Input, r job.Reporter) (json.RawMessage, error) {
	res := &Result{Name: in.Name, Path: in.Path, Kind: KindZIP, Version: Version, Method: MethodNative, Depth: in.Depth}
	if data, err := c.readInput(ctx, in.Path); err == nil {
		sum := sha256.Sum256(data)
		res.SHA256 = hex.EncodeToString(sum[:])
	}
	var b strings.Builder
	ok := 0
	for _, raw := range in.Children {
		var cr Result
		if err := json.Unmarshal(raw, &cr); err != nil || (cr.Name == "" && cr.Path == "") {
			// a Catch output: {"Error": …, "Cause": …} or a job.Error
			var caught struct {
				Error, Cause string
				Name         string `json:"name"`
			}
			_ = json.Unmarshal(raw, &caught)
			res.Children = append(res.Children, caughtChild(caught.Name, caught.Error, caught.Cause))
			continue
		}
		child := Child{Name: cr.Name, Kind: cr.Kind, Status: cr.Status, Reason: cr.Reason, ReasonJa: cr.ReasonJa, Chars: cr.TextLength}
		if cr.Error != nil {
			child.Code = string(cr.Error.Code)
		}
		if cr.Status != StatusFailed && cr.OutputPath != "" {
			md, err := blob.ReadAll(ctx, c.blobs(), cr.OutputPath)
			if err == nil {
				fmt.Fprintf(&b, "# %s\n\n%s\n\n", escapeInline(cr.Name), strings.TrimSpace(string(md)))
				res.PageCount += cr.PageCount
				ok++
			} else {
				child.Status, child.Reason = StatusFailed, "the converted file is missing"
			}
		}
		res.Children = append(res.Children, child)
	}
	res.Children = append(res.Children, in.Rejected...)
	key := cacheKey(res.SHA256, in)
	if ok == 0 {
		for _, ch := range res.Children {
			if ch.Status == StatusFailed {
				je := errNothingConverted(ch)
				if res.SHA256 != "" && (je.Code == job.E003 || je.Code == job.E004 || je.Code == job.E005 || je.Code == job.E006) {
					res.Status, res.Reason, res.ReasonJa, res.Error = StatusFailed, je.Message, je.MessageJa, je
					c.store(ctx, key, res)
				}
				return nil, je
			}
		}
		return nil, job.Errorf(job.E004, "the ZIP archive holds no files to convert").
			WithJa("ZIPファイルの中に変換できるファイルがありません。").WithName(ErrNameNothing)
	}
	d := &Doc{Kind: KindZIP, Markdown: b.String(), Pages: res.PageCount, Method: MethodNative, Children: res.Children}
	for _, ch := range d.Children {
		if ch.Status != StatusReady {
			d.Method = MethodPartial
		}
	}
	res.fill(d)
	sha := res.SHA256
	if sha == "" {
		s := sha256.Sum256([]byte(d.Markdown))
		sha = hex.EncodeToString(s[:])
	}
	out, err := c.writeMarkdown(ctx, in.Name, sha, d)
	if err != nil {
		return nil, err
	}
	res.OutputPath = out
	if res.SHA256 != "" {
		// The archive's own result, so converting the same bytes again reuses it (Ingest finds
		// it) unless forced, as for single files.
		c.store(ctx, key, res)
	}
	r.Progress(100, string(res.Status))
	return finish(res)
}

// ExportMarkdown writes the Markdown of a finished conversion job to w, for
// `jobdesk export ID --format md -o FILE`: result is the job's stored result JSON.
func (c *Converter) ExportMarkdown(ctx context.Context, result json.RawMessage, w io.Writer) error {
	var res Result
	if len(result) == 0 || json.Unmarshal(result, &res) != nil || res.OutputPath == "" {
		return job.Errorf(job.E014, "this job has no converted document to export").WithJa("このジョブには書き出せる変換結果がありません。")
	}
	f, err := c.blobs().Open(ctx, res.OutputPath)
	if err != nil {
		return job.Wrap(job.E014, err, fmt.Sprintf("the converted file %s is missing; convert the file again", res.OutputPath)).
			WithJa("変換結果のファイルが見つかりません。もう一度変換してください。")
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return job.Wrap(job.E009, err, "could not write the exported document").WithJa("書き出しに失敗しました。")
	}
	return nil
}

// ExportFormats lists the formats ExportMarkdown serves (the CLI's --format values).
var ExportFormats = []string{"md"}

// caughtChild turns a Map iteration's caught failure into a failed child. The code comes from
// Cause when it is a *job.Error as JSON or Lambda's {"errorMessage": "E005: …"}, else from the
// error name (ErrorCode); anything else is kept as it is under E015 (workflow error).
func caughtChild(name, errName, cause string) Child {
	var je job.Error
	if json.Unmarshal([]byte(cause), &je) == nil && je.Code != "" {
		return Child{Name: name, Status: StatusFailed, Code: string(je.Code), Reason: je.Message, ReasonJa: je.MessageJa}
	}
	var lambda struct {
		ErrorMessage string `json:"errorMessage"`
	}
	msg := cause
	if json.Unmarshal([]byte(cause), &lambda) == nil && lambda.ErrorMessage != "" {
		msg = lambda.ErrorMessage
	}
	if code, rest, ok := strings.Cut(msg, ": "); ok && len(code) == 4 && code[0] == 'E' {
		if _, known := job.Codes[job.Code(code)]; known {
			return Child{Name: name, Status: StatusFailed, Code: code, Reason: rest}
		}
	}
	if code := ErrorCode(errName); code != "" {
		return Child{Name: name, Status: StatusFailed, Code: string(code), Reason: msg}
	}
	return Child{Name: name, Status: StatusFailed, Code: string(job.E015), Reason: strings.TrimSpace(errName + " " + msg)}
}
