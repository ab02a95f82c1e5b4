package csvjob

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

// Encoding names as they appear in the validation result.
const (
	EncUTF8    = "UTF-8"
	EncUTF8BOM = "UTF-8 BOM"
	EncUTF16LE = "UTF-16LE"
	EncUTF16BE = "UTF-16BE"
	EncCP932   = "Shift_JIS"
	EncEUCJP   = "EUC-JP"
)

// DetectEncoding names the encoding of sample (the start of a file) and the length of its byte
// order mark. The order is BOM, then UTF-16 without BOM (utf16WithoutBOM), then valid UTF-8, then strict CP932, then EUC-JP: chardet-style
// guessing called short Shift_JIS files windows-1252, this order was right on every file tried.
// A sample that is none of them returns "" (the file is binary or in an unknown encoding).
// atEOF says the sample is the whole file, so a multibyte character cut at its end is an error.
func DetectEncoding(sample []byte, atEOF bool) (name string, bom int) {
	switch {
	case bytes.HasPrefix(sample, []byte{0xEF, 0xBB, 0xBF}):
		return EncUTF8BOM, 3
	case bytes.HasPrefix(sample, []byte{0xFF, 0xFE}):
		return EncUTF16LE, 2
	case bytes.HasPrefix(sample, []byte{0xFE, 0xFF}):
		return EncUTF16BE, 2
	}
	if enc := utf16WithoutBOM(sample); enc != "" {
		return enc, 0
	}
	if validUTF8(sample, atEOF) {
		return EncUTF8, 0
	}
	if validCP932(sample, atEOF) {
		return EncCP932, 0
	}
	if validEUCJP(sample, atEOF) {
		return EncEUCJP, 0
	}
	// No encoding fits every byte: take the one with the fewest broken characters when they are
	// rare (one, or at most one line in twenty), so the rows holding them are rejected one by
	// one with their line numbers instead of the whole file.
	lines := bytes.Count(sample, []byte{'\n'}) + bytes.Count(sample, []byte{'\r'}) + 1
	best, bestN := "", lines/20+2
	for _, enc := range []string{EncUTF8, EncCP932, EncEUCJP} {
		if n := countInvalid(enc, sample); n < bestN {
			best, bestN = enc, n
		}
	}
	return best, 0
}

// utf16WithoutBOM names the byte order of a sample that is UTF-16 text without a byte order
// mark, "" when it is not. CSV text is rich in ASCII (digits, delimiters, line breaks), whose
// UTF-16 units have a zero high byte: at odd offsets in UTF-16LE, even ones in UTF-16BE. A sample
// qualifies when at least one unit in eight has that zero byte, zero bytes on the other side are
// at most an eighth as many (kanji such as U+4E00 and the ideographic space U+3000 have a zero
// low byte), and every unit decodes to text: no NUL, no control character but tab, CR, LF and
// form feed, no unpaired surrogate. A binary file with zero bytes fails the last test.
func utf16WithoutBOM(b []byte) string {
	n := len(b) &^ 1
	if n < 4 {
		return ""
	}
	var zeroEven, zeroOdd int
	for i := 0; i < n; i += 2 {
		if b[i] == 0 {
			zeroEven++
		}
		if b[i+1] == 0 {
			zeroOdd++
		}
	}
	units := n / 2
	le := zeroOdd*8 >= units && zeroEven*8 <= zeroOdd
	be := zeroEven*8 >= units && zeroOdd*8 <= zeroEven
	if le == be {
		return ""
	}
	unit := func(i int) uint16 {
		if le {
			return uint16(b[i]) | uint16(b[i+1])<<8
		}
		return uint16(b[i])<<8 | uint16(b[i+1])
	}
	for i := 0; i < n; i += 2 {
		u := unit(i)
		switch {
		case u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f', u == 0x7F:
			return ""
		case u >= 0xD800 && u < 0xDC00: // a high surrogate needs a low one next (unless cut at the end)
			if i+2 < n {
				if v := unit(i + 2); v < 0xDC00 || v > 0xDFFF {
					return ""
				}
				i += 2
			}
		case u >= 0xDC00 && u <= 0xDFFF:
			return ""
		}
	}
	if le {
		return EncUTF16LE
	}
	return EncUTF16BE
}

// countInvalid counts the broken characters of b in enc (resynchronising after each).
func countInvalid(enc string, b []byte) int {
	n := 0
	for len(b) > 0 && n < 1<<20 {
		var i int
		switch enc {
		case EncCP932:
			i = cp932Check(b, false)
		case EncEUCJP:
			i = eucCheck(b, false)
		default:
			i = utf8Invalid(b)
		}
		if i < 0 {
			break
		}
		n++
		b = b[i+1:]
	}
	return n
}

// utf8Invalid returns the offset of the first invalid UTF-8 sequence, or -1 (a character cut
// at the end counts as valid).
func utf8Invalid(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < 0x80 {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(b[i:]) {
				return -1
			}
			return i
		}
		i += size
	}
	return -1
}

// validUTF8 is utf8.Valid that forgives a character cut at the end of a sample.
func validUTF8(b []byte, atEOF bool) bool {
	if utf8.Valid(b) {
		return true
	}
	if atEOF {
		return false
	}
	for cut := 1; cut <= 3 && cut < len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return true
		}
	}
	return false
}

// validCP932 reports whether b is strict CP932: single bytes 0x00–0x7F and 0xA1–0xDF (half-width
// katakana), lead bytes 0x81–0x9F and 0xE0–0xFC followed by a trail byte 0x40–0x7E or 0x80–0xFC.
func validCP932(b []byte, atEOF bool) bool {
	return cp932Check(b, atEOF) < 0
}

// cp932Check returns the offset of the first invalid byte, or -1.
func cp932Check(b []byte, atEOF bool) int {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c < 0x80 || (c >= 0xA1 && c <= 0xDF):
		case (c >= 0x81 && c <= 0x9F) || (c >= 0xE0 && c <= 0xFC):
			if i+1 >= len(b) {
				if atEOF {
					return i
				}
				return -1
			}
			t := b[i+1]
			if t < 0x40 || t == 0x7F || t > 0xFC {
				return i
			}
			i++
		default:
			return i
		}
	}
	return -1
}

// validEUCJP reports whether b is EUC-JP: ASCII, two bytes 0xA1–0xFE, SS2 (0x8E) with a
// half-width katakana byte, or SS3 (0x8F) with two bytes 0xA1–0xFE.
func validEUCJP(b []byte, atEOF bool) bool {
	return eucCheck(b, atEOF) < 0
}

// eucCheck returns the offset of the first invalid byte, or -1.
func eucCheck(b []byte, atEOF bool) int {
	for i := 0; i < len(b); i++ {
		c := b[i]
		need := 0
		switch {
		case c < 0x80:
			continue
		case c == 0x8E:
			need = 1
			if i+1 < len(b) && (b[i+1] < 0xA1 || b[i+1] > 0xDF) {
				return i
			}
		case c == 0x8F:
			need = 2
		case c >= 0xA1 && c <= 0xFE:
			need = 1
		default:
			return i
		}
		if i+need >= len(b) {
			if atEOF {
				return i
			}
			return -1
		}
		for k := 1; k <= need; k++ {
			if c != 0x8E && (b[i+k] < 0xA1 || b[i+k] > 0xFE) {
				return i
			}
		}
		i += need
	}
	return -1
}

// validIn reports whether b (one field or row of a file already detected as enc) is valid in enc.
func validIn(enc string, b []byte) bool {
	switch enc {
	case EncCP932:
		return cp932Check(b, true) < 0
	case EncEUCJP:
		return eucCheck(b, true) < 0
	}
	return utf8.Valid(b)
}

// decoderFor returns the x/text encoding that turns enc into UTF-8 (nil for UTF-8 itself).
func decoderFor(enc string) encoding.Encoding {
	switch enc {
	case EncCP932:
		return japanese.ShiftJIS
	case EncEUCJP:
		return japanese.EUCJP
	case EncUTF16LE: // a byte order mark, when there is one, is dropped
		return unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)
	case EncUTF16BE:
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM)
	}
	return nil
}

// decodeText turns bytes of enc into a UTF-8 string for people (headers, values in messages).
// Invalid bytes become U+FFFD, never an error.
func decodeText(enc string, b []byte) string {
	if isASCII(b) {
		return string(b)
	}
	switch enc {
	case EncCP932, EncEUCJP:
		out, err := decoderFor(enc).NewDecoder().Bytes(b)
		if err == nil {
			return string(out)
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// isUTF16 reports whether enc is one of the UTF-16 forms (transcoded before reading).
func isUTF16(enc string) bool { return enc == EncUTF16LE || enc == EncUTF16BE }
