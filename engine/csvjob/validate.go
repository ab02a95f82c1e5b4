package csvjob

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
	"runtime"
	"strings"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Options adjust one CSV job. The zero value means the seed's defaults: the user-log schema,
// encoding and delimiter detected, failure when more than 5 % or more than 50 rows are rejected.
type Options struct {
	Schema           *Schema  `json:"schema,omitempty"`            // the job schema (default DefaultSchema)
	SchemaFile       string   `json:"schema_file,omitempty"`       // a JSON schema file, when Schema is nil
	Encoding         string   `json:"encoding,omitempty"`          // force an encoding (EncUTF8, EncCP932, …)
	Delimiter        string   `json:"delimiter,omitempty"`         // force a delimiter ("," "\t" ";" "|")
	TolerancePercent *float64 `json:"tolerate_percent,omitempty"`  // fail above this % of rejected rows (default 5)
	ToleranceCount   *int     `json:"tolerate_count,omitempty"`    // fail above this many rejected rows (default 50)
	MaxBytes         int64    `json:"max_bytes,omitempty"`         // refuse larger files with E003 (default DefaultMaxBytes)
	MaxRecordBytes   int64    `json:"max_record_bytes,omitempty"`  // refuse a file with a longer record with E006 (default DefaultMaxRecordBytes)
	ChunkBytes       int64    `json:"chunk_bytes,omitempty"`       // target chunk size (default: from file size and CPUs)
	AuditAll         bool     `json:"audit_all,omitempty"`         // AUDIT_LOGGING records every row, not errors only
	MaxErrorRecords  int      `json:"max_error_records,omitempty"` // error records kept per chunk (default 10000)
}

// Defaults of Options.
const (
	DefaultTolerancePercent = 5.0
	DefaultToleranceCount   = 50
	DefaultMaxBytes         = 4 << 30
	// DefaultMaxRecordBytes is the longest record (one row, quoted line breaks included) a CSV
	// file may hold: the first longer one fails validation with E006, read no further, so a
	// file with one huge line costs no more memory than a usual one.
	DefaultMaxRecordBytes  = 16 << 20
	DefaultMaxErrorRecords = 10000
	sampleSize             = 64 << 10
	readBuf                = 1 << 20
)

func (o *Options) schema() (*Schema, error) {
	if o.Schema != nil {
		if err := o.Schema.Compile(); err != nil {
			return nil, err
		}
		return o.Schema, nil
	}
	if o.SchemaFile != "" {
		s, err := LoadSchema(o.SchemaFile)
		if err != nil {
			return nil, err
		}
		o.Schema = s
		return s, nil
	}
	o.Schema = DefaultSchema()
	return o.Schema, nil
}

func (o *Options) tolerance() (float64, int) {
	p, c := DefaultTolerancePercent, DefaultToleranceCount
	if o.TolerancePercent != nil {
		p = *o.TolerancePercent
	}
	if o.ToleranceCount != nil {
		c = *o.ToleranceCount
	}
	return p, c
}

// Chunk is one byte range of the file holding whole records: what one Map item processes.
type Chunk struct {
	Index     int   `json:"index"`
	Offset    int64 `json:"offset"`
	Length    int64 `json:"length"`
	FirstLine int   `json:"firstLine"`
	Rows      int64 `json:"rows"`
}

// Stats are the validation statistics (seed 3.2's statistics object).
type Stats struct {
	FileSizeBytes         int64    `json:"fileSizeBytes"`
	ProcessingTimeSeconds float64  `json:"processingTimeSeconds"`
	ValidationErrors      []string `json:"validationErrors"`
	Lines                 int      `json:"lines"`
}

// Validation is CSV_VALIDATION's result (seed 3.2) without the rows: they stay in the file, cut
// into Chunks listed in the manifest file that the workflow's Map reads with ItemReader.
type Validation struct {
	IsValid     bool       `json:"isValid"`
	RowCount    int64      `json:"rowCount"`
	ColumnCount int        `json:"columnCount"`
	HeaderValid bool       `json:"headerValid"`
	Encoding    string     `json:"encoding"`
	Delimiter   string     `json:"delimiter"`
	Header      []string   `json:"header"`
	Statistics  Stats      `json:"statistics"`
	SHA256      string     `json:"sha256"`
	Source      string     `json:"source"`     // the file as given
	ChunkCount  int        `json:"chunkCount"` // items in the manifest
	Manifest    Object     `json:"manifest"`   // where the Map's ItemReader finds the chunks
	WorkDir     string     `json:"workDir"`    // URI prefix of this execution's result and working files
	Error       *job.Error `json:"error,omitempty"`

	// ReadPath is the URI of the file the chunks index (a UTF-8 copy for UTF-16 input).
	ReadPath string `json:"readPath"`
	// Columns gives, for each schema column, its index in the file's rows (-1: absent, optional).
	Columns []int `json:"columns"`
	// Chunks are the byte ranges (also in the manifest file).
	Chunks []Chunk `json:"-"`
}

// context is what every step after validation reads back from the work directory: the
// validation, the compiled schema and the options, so rows and schemas never travel in state.
type jobContext struct {
	Validation Validation `json:"validation"`
	Chunks     []Chunk    `json:"chunks"`
	Options    Options    `json:"options"`
	Execution  string     `json:"execution"`
	JobID      int64      `json:"jobId,omitempty"`
	StartedAt  time.Time  `json:"startedAt"`
}

// Work files in an execution's folder.
const (
	contextFile  = "context.json"
	manifestFile = "manifest.json"
	utf8Copy     = "utf8.csv" // the UTF-8 copy of a UTF-16 file
)

func validationError(code job.Code, en, ja string) *job.Error {
	return job.Errorf(code, "%s", en).WithJa(ja).WithName("ValidationError")
}

// Validate runs CSV_VALIDATION on the file at uri, read through bs: it detects the encoding,
// dialect and header, checks the header against the schema, counts the rows and cuts the file
// into chunks, writing the manifest (and a UTF-8 copy of a UTF-16 file) under workDir, a URI
// prefix. A file that cannot be processed returns a *job.Error named ValidationError (E003 too
// large, E004 empty (0 bytes), binary or not CSV, E006 header only, wrong header, invalid bytes,
// unterminated quote); a file in storage this engine cannot reach is E010.
func Validate(ctx context.Context, bs blob.Store, uri, workDir string, o Options) (*Validation, error) {
	t0 := time.Now()
	schema, err := o.schema()
	if err != nil {
		return nil, err
	}
	name := baseName(uri)
	// The validation pass reads the whole file, twice at once (records and hash): from a local
	// file (the file itself on the device, a download in the cloud). Chunks read their ranges
	// from uri.
	path, release, err := blob.LocalPath(ctx, bs, uri, "")
	if errors.Is(err, blob.ErrScheme) {
		return nil, job.Wrap(job.E010, err, uri+" cannot be read here: this engine has no access to its storage").
			WithJa("このファイルの保存先にはここからアクセスできません。").Permanent()
	}
	if r := blob.Refused(err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, job.Wrap(job.E014, err, fmt.Sprintf("%s does not exist or cannot be read", name)).
			WithJa(fmt.Sprintf("%s が見つからないか、読み取れません。", name)).WithName("ValidationError")
	}
	defer release()
	f, err := os.Open(path)
	if blob.InUse(err) {
		return nil, blob.InUseError(name, err)
	}
	if err != nil {
		return nil, job.Wrap(job.E014, err, fmt.Sprintf("%s does not exist or cannot be read", name)).
			WithJa(fmt.Sprintf("%s が見つからないか、読み取れません。", name)).WithName("ValidationError")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return nil, validationError(job.E014, name+" is not a file", name+" はファイルではありません。")
	}
	size := st.Size()
	fileSize := size
	maxBytes := o.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if size > maxBytes {
		return nil, validationError(job.E003,
			fmt.Sprintf("%s is too large: %s (limit %s)", name, humanSize(size), humanSize(maxBytes)),
			fmt.Sprintf("%s が大きすぎます: %s（上限 %s）", name, humanSize(size), humanSize(maxBytes)))
	}
	if size == 0 {
		return nil, validationError(job.E004, name+": the file is empty (0 bytes)",
			name+": ファイルが空です（0 バイト）。")
	}
	sample := make([]byte, min(size, sampleSize))
	if _, err := io.ReadFull(f, sample); err != nil {
		return nil, job.Wrap(job.E004, err, "cannot read "+name).WithJa(name + " を読み取れません。").WithName("ValidationError")
	}
	atEOF := int64(len(sample)) == size
	enc, bom := DetectEncoding(sample, atEOF)
	if o.Encoding != "" {
		enc, bom = normEncoding(o.Encoding), 0
		if enc == "" {
			return nil, validationError(job.E014, "unknown encoding "+o.Encoding, "不明な文字コードです: "+o.Encoding)
		}
		if enc == EncUTF8 && len(sample) >= 3 && string(sample[:3]) == "\xEF\xBB\xBF" {
			bom = 3
		}
		if isUTF16(enc) && len(sample) >= 2 {
			bom = 2
		}
	}
	if !isUTF16(enc) {
		if looksBinary(sample) {
			return nil, validationError(job.E004, name+" is a binary file, not CSV text",
				name+" はバイナリファイルです。CSVテキストではありません。")
		}
		if enc == "" {
			return nil, validationError(job.E006,
				name+" contains bytes that are not valid UTF-8, Shift_JIS or EUC-JP",
				name+" にUTF-8・Shift_JIS・EUC-JPのいずれとしても正しくないバイトがあります。")
		}
		if o.Encoding != "" && !validPrefix(enc, sample[bom:], atEOF) {
			return nil, validationError(job.E006,
				fmt.Sprintf("%s contains bytes that are not valid %s", name, enc),
				fmt.Sprintf("%s に %s として正しくないバイトがあります。", name, enc))
		}
	}
	readPath := uri
	dataStart := int64(bom)
	if isUTF16(enc) {
		readPath = blob.Join(workDir, utf8Copy)
		if err := transcodeUTF16(ctx, bs, f, enc, readPath); err != nil {
			return nil, err
		}
		dataStart = 0
		cpath, release, err := blob.LocalPath(ctx, bs, readPath, "")
		if err != nil {
			return nil, job.Wrap(job.E009, err, "cannot read the converted copy").WithJa("変換したコピーを読み取れません。")
		}
		defer release()
		rf, err := os.Open(cpath)
		if err != nil {
			return nil, job.Wrap(job.E009, err, "cannot read the converted copy").WithJa("変換したコピーを読み取れません。")
		}
		defer rf.Close()
		f = rf
		st, _ = rf.Stat()
		size = st.Size()
		sample = make([]byte, min(size, sampleSize))
		if _, err := io.ReadFull(rf, sample); err != nil {
			return nil, job.Wrap(job.E004, err, "cannot read "+name).WithJa(name + " を読み取れません。").WithName("ValidationError")
		}
		atEOF = int64(len(sample)) == size
		if looksBinary(sample) {
			return nil, validationError(job.E004, name+" is a binary file, not CSV text",
				name+" はバイナリファイルです。CSVテキストではありません。")
		}
	}
	text := sample[dataStart:]
	if !atEOF { // sniff whole lines only
		if i := lastLineBreak(text); i > 0 {
			text = text[:i+1]
		}
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, validationError(job.E006, name+" has no header row (only blank lines)",
			name+" にヘッダー行がありません（空行のみです）。")
	}
	delim, err := chooseDelimiter(text, schema, o.Delimiter, enc, name)
	if err != nil {
		return nil, err
	}
	hdr := NewReader(append([]byte(nil), text...), delim, 1)
	if !hdr.Next() {
		return nil, validationError(job.E006, name+" has no header row (only blank lines)",
			name+" にヘッダー行がありません（空行のみです）。")
	}
	if hdr.Unterminated && !atEOF {
		return nil, validationError(job.E006, name+": the header row is not closed (a quote is missing)",
			name+": ヘッダー行の引用符が閉じていません。")
	}
	header := make([]string, len(hdr.Fields))
	for i, fb := range hdr.Fields {
		header[i] = strings.TrimPrefix(strings.TrimSpace(decodeText(enc, fb)), "\ufeff")
	}
	cols, herr := matchHeader(schema, header, hdr.Fields, name)
	if herr != nil {
		return nil, herr
	}
	v := &Validation{Encoding: enc, Delimiter: string(delim), Header: header, ColumnCount: len(header),
		HeaderValid: true, Source: uri, ReadPath: readPath, Columns: cols, WorkDir: workDir}
	dataOffset := dataStart + int64(hdr.End)

	// One streaming pass: hash, record boundaries, rows.
	chunk := o.ChunkBytes
	if chunk <= 0 {
		n := int64(runtime.GOMAXPROCS(0))
		chunk = max(min(size/n, 8<<20), 1<<20)
	}
	maxRecord := o.MaxRecordBytes
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecordBytes
	}
	sp := &lineSplitter{delim: delim, line: hdr.Line, chunkSize: chunk, chunkStart: dataOffset, chunkStartLine: hdr.Line,
		maxRecord: maxRecord, recStart: dataOffset, recLine: hdr.Line}
	// The hash is computed on another core while this one finds the records.
	hctx, stopHash := context.WithCancel(ctx)
	defer stopHash()
	hashed := make(chan hashResult, 1)
	go func() { hashed <- hashFile(hctx, f, size) }()
	buf := make([]byte, readBuf)
	var off int64
	for off < size {
		if err := ctx.Err(); err != nil {
			return nil, cancelled(err)
		}
		n, err := f.ReadAt(buf, off)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, job.Wrap(job.E004, err, "cannot read "+name).WithJa(name + " を読み取れません。").WithName("ValidationError")
		}
		b := buf[:n]
		if off+int64(n) <= dataOffset {
			off += int64(n)
			continue
		}
		if off < dataOffset {
			b = b[dataOffset-off:]
			off = dataOffset
		}
		{
			// Binary content after a text-looking start is refused up front.
			if looksBinary(b[:min(len(b), 4096)]) {
				return nil, validationError(job.E004, name+" is a binary file, not CSV text",
					name+" はバイナリファイルです。CSVテキストではありません。")
			}
		}
		sp.feed(b, off)
		off += int64(len(b))
		if sp.tooLong {
			return nil, validationError(job.E006,
				fmt.Sprintf("%s: the row on line %d is longer than the limit of %s per row; nothing was written", name, sp.longLine, humanSize(maxRecord)),
				fmt.Sprintf("%s: %d 行目の行が1行あたりの上限 %s を超えています。何も書き込んでいません。", name, sp.longLine, humanSize(maxRecord)))
		}
	}
	if sp.finish(size) {
		return nil, validationError(job.E006,
			fmt.Sprintf("%s: a quoted field that starts on line %d is never closed", name, sp.quoteLine),
			fmt.Sprintf("%s: %d 行目から始まる引用符付きの値が閉じていません。", name, sp.quoteLine))
	}
	if sp.rows == 0 {
		return nil, validationError(job.E006, name+" has a header but no data rows",
			name+" にはヘッダーだけがあり、データ行がありません。")
	}
	hr := <-hashed
	if hr.err != nil {
		if ctx.Err() != nil {
			return nil, cancelled(ctx.Err())
		}
		return nil, job.Wrap(job.E004, hr.err, "cannot read "+name).WithJa(name + " を読み取れません。").WithName("ValidationError")
	}
	v.SHA256 = hr.sum
	v.RowCount = sp.rows
	v.Chunks = sp.chunks
	v.ChunkCount = len(sp.chunks)
	v.IsValid = true
	v.Statistics = Stats{FileSizeBytes: fileSize, Lines: sp.line - 1, ValidationErrors: []string{},
		ProcessingTimeSeconds: time.Since(t0).Seconds()}
	mpath := blob.Join(workDir, manifestFile)
	v.Manifest = ObjectOf(mpath)
	if err := writeJSON(ctx, bs, mpath, v.Chunks); err != nil {
		return nil, err
	}
	return v, nil
}

type hashResult struct {
	sum string
	err error
}

// hashFile returns the hex SHA-256 of f's first size bytes.
func hashFile(ctx context.Context, f io.ReaderAt, size int64) hashResult {
	h := sha256.New()
	buf := make([]byte, readBuf)
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return hashResult{err: err}
		}
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 && err != nil { // ReadAt reports short reads with an error
			return hashResult{err: err}
		}
		h.Write(buf[:n])
		off += int64(n)
	}
	return hashResult{sum: hex.EncodeToString(h.Sum(nil))}
}

func cancelled(err error) *job.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return job.Wrap(job.E011, err, "the CSV job took too long and was stopped").
			WithJa("CSVの処理に時間がかかりすぎたため停止しました。").WithName("States.Timeout")
	}
	return job.Wrap(job.E013, err, "the CSV job was cancelled").WithJa("CSVの処理はキャンセルされました。").WithName("States.Aborted")
}

func writeJSON(ctx context.Context, bs blob.Store, uri string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return job.Wrap(job.E016, err, "cannot encode "+baseName(uri))
	}
	if err := blob.WriteAll(ctx, bs, uri, b); err != nil {
		return job.Wrap(job.E009, err, "cannot write "+baseName(uri)).WithJa("作業ファイルを書き込めません。").Transient().WithName("TemporaryError")
	}
	return nil
}

func readJSON(ctx context.Context, bs blob.Store, uri string, v any) error {
	b, err := blob.ReadAll(ctx, bs, uri)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func lastLineBreak(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' || b[i] == '\r' {
			return i
		}
	}
	return -1
}

func validPrefix(enc string, b []byte, atEOF bool) bool {
	switch enc {
	case EncCP932:
		return validCP932(b, atEOF)
	case EncEUCJP:
		return validEUCJP(b, atEOF)
	}
	return validUTF8(b, atEOF)
}

func normEncoding(s string) string {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(s, "_", "-"), " ", "-")) {
	case "utf-8", "utf8":
		return EncUTF8
	case "utf-8-bom", "utf8-bom", "utf-8-sig":
		return EncUTF8BOM
	case "utf-16le", "utf-16":
		return EncUTF16LE
	case "utf-16be":
		return EncUTF16BE
	case "shift-jis", "sjis", "cp932", "windows-31j", "ms932":
		return EncCP932
	case "euc-jp", "eucjp":
		return EncEUCJP
	}
	return ""
}

// looksBinary reports NUL bytes or more than 1 % control characters other than tab, CR, LF, FF.
func looksBinary(b []byte) bool {
	ctl := 0
	for _, c := range b {
		if c == 0 {
			return true
		}
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7F {
			ctl++
		}
	}
	return ctl*100 > len(b)
}

// Delimiters are the delimiters JobDesk detects, in order of preference on a tie.
var Delimiters = []byte{',', '\t', ';', '|'}

// dialect is what sniffing found for one delimiter.
type dialect struct {
	delim     byte
	fields    int     // the most common field count
	agreement float64 // share of sampled records with that count
	matches   int     // schema column names found in the first record
}

func sniffDialect(text []byte, d byte, schema *Schema, enc string) dialect {
	r := NewReader(append([]byte(nil), text...), d, 1)
	counts := map[int]int{}
	total := 0
	out := dialect{delim: d}
	names := map[string]bool{}
	for _, c := range schema.Columns {
		names[c.Name] = true
	}
	for total < 1000 && r.Next() {
		if total == 0 {
			for _, fb := range r.Fields {
				if names[strings.TrimPrefix(strings.TrimSpace(decodeText(enc, fb)), "\ufeff")] {
					out.matches++
				}
			}
		}
		counts[len(r.Fields)]++
		total++
	}
	for k, n := range counts {
		if n > counts[out.fields] || n == counts[out.fields] && k > out.fields {
			out.fields = k
		}
	}
	if total > 0 {
		out.agreement = float64(counts[out.fields]) / float64(total)
	}
	return out
}

// chooseDelimiter picks the delimiter: the one whose first record holds the most schema column
// names, then the one whose records agree on a field count of two or more at ≥ 95 % (a few
// ragged rows must not change the dialect), then the highest agreement.
func chooseDelimiter(text []byte, schema *Schema, forced, enc, name string) (byte, error) {
	if forced != "" {
		if forced == `\t` || strings.EqualFold(forced, "tab") {
			forced = "\t"
		}
		if len(forced) != 1 || forced[0] == '"' || forced[0] == '\n' || forced[0] == '\r' {
			return 0, validationError(job.E014, fmt.Sprintf("%q cannot be a delimiter", forced), fmt.Sprintf("%q は区切り文字に使えません。", forced))
		}
		return forced[0], nil
	}
	var best dialect
	bestScore := -1.0
	for _, d := range Delimiters {
		dl := sniffDialect(text, d, schema, enc)
		score := float64(dl.matches) * 1000
		if dl.fields >= 2 {
			score += 100 * dl.agreement
			if dl.agreement >= 0.95 {
				score += 200
			}
			if dl.fields == len(schema.Columns) {
				score += 50
			}
		}
		if score > bestScore {
			best, bestScore = dl, score
		}
	}
	if best.matches == 0 && best.fields < 2 && len(schema.Columns) > 1 {
		return 0, notCSV(name)
	}
	return best.delim, nil
}

// matchHeader maps schema columns to file columns by name. A missing required column is E006
// with the expected and found headers; a first row that looks like data says the header is missing.
func matchHeader(s *Schema, header []string, raw [][]byte, name string) ([]int, error) {
	idx := map[string]int{}
	for i, h := range header {
		if _, dup := idx[h]; !dup {
			idx[h] = i
		}
	}
	cols := make([]int, len(s.Columns))
	var missing []string
	found := 0
	for i, c := range s.Columns {
		j, ok := idx[c.Name]
		if !ok {
			cols[i] = -1
			if c.Required {
				missing = append(missing, c.Name)
			}
			continue
		}
		cols[i] = j
		found++
	}
	if len(missing) == 0 {
		return cols, nil
	}
	key := s.Columns[s.keyIdx]
	if found == 0 && len(raw) > 0 && key.re != nil {
		for _, fb := range raw {
			if key.re.Match(fb) {
				return nil, validationError(job.E006,
					fmt.Sprintf("%s has no header row: the first line is data; expected the header %s", name, strings.Join(s.Names(), ",")),
					fmt.Sprintf("%s にヘッダー行がありません（1行目がデータです）。必要なヘッダー: %s", name, strings.Join(s.Names(), ",")))
			}
		}
	}
	return nil, validationError(job.E006,
		fmt.Sprintf("%s has the wrong header: missing %s; expected %s, found %s", name,
			strings.Join(missing, ", "), strings.Join(s.Names(), ","), strings.Join(header, ",")),
		fmt.Sprintf("%s のヘッダーが正しくありません。%s がありません（必要: %s、実際: %s）", name,
			strings.Join(missing, "、"), strings.Join(s.Names(), ","), strings.Join(header, ",")))
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// notCSV is the E004 of a text file whose lines no delimiter splits into columns.
func notCSV(name string) *job.Error {
	return validationError(job.E004,
		name+" is not a CSV file: no comma, tab, semicolon or bar separates its columns",
		name+" はCSVファイルではありません（カンマ・タブ・セミコロン・縦棒で区切られた列がありません）。")
}
