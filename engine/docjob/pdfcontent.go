package docjob

import (
	"bufio"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/ledongthuc/pdf"
)

// A page's content stream is read by a lexer of its own rather than the PDF reader's
// PostScript interpreter: content is most of what converting a PDF reads, and the interpreter
// builds a value, a boxed token and a string for every number and operator. This one streams
// through the decoded bytes, keeps the operands of the current operator in a reused stack, and
// makes strings only of string operands and names. It reads what pageSpans needs (numbers,
// names, strings, arrays of them) and skips the rest: dictionaries (marked content), inline
// images (BI … ID binary data EI) and comments.

// operand is one operand of a content stream operator. Its bytes and elements are valid only
// while its operator is handled: the lexer reuses their memory for the next one.
type operand struct {
	kind  operandKind
	num   float64   // a number
	bytes []byte    // a string's bytes, or a name without its slash
	arr   []operand // an array's elements
}

type operandKind uint8

const (
	opNumber operandKind = iota + 1
	opString
	opName
	opArray
	opOther // true, false, null, a dictionary, a stray keyword inside an array
)

// Bounds on the operands read before an operator, so malformed content cannot take unbounded
// memory: their strings and names keep at most maxOperandBytes bytes in all, their arrays
// maxOperandElems elements in all (one array at most maxArrayLen), arrays and dictionaries nest
// maxNesting deep, and operands piling up beyond maxOperands are dropped.
const (
	maxOperandBytes = 4 << 20
	maxOperandElems = 1 << 16
	maxArrayLen     = 1 << 14
	maxNesting      = 32
	maxOperands     = 1 << 10
)

// contentOps names the operators pageSpans acts on: the lexer hands over every operator, but
// looks its name up here so that it makes no string for the others ("" is passed).
var contentOps = map[string]string{}

func init() {
	for _, op := range []string{"q", "Q", "cm", "BT", "ET", "Tf", "TL", "Tc", "Tw", "Tz", "Td", "TD",
		"Tm", "T*", "Tj", "'", "\"", "TJ", "Do"} {
		contentOps[op] = op
	}
}

// contentReader is the decoded bytes of a page's content: one stream or an array of them, read
// as if joined by white space.
func contentReader(strm pdf.Value) io.Reader {
	if strm.Kind() != pdf.Array {
		return strm.Reader()
	}
	var rs []io.Reader
	for i := 0; i < strm.Len(); i++ {
		if i > 0 {
			rs = append(rs, strings.NewReader("\n"))
		}
		rs = append(rs, strm.Index(i).Reader())
	}
	return io.MultiReader(rs...)
}

// contentBuffers are the lexers' read buffers, reused from page to page.
var contentBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// interpretContent calls do for each operator of the content r, in order, with its name (""
// for an operator not in contentOps) and its operands. args is valid only during the call.
func interpretContent(r io.Reader, do func(op string, args []operand)) {
	br := contentBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		contentBuffers.Put(br)
	}()
	lx := contentLexer{r: br}
	var stack []operand
	for {
		t, ok := lx.next()
		if !ok {
			return
		}
		switch t.kind {
		case tokOperator:
			if w := string(t.text); w == "true" || w == "false" || w == "null" {
				break // an operand
			}
			op := contentOps[string(t.text)]
			do(op, stack)
			stack = stack[:0]
			lx.elems, lx.bytes = lx.elems[:0], lx.bytes[:0]
			if string(t.text) == "ID" {
				lx.skipInlineImage()
			}
			continue
		case tokArrayEnd, tokDictEnd:
			continue // unbalanced: ignored
		}
		if len(stack) >= maxOperands {
			stack = stack[:0]
			lx.elems, lx.bytes = lx.elems[:0], lx.bytes[:0]
		}
		v := lx.operand(t, 0)
		stack = append(stack, v)
	}
}

type tokenKind uint8

const (
	tokNumber tokenKind = iota + 1
	tokString
	tokName
	tokOperator // any other keyword, true, false and null among them
	tokArrayStart
	tokArrayEnd
	tokDictStart
	tokDictEnd
)

type token struct {
	kind tokenKind
	num  float64
	text []byte // a string's bytes, a name or a keyword: valid until the next token
}

type contentLexer struct {
	r   *bufio.Reader
	buf []byte // the token being read
	// The current operator's operands' bytes and array elements (arrays being read are built
	// in scratch, one per depth, then copied to elems).
	bytes   []byte
	elems   []operand
	scratch [][]operand
}

// keep copies b into the operands' bytes (as much as the bound leaves room for).
func (lx *contentLexer) keep(b []byte) []byte {
	start := len(lx.bytes)
	lx.bytes = append(lx.bytes, b[:min(len(b), maxOperandBytes-start)]...)
	return lx.bytes[start:len(lx.bytes):len(lx.bytes)]
}

func (lx *contentLexer) operand(t token, depth int) operand {
	switch t.kind {
	case tokNumber:
		return operand{kind: opNumber, num: t.num}
	case tokString:
		return operand{kind: opString, bytes: lx.keep(t.text)}
	case tokName:
		return operand{kind: opName, bytes: lx.keep(t.text)}
	case tokArrayStart:
		for len(lx.scratch) <= depth {
			lx.scratch = append(lx.scratch, nil)
		}
		arr := lx.scratch[depth][:0]
		for {
			e, ok := lx.next()
			if !ok || e.kind == tokArrayEnd {
				lx.scratch[depth] = arr
				start := len(lx.elems)
				lx.elems = append(lx.elems, arr[:min(len(arr), maxOperandElems-start)]...)
				return operand{kind: opArray, arr: lx.elems[start:len(lx.elems):len(lx.elems)]}
			}
			if e.kind == tokDictEnd {
				continue
			}
			var v operand
			if depth >= maxNesting && (e.kind == tokArrayStart || e.kind == tokDictStart) {
				lx.skipNested(e.kind)
				v = operand{kind: opOther}
			} else {
				v = lx.operand(e, depth+1)
			}
			if len(arr) < maxArrayLen {
				arr = append(arr, v)
			}
		}
	case tokDictStart:
		lx.skipNested(tokDictStart)
	}
	return operand{kind: opOther}
}

// skipNested reads on to the end of the array or dictionary whose start was just read.
func (lx *contentLexer) skipNested(start tokenKind) {
	depth := 1
	for depth > 0 {
		t, ok := lx.next()
		if !ok {
			return
		}
		switch t.kind {
		case tokArrayStart, tokDictStart:
			depth++
		case tokArrayEnd, tokDictEnd:
			depth--
		}
	}
}

// skipInlineImage reads past an inline image's data, after its ID operator: to the first EI
// standing alone between white space (the data's length is not given in general).
func (lx *contentLexer) skipInlineImage() {
	prev := byte(' ')
	for {
		c, err := lx.r.ReadByte()
		if err != nil {
			return
		}
		if c == 'E' && isPDFSpace(prev) {
			if next, _ := lx.r.Peek(2); len(next) >= 1 && next[0] == 'I' && (len(next) == 1 || isPDFSpace(next[1])) {
				lx.r.ReadByte()
				return
			}
		}
		prev = c
	}
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// next reads the next token; false at the end of the content.
func (lx *contentLexer) next() (token, bool) {
	r := lx.r
	for {
		c, err := r.ReadByte()
		if err != nil {
			return token{}, false
		}
		switch {
		case isPDFSpace(c):
			continue
		case c == '%':
			for c != '\n' && c != '\r' {
				if c, err = r.ReadByte(); err != nil {
					return token{}, false
				}
			}
			continue
		case c == '(':
			return token{kind: tokString, text: lx.literalString()}, true
		case c == '<':
			if n, _ := r.Peek(1); len(n) == 1 && n[0] == '<' {
				r.ReadByte()
				return token{kind: tokDictStart}, true
			}
			return token{kind: tokString, text: lx.hexString()}, true
		case c == '>':
			if n, _ := r.Peek(1); len(n) == 1 && n[0] == '>' {
				r.ReadByte()
			}
			return token{kind: tokDictEnd}, true
		case c == '[':
			return token{kind: tokArrayStart}, true
		case c == ']':
			return token{kind: tokArrayEnd}, true
		case c == '{' || c == '}' || c == ')':
			continue // not content syntax: ignored
		case c == '/':
			return token{kind: tokName, text: lx.name()}, true
		case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
			r.UnreadByte()
			if num, ok := lx.number(); ok {
				return token{kind: tokNumber, num: num}, true
			}
			return token{kind: tokOperator, text: lx.buf}, true
		default:
			r.UnreadByte()
			return token{kind: tokOperator, text: lx.word()}, true
		}
	}
}

// word reads a run of regular characters.
func (lx *contentLexer) word() []byte {
	lx.buf = lx.buf[:0]
	for {
		c, err := lx.r.ReadByte()
		if err != nil {
			return lx.buf
		}
		if isPDFSpace(c) || isPDFDelim(c) {
			lx.r.UnreadByte()
			return lx.buf
		}
		if len(lx.buf) < 256 {
			lx.buf = append(lx.buf, c)
		}
	}
}

// number reads a number (digits with an optional sign and decimal point); false, with the word
// in lx.buf, when the word read is not one.
func (lx *contentLexer) number() (float64, bool) {
	w := lx.word()
	neg := false
	i := 0
	for i < len(w) && (w[i] == '+' || w[i] == '-') {
		neg = neg != (w[i] == '-')
		i++
	}
	var mant float64
	scale := 0
	digits, point := 0, false
	for ; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			mant = mant*10 + float64(c-'0')
			digits++
			if point {
				scale++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, i == len(w) && len(w) > 0 // "-" or "." alone reads as 0
	}
	v := mant / math.Pow10(scale)
	if neg {
		v = -v
	}
	return v, true
}

// name reads a name after its slash, with #xx escapes decoded.
func (lx *contentLexer) name() []byte {
	w := lx.word()
	out := w[:0]
	for i := 0; i < len(w); i++ {
		if w[i] == '#' && i+2 < len(w) {
			if h, ok := unhex(w[i+1], w[i+2]); ok {
				out = append(out, h)
				i += 2
				continue
			}
		}
		out = append(out, w[i])
	}
	return out
}

func unhex(a, b byte) (byte, bool) {
	x, ok1 := hexDigit(a)
	y, ok2 := hexDigit(b)
	return x<<4 | y, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hexString reads a hexadecimal string after its <; white space inside is ignored and an odd
// last digit stands for its high half.
func (lx *contentLexer) hexString() []byte {
	lx.buf = lx.buf[:0]
	var hi byte
	half := false
	for {
		c, err := lx.r.ReadByte()
		if err != nil || c == '>' {
			break
		}
		d, ok := hexDigit(c)
		if !ok {
			continue
		}
		if !half {
			hi, half = d, true
			continue
		}
		if len(lx.buf) < maxOperandBytes {
			lx.buf = append(lx.buf, hi<<4|d)
		}
		half = false
	}
	if half && len(lx.buf) < maxOperandBytes {
		lx.buf = append(lx.buf, hi<<4)
	}
	return lx.buf
}

// literalString reads a literal string after its (: balanced parentheses, escapes (\n, \ddd,
// a backslash before a line end continues the line; before another character it is dropped).
func (lx *contentLexer) literalString() []byte {
	lx.buf = lx.buf[:0]
	r := lx.r
	depth := 1
	put := func(c byte) {
		if len(lx.buf) < maxOperandBytes {
			lx.buf = append(lx.buf, c)
		}
	}
	for {
		c, err := r.ReadByte()
		if err != nil {
			return lx.buf
		}
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return lx.buf
			}
		case '\r':
			// an end of line in a string is a line feed
			if n, _ := r.Peek(1); len(n) == 1 && n[0] == '\n' {
				r.ReadByte()
			}
			c = '\n'
		case '\\':
			if c, err = r.ReadByte(); err != nil {
				return lx.buf
			}
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if n, _ := r.Peek(1); len(n) == 1 && n[0] == '\n' {
					r.ReadByte()
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				x := c - '0'
				for k := 0; k < 2; k++ {
					n, _ := r.Peek(1)
					if len(n) == 0 || n[0] < '0' || n[0] > '7' {
						break
					}
					r.ReadByte()
					x = x<<3 | (n[0] - '0')
				}
				c = x
			}
		}
		put(c)
	}
}

// name is a name operand's name ("" for another kind).
func (o operand) name() string {
	if o.kind != opName {
		return ""
	}
	return string(o.bytes)
}

// string is a string operand's bytes ("" for another kind).
func (o operand) string() string {
	if o.kind != opString {
		return ""
	}
	return string(o.bytes)
}
