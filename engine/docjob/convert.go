package docjob

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/mdtext"
)

// Status is a conversion's outcome in seed 003's words (Job C, 4-5). It maps to the job status:
// ready → SUCCEEDED, partial → PARTIAL, failed → FAILED.
type Status string

// Conversion statuses.
const (
	StatusReady   Status = "ready"   // every page / sheet / entry converted
	StatusPartial Status = "partial" // some text came out, some did not (scanned pages, failed entries)
	StatusFailed  Status = "failed"  // nothing usable; the error says why
)

// Method is how the text was obtained (seed 003 extraction_method).
type Method string

// Extraction methods.
const (
	MethodNative  Method = "NATIVE"  // from the file's own text
	MethodOCR     Method = "OCR"     // some pages read by OCR
	MethodPartial Method = "PARTIAL" // some pages had no text and no OCR could read them
)

// DefaultTimeout is the deadline of one conversion when Options.Timeout is zero. Seed 003 gives
// Job C 15 minutes; a single document gets a third of that so an archive's entries fit.
const DefaultTimeout = 5 * time.Minute

// DefaultMaxPages is how many pages of one PDF are read when Options.MaxPages is zero. A longer
// document converts partially (its first DefaultMaxPages pages, the result naming the limit), so a
// file of hundreds of thousands of pages cannot hold a worker for its whole deadline.
const DefaultMaxPages = 2000

// maxPages is the page limit of o.
func (o Options) maxPages() int {
	if o.MaxPages > 0 {
		return o.MaxPages
	}
	return DefaultMaxPages
}

// Options tune a conversion. The zero value is the default.
type Options struct {
	// Timeout bounds one conversion (DefaultTimeout when zero); exceeding it gives E011.
	Timeout time.Duration
	// Furigana writes ruby readings after their base text, as 漢字(かんじ); off by default.
	Furigana bool
	// NoOCR turns OCR off (scanned PDF pages, images) even when tesseract with Japanese is
	// installed.
	NoOCR bool
	// MaxPages caps the PDF pages read from one document (DefaultMaxPages when zero); the pages
	// after it are left out and the conversion is partial, naming the limit.
	MaxPages int
	// Progress, when set, receives progress of long conversions (pages done, entries done).
	Progress func(percent float64, message string)

	// assetDir is the folder, relative to the Markdown, that pictures are extracted into and
	// linked from (set by the handler); empty: they are linked by name alone, as files beside
	// the Markdown (Doc.Assets).
	assetDir string
	// noAssets: no pictures are extracted (an archive's entry, a mail's attachment, whose
	// Markdown goes into their container's); a picture's alt text stands in for it.
	noAssets bool

	depth  int    // archive nesting level of this file (0 = top level)
	budget *int64 // remaining expanded bytes shared by an archive and its nested archives
}

// Doc is a converted document: the Markdown and what a result records about it.
type Doc struct {
	Kind     Kind   `json:"kind"`
	Markdown string `json:"-"`
	Pages    int    `json:"page_count"` // PDF pages, sheets, 1 for other single documents
	Method   Method `json:"method"`
	Encoding string `json:"encoding,omitempty"` // CSV / text: the detected encoding
	Rows     int    `json:"rows,omitempty"`     // CSV / XLSX: rows written
	// NoTextPages lists the 1-based PDF pages that had no text layer (scans) and no OCR text.
	NoTextPages []int `json:"no_text_pages,omitempty"`
	// DamagedPages lists the 1-based PDF pages whose content could not be parsed.
	DamagedPages []int `json:"damaged_pages,omitempty"`
	// TruncatedPages lists the 1-based PDF pages that show more text than is read (a content
	// stream of millions of strings, more annotations than are read); what was read is kept.
	TruncatedPages []int `json:"truncated_pages,omitempty"`
	// PageLimit is the page limit (Options.MaxPages) when the document has more pages than it and
	// only the first PageLimit were read; 0 when every page was read.
	PageLimit int `json:"page_limit,omitempty"`
	// OCRPages lists the pages whose text came from OCR.
	OCRPages []int `json:"ocr_pages,omitempty"`
	// UnreadablePages lists the PDF pages whose text layer is not readable text in some font
	// (mojibake), with the fonts; their text in those fonts is never reported as converted.
	UnreadablePages []UnreadablePage `json:"unreadable_pages,omitempty"`
	// BadBytes counts the bytes of a UTF-8 text or CSV file that could not be read and were
	// replaced with U+FFFD (the conversion is then partial).
	BadBytes int `json:"bad_bytes,omitempty"`
	// Notes are remarks for people: OCR not available, hidden sheets, skipped entries.
	Notes []string `json:"notes,omitempty"`
	// Assets are the pictures extracted beside the Markdown (PPTX, DOCX), linked from it as
	// assetDir/Name (the handler's folder, which it writes them into), or as Name alone when
	// Convert is called without one.
	Assets []Asset `json:"-"`
	// Children are an archive's entries and how each converted.
	Children []Child `json:"children,omitempty"`
	// Mail is a mail's header fields (EML, MSG); nil for other documents.
	Mail *MailHeader `json:"mail,omitempty"`
	// spooled, when not nil, holds the Markdown out of memory instead of Markdown (an XML
	// document converted for the handler; see convertSafely).
	spooled *spooled
}

// MailHeader is a mail's header fields as people read them (decoded, on one line each).
type MailHeader struct {
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Cc      string `json:"cc,omitempty"`
	Date    string `json:"date,omitempty"`
	Subject string `json:"subject,omitempty"`
}

// Child is one archive entry's conversion outcome.
type Child struct {
	Name   string `json:"name"`             // decoded entry name
	Kind   Kind   `json:"kind,omitempty"`   // detected kind
	Status Status `json:"status"`           // ready / partial / failed
	Code   string `json:"code,omitempty"`   // error code when failed
	Reason string `json:"reason,omitempty"` // why it failed or is partial
	// ReasonJa is Reason in Japanese (when known).
	ReasonJa string `json:"reason_ja,omitempty"`
	Chars    int    `json:"text_length"` // characters of Markdown produced
}

// Status says whether d is ready or partial, and Reason why it is partial.
func (d *Doc) Status() (Status, string) {
	st, en, _ := d.status()
	return st, en
}

// ReasonJa is the Japanese sentence of why d is partial ("" when it is ready).
func (d *Doc) ReasonJa() string {
	_, _, ja := d.status()
	return ja
}

func (d *Doc) status() (st Status, en, ja string) {
	var why, whyJa []string
	if len(d.NoTextPages) > 0 {
		if strings.TrimSpace(d.Markdown) == "" || onlyPageMarkers(d) {
			why = append(why, "scanned — no text layer")
			whyJa = append(whyJa, "スキャン画像のみでテキストがありません")
		} else {
			why = append(why, fmt.Sprintf("pages without a text layer: %s", intList(d.NoTextPages)))
			whyJa = append(whyJa, fmt.Sprintf("テキストのないページ: %s", intList(d.NoTextPages)))
		}
	}
	if len(d.DamagedPages) > 0 {
		why = append(why, fmt.Sprintf("damaged pages that could not be read: %s", intList(d.DamagedPages)))
		whyJa = append(whyJa, fmt.Sprintf("破損していて読み取れなかったページ: %s", intList(d.DamagedPages)))
	}
	if len(d.TruncatedPages) > 0 {
		why = append(why, fmt.Sprintf("pages with more text than is read (more strings, form fields or notes than JobDesk reads; what was read is kept): %s", intList(d.TruncatedPages)))
		whyJa = append(whyJa, fmt.Sprintf("文字・フォーム・注釈が多すぎるため一部だけを読み取ったページ: %s", intList(d.TruncatedPages)))
	}
	if d.PageLimit > 0 {
		why = append(why, fmt.Sprintf("only the first %d pages were read (the limit is %d pages per document)", d.PageLimit, d.PageLimit))
		whyJa = append(whyJa, fmt.Sprintf("先頭の %d ページだけを読み取りました（1 文書あたりの上限は %d ページです）", d.PageLimit, d.PageLimit))
	}
	if len(d.UnreadablePages) > 0 {
		en, ja := unreadableReason(d.UnreadablePages)
		why, whyJa = append(why, en), append(whyJa, ja)
	}
	if d.BadBytes > 0 {
		unit, verb := "bytes", "were"
		if d.BadBytes == 1 {
			unit, verb = "byte", "was"
		}
		why = append(why, fmt.Sprintf("%d %s could not be read as UTF-8 and %s replaced with �", d.BadBytes, unit, verb))
		whyJa = append(whyJa, fmt.Sprintf("UTF-8 として読み取れない %d バイトを � に置き換えました", d.BadBytes))
	}
	failed := 0
	var names []string
	for _, c := range d.Children {
		if c.Status == StatusFailed {
			failed++
			names = append(names, c.Name)
		} else if c.Status == StatusPartial {
			names = append(names, c.Name+" (partial)")
		}
	}
	if len(names) > 0 {
		why = append(why, fmt.Sprintf("%d of %d entries not fully converted: %s", len(names), len(d.Children), strings.Join(names, ", ")))
		whyJa = append(whyJa, fmt.Sprintf("%d 件中 %d 件のファイルを完全には変換できませんでした: %s", len(d.Children), len(names),
			strings.ReplaceAll(strings.Join(names, "、"), " (partial)", "（一部）")))
	}
	if len(why) == 0 {
		return StatusReady, "", ""
	}
	return StatusPartial, strings.Join(why, "; "), strings.Join(whyJa, "。")
}

// onlyPageMarkers reports whether d's Markdown holds nothing but page markers and notes.
func onlyPageMarkers(d *Doc) bool {
	for _, l := range strings.Split(d.Markdown, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !mdtext.PageMarker.MatchString(l) && !strings.HasPrefix(l, "> ") {
			return false
		}
	}
	return true
}

func intList(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}

// Convert detects data's kind and converts it to Markdown. name is the file name (for the title,
// for tie-breaking detection and for archive entries). Every failure is a *job.Error: E003 too
// large, E004 damaged or unsupported, E005 password-protected, E011 past the deadline, E013 when
// ctx is cancelled. A converter that panics is recovered and reported as damaged input.
func Convert(ctx context.Context, data []byte, name string, opt Options) (*Doc, error) {
	if int64(len(data)) > MaxFileSize {
		return nil, errTooLarge("the file", "ファイル", int64(len(data)), MaxFileSize)
	}
	kind := Detect(data, name)
	return ConvertKind(ctx, data, name, kind, opt)
}

// ConvertKind converts data as kind, skipping detection (Convert calls it after Detect).
//
// Bytes of no known type whose name claims a converted type (garbage named .pdf, .docx, .xlsx
// or .zip) are reported as a damaged file of that type, not as an unsupported one, and a file of
// 0 bytes fails as empty whatever its name.
func ConvertKind(ctx context.Context, data []byte, name string, kind Kind, opt Options) (*Doc, error) {
	return convertSafely(ctx, data, name, kind, opt, nil)
}

// convertSafely is ConvertKind. With file (the handler's Markdown file), a converter may stream
// a Markdown too large to hold twice out of memory (Doc.spooled, XML only), into that file or a
// temporary one, and the caller writes the Doc (writeMarkdown) and releases it. Nested
// conversions (archive entries, attachments) go through ConvertKind and are never streamed:
// their Markdown is joined into their parent's.
func convertSafely(ctx context.Context, data []byte, name string, kind Kind, opt Options, file markdownFile) (*Doc, error) {
	if len(data) == 0 {
		return nil, errEmpty()
	}
	if err := mismatch(kind, name); err != nil {
		return nil, err
	}
	if !kind.Supported() {
		return nil, errUnsupported(kind)
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if ctx.Err() != nil {
		// already past the deadline or cancelled: do not start
		return nil, finishErr(ctx, kind, ctx.Err())
	}
	type out struct {
		d   *Doc
		err error
	}
	ch := make(chan out, 1)
	go func() {
		var o out
		defer func() {
			if p := recover(); p != nil {
				o = out{nil, errPanic(kind, fmt.Sprintf("%v\n%s", p, firstLines(string(debug.Stack()), 12)))}
			}
			ch <- o
		}()
		o.d, o.err = convertKind(ctx, data, name, kind, opt, file)
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, finishErr(ctx, kind, o.err)
		}
		return o.d, nil
	case <-ctx.Done():
		go func() { (<-ch).d.release() }() // a document finished too late is not used
		return nil, finishErr(ctx, kind, ctx.Err())
	}
}

// finishErr maps context endings and stray errors onto coded errors.
func finishErr(ctx context.Context, kind Kind, err error) error {
	var je *job.Error
	if errors.As(err, &je) {
		return je
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if errors.Is(context.Cause(ctx), context.Canceled) || errors.Is(err, context.Canceled) {
			return job.Wrap(job.E013, err, "the conversion was cancelled").WithJa("変換はキャンセルされました。")
		}
		return errTimeout(kind)
	}
	return errDamaged(kind, err)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func convertKind(ctx context.Context, data []byte, name string, kind Kind, opt Options, file markdownFile) (*Doc, error) {
	switch kind {
	case KindPDF:
		return convertPDF(ctx, data, opt)
	case KindDOCX:
		return convertDOCX(ctx, data, opt)
	case KindXLSX:
		return convertXLSX(ctx, data, opt)
	case KindPPTX:
		return convertPPTX(ctx, data, opt)
	case KindXLS:
		return convertXLS(ctx, data, opt)
	case KindZIP:
		return ConvertZip(ctx, data, name, opt)
	case KindCSV:
		return convertCSV(data)
	case KindText:
		return convertText(data)
	case KindOffice:
		return nil, errPassword(kind)
	}
	return convertMore(ctx, data, name, kind, opt, file)
}
