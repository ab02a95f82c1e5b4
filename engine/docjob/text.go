package docjob

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/unicode/norm"

	"jobdesk/engine/job"
)

// Encodings DecodeText reports.
const (
	EncUTF8    = "UTF-8"
	EncUTF8BOM = "UTF-8 (BOM)"
	EncUTF16LE = "UTF-16LE"
	EncUTF16BE = "UTF-16BE"
	EncCP932   = "Shift_JIS (CP932)"
	EncEUCJP   = "EUC-JP"
)

// DecodeText turns bytes of unknown encoding into UTF-8 by the rule that was right on every
// Japanese office file measured: a BOM wins, then valid UTF-8, then UTF-8 with a few bad bytes
// (replaced with U+FFFD), then strict CP932, then strict EUC-JP. ok is false when the text is not
// clean: UTF-8 with bad bytes replaced, or, when no encoding decodes cleanly, CP932 with
// replacement marks (which the converters refuse rather than show as mojibake).
func DecodeText(data []byte) (text, enc string, ok bool) {
	dt := decodeText(data)
	return dt.text, dt.enc, dt.ok
}

// decodedText is DecodeText's answer with the count of bytes replaced by U+FFFD when the text
// was read as UTF-8 with a few bad bytes.
type decodedText struct {
	text, enc string
	ok        bool
	bad       int // UTF-8 bytes that could not be read (replaced with U+FFFD); 0 when ok
}

func decodeText(data []byte) decodedText {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		body := data[3:]
		if utf8.Valid(body) {
			return decodedText{text: string(body), enc: EncUTF8BOM, ok: true}
		}
		_, bad := utf8Counts(body)
		return decodedText{text: strings.ToValidUTF8(string(body), "\uFFFD"), enc: EncUTF8BOM, bad: bad}
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		s, err := decodeWith(xunicode.UTF16(xunicode.LittleEndian, xunicode.ExpectBOM).NewDecoder(), data)
		return decodedText{text: s, enc: EncUTF16LE, ok: err == nil}
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		s, err := decodeWith(xunicode.UTF16(xunicode.BigEndian, xunicode.ExpectBOM).NewDecoder(), data)
		return decodedText{text: s, enc: EncUTF16BE, ok: err == nil}
	case utf8.Valid(data):
		return decodedText{text: string(data), enc: EncUTF8, ok: true}
	}
	if multi, bad := utf8Counts(data); mostlyUTF8(multi, bad) {
		return decodedText{text: strings.ToValidUTF8(string(data), "\uFFFD"), enc: EncUTF8, bad: bad}
	}
	if s, ok := strictDecode(japanese.ShiftJIS, data); ok {
		return decodedText{text: s, enc: EncCP932, ok: true}
	}
	if s, ok := strictDecode(japanese.EUCJP, data); ok {
		return decodedText{text: s, enc: EncEUCJP, ok: true}
	}
	s, _ := decodeWith(japanese.ShiftJIS.NewDecoder(), data)
	return decodedText{text: s, enc: EncCP932}
}

// utf8Counts returns how many valid multi-byte UTF-8 sequences data holds and how many of its
// bytes are not part of any valid sequence.
func utf8Counts(data []byte) (multi, bad int) {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		} else {
			multi++
		}
		i += n
	}
	return multi, bad
}

// mostlyUTF8 reports whether text with multi valid multi-byte sequences and bad unreadable bytes
// is UTF-8 with a few damaged bytes (a cut last character, a stray byte) rather than a legacy
// encoding: in CP932 or EUC-JP text nearly every Japanese character is invalid UTF-8, so the bad
// bytes outnumber the valid sequences by far.
func mostlyUTF8(multi, bad int) bool {
	if multi == 0 || bad == 0 {
		return false
	}
	return bad*8 <= multi || (bad <= 3 && bad <= multi)
}

// errEncoding is the error for text that no supported encoding reads cleanly: E006, never
// mojibake reported as converted.
func errEncoding(kind Kind) *job.Error {
	return job.Errorf(job.E006, "the %s file is not valid UTF-8, UTF-16, Shift_JIS (CP932) or EUC-JP, so its text cannot be read; save it as UTF-8 and try again", kind.Label()).
		WithJa(fmt.Sprintf("%sファイルの文字コードが UTF-8・UTF-16・Shift_JIS（CP932）・EUC-JP のどれとしても正しくないため、文字を読み取れません。UTF-8 で保存し直してから再度お試しください。", kind.LabelJa())).
		WithName(ErrNameEncoding)
}

func decodeWith(d *encoding.Decoder, data []byte) (string, error) {
	b, err := d.Bytes(data)
	return string(b), err
}

// strictDecode decodes data and reports false when the decoder had to substitute anything.
func strictDecode(e encoding.Encoding, data []byte) (string, bool) {
	b, err := e.NewDecoder().Bytes(data)
	if err != nil || bytes.ContainsRune(b, utf8.RuneError) {
		return "", false
	}
	return string(b), true
}

// Clean normalises extracted text: KANGXI RADICALS, CJK radical supplements and compatibility
// ideographs fold to the ordinary kanji (NFKC on those code points only, so full-width letters
// and ㈱ stay as the author wrote them), CR LF becomes LF, and control characters other than tab
// and newline are dropped.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError && n == 1:
			// invalid byte: drop
		case r < 0x20 || (r >= 0x7F && r < 0xA0) || r == '\u200B' || r == '\uFEFF' || r == '\u00AD':
			// control, zero-width or soft hyphen: drop
		case (r >= 0x2E80 && r <= 0x2FDF) || (r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F):
			b.WriteString(norm.NFKC.String(string(r)))
		case unicode.Is(unicode.Co, r):
			// private use: no meaning outside the producing font
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isClean reports whether Clean would return s unchanged, so the common case costs no copy.
func isClean(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1,
			r < 0xA0, r == '\u200B', r == '\uFEFF', r == '\u00AD',
			(r >= 0x2E80 && r <= 0x2FDF) || (r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F),
			unicode.Is(unicode.Co, r):
			return false
		}
	}
	return true
}

// convertText renders plain text: decoded, cleaned, kept as it is (Markdown readers show it).
// Text no encoding reads cleanly fails E006; UTF-8 with a few bad bytes converts with U+FFFD in
// their place and ends partial saying how many bytes could not be read.
func convertText(data []byte) (*Doc, error) {
	dt := decodeText(data)
	if !dt.ok && dt.bad == 0 {
		return nil, errEncoding(KindText)
	}
	s := strings.TrimSpace(Clean(dt.text))
	d := &Doc{Kind: KindText, Markdown: s + "\n", Method: MethodNative, Encoding: dt.enc, Pages: 1, BadBytes: dt.bad}
	if s == "" {
		d.Markdown = ""
	}
	return d, nil
}

// convertCSV renders a delimited file as one Markdown table, the first record being the header.
// Rows with a different field count are padded; quotes may be sloppy. Encodings are handled as
// in convertText.
func convertCSV(data []byte) (*Doc, error) {
	dt := decodeText(data)
	if !dt.ok && dt.bad == 0 {
		return nil, errEncoding(KindCSV)
	}
	s, enc := Clean(dt.text), dt.enc
	delim := ','
	if first, _, _ := strings.Cut(s, "\n"); strings.Count(first, "\t") > strings.Count(first, ",") {
		delim = '\t'
	}
	r := csv.NewReader(strings.NewReader(s))
	r.Comma = delim
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = false
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if pe, ok := err.(*csv.ParseError); ok && rec == nil {
				_ = pe
				continue
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		rows = append(rows, rec)
	}
	var b strings.Builder
	writeTextTable(&b, rows)
	return &Doc{Kind: KindCSV, Markdown: b.String(), Method: MethodNative, Encoding: enc, Pages: 1, Rows: len(rows), BadBytes: dt.bad}, nil
}

// writeTable writes rows as a Markdown table (first row = header), padding short rows and
// escaping pipes; newlines inside a cell become <br>. The cells are Markdown already (see
// writeTextTable for cells of plain text).
func writeTable(b *strings.Builder, rows [][]string) {
	writeRows(b, rows, nil)
}

// writeRows writes rows as writeTable does, each cell passed through esc first when esc is set.
func writeRows(b *strings.Builder, rows [][]string, esc func(string) string) {
	if len(rows) == 0 {
		return
	}
	w := 0
	for _, r := range rows {
		if len(r) > w {
			w = len(r)
		}
	}
	if w == 0 {
		return
	}
	for i, r := range rows {
		b.WriteByte('|')
		for c := 0; c < w; c++ {
			b.WriteByte(' ')
			if c < len(r) {
				if esc != nil {
					b.WriteString(cellText(esc(r[c])))
				} else {
					b.WriteString(cellText(r[c]))
				}
			}
			b.WriteString(" |")
		}
		b.WriteByte('\n')
		if i == 0 {
			b.WriteByte('|')
			for c := 0; c < w; c++ {
				b.WriteString(" --- |")
			}
			b.WriteByte('\n')
		}
	}
}

var cellReplacer = strings.NewReplacer("|", "\\|", "\r\n", "<br>", "\n", "<br>", "\r", "<br>")

func cellText(s string) string {
	return cellReplacer.Replace(strings.TrimSpace(s))
}
