package csvjob

// The fast row path: nearly every row of a real file is plain ASCII, unquoted, has every field,
// and each mapped value is an integer in range or an ID of its pattern. Such a row is parsed,
// checked and its integers read in one pass over its bytes, without building a field list. Any
// other row (a quote, a byte ≥ 0x80, a blank line, a missing, malformed or out-of-range value, a
// wrong field count, the last line without a line break) is left to the general path, which
// finds and reports whatever is wrong; the fast path never rejects a row itself.

// fastKind is what the fast path does with one field of the file.
type fastKind uint8

const (
	fastSkip fastKind = iota // not in the schema: skipped over
	fastText                 // a string column without a pattern: any non-empty value
	fastInt                  // a plain integer column: digits only, within [min, max]
	fastID                   // an ID column: the pattern's prefix, then its digits
)

// fastField is the fast path's plan for one field of the file.
type fastField struct {
	kind     fastKind
	col      int    // schema column (not fastSkip)
	min, max int64  // fastInt bounds
	prefix   string // fastID
	digits   int    // fastID
}

// fastPlan is the fast path for a job, or nil when its schema has a column type the fast path
// does not check (decimal, date, boolean, a general pattern).
type fastPlan struct {
	fields  []fastField
	ints    []int     // schema columns of kind fastInt
	counted []int     // schema columns of kind fastText or fastID: one more value per row
	absent  []int     // schema columns not in the file: one more empty value per row
	stop    [256]bool // bytes that end a skipped or text field, or send the row to the general path
	keyNum  bool      // the key is a fastID field whose number users can use directly
	keyIdx  int       // file field of the key
	delim   byte
}

// newFastPlan returns the fast path for p, or nil.
func newFastPlan(p *plan) *fastPlan {
	f := &fastPlan{fields: make([]fastField, p.nfields), delim: p.delim, keyIdx: -1}
	for i := range f.fields {
		f.fields[i].col = -1
	}
	for i := range p.s.Columns {
		col := &p.s.Columns[i]
		j := p.cols[i]
		if j < 0 {
			f.absent = append(f.absent, i)
			continue
		}
		if j >= len(f.fields) || f.fields[j].col >= 0 {
			return nil
		}
		ff := fastField{col: i}
		switch {
		case col.plainInt:
			ff.kind, ff.min, ff.max = fastInt, col.min, col.max
			f.ints = append(f.ints, i)
		case col.plainID:
			ff.kind, ff.prefix, ff.digits = fastID, col.fastID.prefix, col.fastID.digits
			f.counted = append(f.counted, i)
		case col.Type == TypeString && col.Pattern == "":
			ff.kind = fastText
			f.counted = append(f.counted, i)
		default:
			return nil
		}
		f.fields[j] = ff
	}
	f.keyIdx = p.cols[p.keyCol]
	if k := f.fields[f.keyIdx]; k.kind == fastID && k.digits <= 7 && len(k.prefix) <= 16 {
		f.keyNum = true
	}
	for c := range 256 {
		f.stop[c] = c >= 0x80
	}
	for _, c := range []byte{p.delim, '\n', '\r', '"'} {
		f.stop[c] = true
	}
	return f
}

// row parses the row starting at buf[i] into nums (by schema column). It returns the offset
// after the row's line break, the key's bytes and, when keyNum, the number its digits spell; or
// end -1 when the row needs the general path.
func (f *fastPlan) row(buf []byte, i int, nums []int64) (end, keyStart, keyEnd, keyN int) {
	n := len(buf)
	last := len(f.fields) - 1
	for j := range f.fields {
		ff := &f.fields[j]
		start := i
		switch ff.kind {
		case fastInt:
			var x int64
			for i < n {
				d := buf[i] - '0'
				if d > 9 {
					break
				}
				x = x*10 + int64(d)
				i++
			}
			if i == start || i-start > 18 || x < ff.min || x > ff.max {
				return -1, 0, 0, 0
			}
			nums[ff.col] = x
		case fastID:
			w := len(ff.prefix) + ff.digits
			if n-i < w || string(buf[i:i+len(ff.prefix)]) != ff.prefix {
				return -1, 0, 0, 0
			}
			x := 0
			for i += len(ff.prefix); i < start+w; i++ {
				d := buf[i] - '0'
				if d > 9 {
					return -1, 0, 0, 0
				}
				x = x*10 + int(d)
			}
			if j == f.keyIdx {
				keyN = x
			}
		default:
			for i < n && !f.stop[buf[i]] {
				i++
			}
			if i == start && ff.kind == fastText {
				return -1, 0, 0, 0
			}
		}
		if j == f.keyIdx {
			keyStart, keyEnd = start, i
		}
		if i >= n {
			return -1, 0, 0, 0
		}
		c := buf[i]
		i++
		if j < last {
			if c != f.delim {
				return -1, 0, 0, 0
			}
			continue
		}
		switch c {
		case '\n':
		case '\r':
			if i < n && buf[i] == '\n' {
				i++
			}
		default:
			return -1, 0, 0, 0
		}
	}
	return i, keyStart, keyEnd, keyN
}
