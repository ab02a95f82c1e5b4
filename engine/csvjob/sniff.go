package csvjob

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// SniffResult is what `jobdesk csv sniff FILE` shows: the detected dialect and the schema
// inferred from a sample of rows, ready to save as a --schema file.
type SniffResult struct {
	Encoding  string  `json:"encoding"`
	Delimiter string  `json:"delimiter"`
	Rows      int     `json:"sampledRows"`
	Schema    *Schema `json:"schema"`
}

// sniffRows is how many data rows Sniff looks at.
const sniffRows = 2000

// Sniff infers a schema from the start of the file at path: the header names the columns; a
// column whose sampled values are all exact integers is integer (min 0 when none is negative),
// then decimal, date (every value written YYYY-MM-DD or YYYY/MM/DD, most of them real dates),
// boolean, else string; a column with no empty value is required; a first column whose values are all a fixed prefix plus fixed-width digits gets that
// pattern and becomes the key.
func Sniff(path string) (*SniffResult, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if blob.InUse(err) {
		return nil, blob.InUseError(name, err)
	}
	if err != nil {
		return nil, job.Wrap(job.E014, err, name+" does not exist or cannot be read").WithJa(name + " が見つからないか、読み取れません。")
	}
	defer f.Close()
	sample := make([]byte, 1<<20)
	n, err := io.ReadFull(f, sample)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, job.Wrap(job.E004, err, "cannot read "+name).WithJa(name + " を読み取れません。")
	}
	sample = sample[:n]
	atEOF := err != nil
	if n == 0 {
		return nil, validationError(job.E006, name+" is empty: no header and no rows", name+" は空のファイルです（ヘッダーも行もありません）。")
	}
	enc, bom := DetectEncoding(sample, atEOF)
	text := sample[bom:]
	if isUTF16(enc) {
		out, err := decoderFor(enc).NewDecoder().Bytes(sample)
		if err != nil {
			return nil, validationError(job.E006, name+" is not valid "+enc, name+" は正しい "+enc+" ではありません。")
		}
		text = []byte(strings.TrimPrefix(string(out), "\ufeff"))
	} else if looksBinary(sample) {
		return nil, validationError(job.E004, name+" is a binary file, not CSV text", name+" はバイナリファイルです。CSVテキストではありません。")
	} else if enc == "" {
		return nil, validationError(job.E006, name+" contains bytes that are not valid UTF-8, Shift_JIS or EUC-JP",
			name+" にUTF-8・Shift_JIS・EUC-JPのいずれとしても正しくないバイトがあります。")
	}
	if !atEOF {
		if i := lastLineBreak(text); i > 0 {
			text = text[:i+1]
		}
	}
	// Sniff the dialect with a one-column placeholder schema: only agreement counts.
	var best dialect
	for _, d := range Delimiters {
		dl := sniffDialect(text, d, &Schema{Columns: []Column{{Name: "\x00"}}}, enc)
		better := dl.fields >= 2 && (best.fields < 2 || dl.agreement >= 0.95 && best.agreement < 0.95 ||
			(dl.agreement >= 0.95) == (best.agreement >= 0.95) && dl.agreement > best.agreement)
		if better {
			best = dl
		}
	}
	if best.fields < 2 { // as a run with the default schema says of it
		return nil, notCSV(name)
	}
	r := NewReader(append([]byte(nil), text...), best.delim, 1)
	if !r.Next() {
		return nil, validationError(job.E006, name+" has no header row", name+" にヘッダー行がありません。")
	}
	header := make([]string, len(r.Fields))
	for i, fb := range r.Fields {
		header[i] = strings.TrimPrefix(strings.TrimSpace(decodeText(enc, fb)), "\ufeff")
		if header[i] == "" {
			header[i] = fmt.Sprintf("column%d", i+1)
		}
	}
	type acc struct {
		ints, decs, dates, dateShaped, bools, empty, total int
		negative                                           bool
		prefix                                             string
		width                                              int
		idOK                                               bool
	}
	accs := make([]acc, len(header))
	for i := range accs {
		accs[i].idOK = true
	}
	rows := 0
	for rows < sniffRows && r.Next() {
		if len(r.Fields) != len(header) {
			continue
		}
		rows++
		for i, v := range r.Fields {
			a := &accs[i]
			a.total++
			if len(v) == 0 {
				a.empty++
				continue
			}
			if x, ok := parseInt(v); ok {
				a.ints++
				if x < 0 {
					a.negative = true
				}
			}
			if _, ok := parseDecimal(v); ok {
				a.decs++
			}
			if _, ok := parseDate(v); ok {
				a.dates++
				a.dateShaped++
			} else if dateShape(v) {
				a.dateShaped++ // 2020/13/45: written as a date, but none (a row to reject)
			}
			if _, ok := parseBool(v); ok {
				a.bools++
			}
			j := len(v)
			for j > 0 && v[j-1] >= '0' && v[j-1] <= '9' {
				j--
			}
			p, w := string(v[:j]), len(v)-j
			if a.width == 0 && a.prefix == "" {
				a.prefix, a.width = p, w
			}
			if w == 0 || w != a.width || p != a.prefix || !isASCII(v) {
				a.idOK = false
			}
		}
	}
	s := &Schema{Name: strings.TrimSuffix(name, filepath.Ext(name))}
	seen := map[string]bool{}
	for i, h := range header {
		if seen[h] {
			h = fmt.Sprintf("%s_%d", h, i+1)
			header[i] = h
		}
		seen[h] = true
		a := accs[i]
		filled := a.total - a.empty
		c := Column{Name: h, Type: TypeString, Required: rows > 0 && a.empty == 0}
		switch {
		case filled == 0:
		case a.ints == filled:
			c.Type = TypeInteger
			if !a.negative {
				c.Min = f64(0)
			}
		case a.decs == filled:
			c.Type = TypeDecimal
		case a.dateShaped == filled && a.dates*2 > filled:
			// Every value is written as a date and most are real ones: a date column, whose
			// impossible dates a run rejects, not a text column that takes them.
			c.Type = TypeDate
		case a.bools == filled:
			c.Type = TypeBoolean
		}
		if i == 0 && c.Type == TypeString && filled > 0 && a.idOK && a.prefix != "" {
			c.Pattern = fmt.Sprintf(`^%s\d{%d}$`, regexp.QuoteMeta(a.prefix), a.width)
		}
		if c.Type == TypeInteger {
			c.Field = countField(h) // a login or post count by its name reaches the table
		}
		s.Columns = append(s.Columns, c)
	}
	s.Key = s.Columns[0].Name
	// With counts to write, the key column is the user: the schema then fills csv_users as the
	// seed's does.
	counts := map[string]bool{}
	for i := range s.Columns {
		if f := s.Columns[i].Field; f != "" {
			if counts[f] {
				s.Columns[i].Field = "" // two columns look like the same count: map the first
			}
			counts[f] = true
		}
	}
	if len(counts) > 0 {
		s.Columns[0].Field = FieldUserID
	}
	if err := s.Compile(); err != nil {
		return nil, err
	}
	return &SniffResult{Encoding: enc, Delimiter: string(best.delim), Rows: rows, Schema: s}, nil
}

// dateShape reports whether v is written like a date (four digits, then one or two digits
// twice, split by the same - or /) whether or not the calendar has it.
func dateShape(v []byte) bool {
	_, b, ok := dateDigits(v, 4, 4)
	if !ok || len(b) == 0 || b[0] != '-' && b[0] != '/' {
		return false
	}
	sep := b[0]
	if _, b, ok = dateDigits(b[1:], 1, 2); !ok || len(b) == 0 || b[0] != sep {
		return false
	}
	_, b, ok = dateDigits(b[1:], 1, 2)
	return ok && len(b) == 0
}

// countField maps a column name to the csv_users count it holds (ログイン回数 / login_count,
// 投稿回数 / post_count), or "".
func countField(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "ログイン") || strings.Contains(n, "login"):
		return FieldLoginCount
	case strings.Contains(n, "投稿") || strings.Contains(n, "post"):
		return FieldPostCount
	}
	return ""
}
