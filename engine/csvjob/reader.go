package csvjob

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Reader splits CSV records out of a byte slice that starts at a record boundary. It is the
// schema-agnostic half of the single-pass reader: no allocation per record, fields are
// sub-slices of the buffer, quoted fields are unescaped in place (the buffer is modified).
// It accepts LF, CRLF and lone CR line endings mixed in one file, quoted fields with doubled
// quotes and line breaks, and skips blank lines. It never fails: oddities are reported per record
// (Unterminated) for the caller to turn into row errors.
type Reader struct {
	buf   []byte
	pos   int
	delim byte
	stop  [256]bool
	// Line is the physical line (1-based) where the next record starts.
	Line int
	// Fields are the current record's fields, valid until the next call to Next.
	Fields [][]byte
	// RecLine is the line where the current record starts.
	RecLine int
	// High is true when the current record has a byte ≥ 0x80 (needs encoding checks).
	High bool
	// Unterminated is true when the current record ends inside a quoted field (end of buffer).
	Unterminated bool
	// Start and End are the current record's byte offsets in the buffer (End after its line break).
	Start, End int
}

// NewReader returns a Reader over buf using delimiter delim, numbering lines from firstLine.
func NewReader(buf []byte, delim byte, firstLine int) *Reader {
	r := &Reader{buf: buf, delim: delim, Line: firstLine, Fields: make([][]byte, 0, 16)}
	r.stop[delim] = true
	r.stop['\n'] = true
	r.stop['\r'] = true
	return r
}

// Offset is where the next record starts.
func (r *Reader) Offset() int { return r.pos }

// Next moves to the next non-blank record and reports whether there was one.
func (r *Reader) Next() bool {
	buf := r.buf
	n := len(buf)
	i := r.pos
	for i < n && (buf[i] == '\n' || buf[i] == '\r') { // blank lines
		if buf[i] == '\r' && i+1 < n && buf[i+1] == '\n' {
			i++
		}
		i++
		r.Line++
	}
	if i >= n {
		r.pos = n
		return false
	}
	r.Fields = r.Fields[:0]
	r.RecLine = r.Line
	r.Unterminated = false
	r.Start = i
	var acc byte
	delim := r.delim
	for {
		if i < n && buf[i] == '"' {
			i++
			start, w := i, i
			closed := false
			for i < n {
				c := buf[i]
				if c == '"' {
					if i+1 < n && buf[i+1] == '"' {
						buf[w] = '"'
						w++
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				if c == '\n' || (c == '\r' && (i+1 >= n || buf[i+1] != '\n')) {
					r.Line++
				}
				acc |= c
				buf[w] = c
				w++
				i++
			}
			if !closed {
				r.Unterminated = true
			}
			// Text after the closing quote (`"ab"c`) is kept as it is, as spreadsheets do.
			for i < n {
				c := buf[i]
				if c == delim || c == '\n' || c == '\r' {
					break
				}
				acc |= c
				buf[w] = c
				w++
				i++
			}
			r.Fields = append(r.Fields, buf[start:w])
		} else {
			start := i
			for i < n {
				c := buf[i]
				if r.stop[c] {
					break
				}
				acc |= c
				i++
			}
			r.Fields = append(r.Fields, buf[start:i])
		}
		if i < n && buf[i] == delim {
			i++
			if i >= n { // a trailing delimiter at the very end: one more empty field
				r.Fields = append(r.Fields, buf[i:i])
				break
			}
			continue
		}
		break
	}
	if i < n {
		if buf[i] == '\r' && i+1 < n && buf[i+1] == '\n' {
			i++
		}
		i++
		r.Line++
	}
	r.pos = i
	r.End = i
	r.High = acc >= 0x80
	return true
}

// lineSplitter finds record boundaries in a stream of buffers for validation: it counts records
// and physical lines and cuts the stream into chunks at record starts. Buffers without quotes and
// without lone CRs take a fast path (bytes.Count / bytes.IndexByte); the rest go byte by byte
// through the same state machine the Reader implements.
type lineSplitter struct {
	delim     byte
	state     int
	lastCR    bool
	line      int   // physical line at the current position
	rows      int64 // records ended so far
	chunkSize int64

	chunkStart     int64
	chunkStartLine int
	chunkRows0     int64
	chunks         []Chunk
	quoteLine      int // line where the open quoted field began

	// maxRecord, when above 0, is the longest record allowed, in bytes: the first record found
	// longer sets tooLong and longLine (the line it starts on), and the caller stops reading.
	maxRecord int64
	recStart  int64 // offset where the record in progress (or the blank lines before it) starts
	recLine   int   // the line it starts on
	tooLong   bool
	longLine  int
}

// recordEnds notes that a record (or a blank line) ends at offset end (exclusive), the next one
// starting on line next, and checks the one that ended against maxRecord.
func (s *lineSplitter) recordEnds(end int64, next int) {
	if s.maxRecord > 0 && !s.tooLong && end-s.recStart > s.maxRecord {
		s.tooLong, s.longLine = true, s.recLine
	}
	s.recStart, s.recLine = end, next
}

// checkOpen checks the record in progress, which reaches offset end, against maxRecord.
func (s *lineSplitter) checkOpen(end int64) {
	if s.maxRecord > 0 && !s.tooLong && end-s.recStart > s.maxRecord {
		s.tooLong, s.longLine = true, s.recLine
	}
}

const (
	sRecStart = iota
	sFieldStart
	sUnquoted
	sQuoted
	sQuoteQ
)

func (s *lineSplitter) cut(at int64, line int, rows int64) {
	if at <= s.chunkStart {
		return
	}
	s.chunks = append(s.chunks, Chunk{Index: len(s.chunks), Offset: s.chunkStart, Length: at - s.chunkStart,
		FirstLine: s.chunkStartLine, Rows: rows - s.chunkRows0})
	s.chunkStart, s.chunkStartLine, s.chunkRows0 = at, line, rows
}

// feed processes b, which starts at absolute offset off.
func (s *lineSplitter) feed(b []byte, off int64) {
	if len(b) == 0 {
		return
	}
	if !s.lastCR && s.state != sQuoted && s.state != sQuoteQ && bytes.IndexByte(b, '"') < 0 && b[len(b)-1] != '\r' {
		cr := bytes.Count(b, []byte{'\r'})
		if cr == 0 || cr == bytes.Count(b, []byte("\r\n")) {
			s.fast(b, off)
			return
		}
	}
	s.slow(b, off)
}

// countLines counts the line breaks in b and those of them that end an empty line ("\n\n",
// "\n\r\n"); startEmpty says the line in progress at b[0] is empty so far. It looks at eight
// bytes at a time: exact per-byte equality masks, shifted by one and two bytes to see the bytes
// before each line break, carried across words.
func countLines(b []byte, startEmpty bool) (nl, blank int64) {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	eq := func(x, pat uint64) uint64 {
		t := x ^ pat
		return ^(((t & lo7) + lo7) | t) & hi
	}
	var prevN, prevR uint64 // the previous word's masks
	if startEmpty {
		prevN = 1 << 63 // as if a line break came just before b
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		n := eq(x, 0x0a0a0a0a0a0a0a0a)
		if n == 0 {
			prevN, prevR = 0, eq(x, 0x0d0d0d0d0d0d0d0d)
			continue
		}
		r := eq(x, 0x0d0d0d0d0d0d0d0d)
		n1 := n<<8 | prevN>>56  // a line break one byte before
		n2 := n<<16 | prevN>>48 // two bytes before
		r1 := r<<8 | prevR>>56  // a CR one byte before
		nl += int64(bits.OnesCount64(n))
		blank += int64(bits.OnesCount64(n & (n1 | r1&n2)))
		prevN, prevR = n, r
	}
	// The tail byte by byte, with the same view of the two bytes before.
	p1, p2 := prevN>>63 != 0, prevN>>55&1 != 0 // '\n' one / two bytes back
	c1 := prevR>>63 != 0                       // '\r' one byte back
	for ; i < len(b); i++ {
		c := b[i]
		if c == '\n' {
			nl++
			if p1 || (c1 && p2) {
				blank++
			}
		}
		p2, p1, c1 = p1, c == '\n', c == '\r'
	}
	return nl, blank
}

func (s *lineSplitter) fast(b []byte, off int64) {
	if s.maxRecord > 0 {
		// Records end at every '\n' here (no quotes, every CR before a LF). A record longer than
		// the limit either spans the buffer's edges (seen from the first and last line breaks)
		// or, for a limit below the buffer's size, lies inside it.
		line := s.line
		if int64(len(b)) <= s.maxRecord {
			if p := bytes.IndexByte(b, '\n'); p < 0 {
				s.checkOpen(off + int64(len(b)))
			} else {
				s.recordEnds(off+int64(p)+1, line+1)
				q := bytes.LastIndexByte(b, '\n')
				// The record after the last line break starts on the line the walk below ends on.
				defer func() {
					s.recStart, s.recLine = off+int64(q)+1, s.line
					s.checkOpen(off + int64(len(b)))
				}()
			}
		} else {
			for pos := 0; ; {
				p := bytes.IndexByte(b[pos:], '\n')
				if p < 0 {
					s.checkOpen(off + int64(len(b)))
					break
				}
				line++
				pos += p + 1
				s.recordEnds(off+int64(pos), line)
			}
		}
	}
	// Walk the buffer segment by segment (cut to cut), counting each byte once.
	pos := 0
	startEmpty := s.state == sRecStart
	count := func(seg []byte) {
		nl, blank := countLines(seg, startEmpty)
		s.rows += nl - blank
		s.line += int(nl)
		if len(seg) > 0 {
			startEmpty = seg[len(seg)-1] == '\n'
		}
	}
	for {
		target := s.chunkStart + s.chunkSize
		rel := max(target-off-1, int64(pos))
		if rel >= int64(len(b)) {
			break
		}
		p := bytes.IndexByte(b[rel:], '\n')
		if p < 0 {
			break
		}
		end := int(rel) + p + 1
		count(b[pos:end])
		pos = end
		s.cut(off+int64(end), s.line, s.rows)
	}
	count(b[pos:])
	if b[len(b)-1] == '\n' {
		s.state = sRecStart
	} else if b[len(b)-1] == s.delim {
		s.state = sFieldStart
	} else {
		s.state = sUnquoted
	}
}

func (s *lineSplitter) slow(b []byte, off int64) {
	defer s.checkOpen(off + int64(len(b)))
	delim := s.delim
	for i := 0; i < len(b); i++ {
		c := b[i]
		if s.lastCR {
			s.lastCR = false
			if c == '\n' {
				continue
			}
		}
		switch s.state {
		case sQuoted:
			switch c {
			case '"':
				s.state = sQuoteQ
			case '\n':
				s.line++
			case '\r':
				s.line++
				s.lastCR = true
			}
			continue
		case sQuoteQ:
			if c == '"' {
				s.state = sQuoted
				continue
			}
			s.state = sUnquoted
		case sRecStart:
			if c == '\n' || c == '\r' {
				s.line++
				s.lastCR = c == '\r'
				s.recordEnds(off+int64(i)+1, s.line)
				continue
			}
			if at := off + int64(i); at-s.chunkStart >= s.chunkSize {
				s.cut(at, s.line, s.rows)
			}
			s.state = sFieldStart
		}
		// sFieldStart or sUnquoted
		switch {
		case c == '\n' || c == '\r':
			s.rows++
			s.line++
			s.lastCR = c == '\r'
			s.state = sRecStart
			s.recordEnds(off+int64(i)+1, s.line)
		case c == delim:
			s.state = sFieldStart
		case c == '"' && s.state == sFieldStart:
			s.state = sQuoted
			s.quoteLine = s.line
		default:
			s.state = sUnquoted
		}
	}
}

// finish closes the last record and chunk at end (the file's size) and reports whether the
// file ended inside a quoted field.
func (s *lineSplitter) finish(end int64) (unterminated bool) {
	switch s.state {
	case sQuoted:
		unterminated = true
		s.rows++
	case sFieldStart, sUnquoted, sQuoteQ:
		s.rows++
	}
	s.state = sRecStart
	s.cut(end, s.line, s.rows)
	return unterminated
}
