package csvjob

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Error kinds of row errors: the Step Functions error names the seed's Map catches.
const (
	KindBusiness   = "BusinessError"       // a value breaks a business rule (below min, above max)
	KindValidation = "DataValidationError" // a value or row is malformed (not an integer, pattern, field count)
	KindSystem     = "SystemError"         // a chunk could not be processed at all
)

// RowError is one rejected row or value: where it is (line, column), what it was and why, in
// English and Japanese. Rows with errors never reach the table.
type RowError struct {
	Line     int    `json:"line"`
	Column   string `json:"column"`
	Value    string `json:"value"`
	Reason   string `json:"reason"`
	ReasonJa string `json:"reason_ja"`
	Kind     string `json:"kind"`
}

// ColumnStats are per-column statistics over the accepted rows.
type ColumnStats struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Count    int64   `json:"count"`              // non-empty values in accepted rows
	Empty    int64   `json:"empty"`              // empty values in accepted rows
	Invalid  int64   `json:"invalid"`            // values rejected
	Min      float64 `json:"min,omitempty"`      // numbers
	Max      float64 `json:"max,omitempty"`      // numbers
	Sum      float64 `json:"sum,omitempty"`      // numbers
	IntSum   int64   `json:"int_sum,omitempty"`  // exact sum of integers
	MinText  string  `json:"min_text,omitempty"` // dates
	MaxText  string  `json:"max_text,omitempty"` // dates
	Distinct int64   `json:"distinct,omitempty"` // the key column: distinct users
	hasNum   bool
}

func (c *ColumnStats) num(v float64) {
	if !c.hasNum || v < c.Min {
		c.Min = v
	}
	if !c.hasNum || v > c.Max {
		c.Max = v
	}
	c.hasNum = true
	c.Sum += v
}

func (c *ColumnStats) merge(o ColumnStats) {
	c.Count += o.Count
	c.Empty += o.Empty
	c.Invalid += o.Invalid
	c.IntSum += o.IntSum
	if o.hasNum || o.Count > 0 && (c.Type == TypeInteger || c.Type == TypeDecimal) {
		if !c.hasNum || o.Min < c.Min {
			c.Min = o.Min
		}
		if !c.hasNum || o.Max > c.Max {
			c.Max = o.Max
		}
		c.hasNum = true
		c.Sum += o.Sum
	}
	if o.MinText != "" && (c.MinText == "" || o.MinText < c.MinText) {
		c.MinText = o.MinText
	}
	if o.MaxText > c.MaxText {
		c.MaxText = o.MaxText
	}
}

// users adds rows up per user. Each user has a record: the row count, then one value per
// combined column, side by side so a row touches one cache line. Keys of the common shape
// "fixed prefix + fixed-width digits" (U00001) keep their record in an array indexed by their
// number (no lookup, no key stored: the number spells the key); other keys are found through a
// map and live in one byte arena. compact turns both into one list of users, in key order for
// the numbered ones, which is what a partial stores and the table update reads.
type users struct {
	prefix  string
	width   int
	learned bool
	direct  []int64 // records of numbered keys, number × stride; rows 0 = not seen
	m       map[string]int32
	KeyBuf  []byte  // the keys, end to end
	KeyEnd  []int32 // end of key i in KeyBuf
	stride  int     // 1 + len(rules)
	rec     []int64 // user i: rec[i*stride] rows, rec[i*stride+1+k] combined column k
	rules   []combineRule
}

// combineRule is a Combine* rule resolved once, so combining a row compares small integers.
type combineRule uint8

const (
	ruleFirst combineRule = iota // keep the first value (also any rule not listed)
	ruleSum
	ruleMax
	ruleMin
	ruleLast
)

func newUsers(rules []string) *users {
	u := &users{m: map[string]int32{}, stride: 1 + len(rules)}
	for _, r := range rules {
		k := map[string]combineRule{CombineSum: ruleSum, CombineMax: ruleMax, CombineMin: ruleMin, CombineLast: ruleLast}[r]
		u.rules = append(u.rules, k)
	}
	return u
}

// n is the number of users (it compacts u first).
func (u *users) n() int {
	u.compact()
	return len(u.KeyEnd)
}

// The accessors below read user i after compact.

// key returns user i's key.
func (u *users) key(i int) []byte {
	start := int32(0)
	if i > 0 {
		start = u.KeyEnd[i-1]
	}
	return u.KeyBuf[start:u.KeyEnd[i]]
}

// rows is how many rows user i had.
func (u *users) rows(i int) int64 { return u.rec[i*u.stride] }

// val is user i's combined value of column k.
func (u *users) val(k, i int) int64 { return u.rec[i*u.stride+1+k] }

// compact moves the numbered users into the key list (in number order, before the others).
func (u *users) compact() {
	if u.direct == nil {
		return
	}
	seen := 0
	for i := 0; i < len(u.direct); i += u.stride {
		if u.direct[i] != 0 {
			seen++
		}
	}
	users := seen + len(u.KeyEnd)
	keys := make([]byte, 0, seen*(len(u.prefix)+u.width)+len(u.KeyBuf))
	ends := make([]int32, 0, users)
	rec := make([]int64, 0, users*u.stride)
	digits := make([]byte, u.width)
	for num := 0; num*u.stride < len(u.direct); num++ {
		r := u.direct[num*u.stride : (num+1)*u.stride]
		if r[0] == 0 {
			continue
		}
		for j, x := len(digits)-1, num; j >= 0; j, x = j-1, x/10 {
			digits[j] = byte('0' + x%10)
		}
		keys = append(append(keys, u.prefix...), digits...)
		ends = append(ends, int32(len(keys)))
		rec = append(rec, r...)
	}
	base := int32(len(keys))
	keys = append(keys, u.KeyBuf...)
	for _, e := range u.KeyEnd {
		ends = append(ends, base+e)
	}
	rec = append(rec, u.rec...)
	u.KeyBuf, u.KeyEnd, u.rec = keys, ends, rec
	// Numbered and mapped users are now one list; a later record call finds them by key.
	u.direct, u.width, u.m = nil, 0, nil
}

// columns compacts u and returns the values per combined column and the rows per user, as a
// partial stores them.
func (u *users) columns() ([][]int64, []int32) {
	u.compact()
	n := u.n()
	vals := make([][]int64, len(u.rules))
	for k := range vals {
		vals[k] = make([]int64, n)
		for i := range n {
			vals[k][i] = u.val(k, i)
		}
	}
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(u.rows(i))
	}
	return vals, rows
}

// maxDirect bounds the numbered records (numbers × stride × 8 bytes): larger numbers use the map.
const maxDirect = 1 << 20

// number returns the number a key of the learned "prefix + digits" shape spells.
func number[T string | []byte](u *users, key T) (int, bool) {
	if !u.learned {
		u.learned = true
		i := len(key)
		for i > 0 && key[i-1] >= '0' && key[i-1] <= '9' {
			i--
		}
		w := len(key) - i
		if w >= 1 && w <= 7 && i <= 16 {
			u.prefix, u.width = string(key[:i]), w
		}
	}
	if u.width == 0 || len(key) != len(u.prefix)+u.width || string(key[:len(u.prefix)]) != u.prefix {
		return 0, false
	}
	n := 0
	for j := len(u.prefix); j < len(key); j++ {
		d := key[j] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int(d)
	}
	return n, n < maxDirect
}

func pow10(w int) int {
	n := 1
	for ; w > 0; w-- {
		n *= 10
	}
	return n
}

// record returns key's record (stride values), adding the user when new.
func record[T string | []byte](u *users, key T) []int64 {
	if n, ok := number(u, key); ok {
		return u.numbered(n)
	}
	if u.m == nil { // after compact: index the list by key
		u.m = make(map[string]int32, len(u.KeyEnd))
		for j := range u.KeyEnd {
			u.m[string(u.key(j))] = int32(j)
		}
	}
	i, ok := u.m[string(key)]
	if !ok {
		i = u.add([]byte(key))
		u.m[string(key)] = i
	}
	s := u.stride
	return u.rec[int(i)*s : int(i+1)*s : int(i+1)*s]
}

// numbered returns the record of the user whose key spells number n (n < maxDirect).
func (u *users) numbered(n int) []int64 {
	s := u.stride
	if (n+1)*s > len(u.direct) {
		grow := max(n+1, 2*len(u.direct)/s)
		if len(u.direct) == 0 { // numbers of this width fit in 10^width records: take them at once
			grow = max(grow, min(pow10(u.width), 1<<17))
		}
		grow = min(max(grow, 1024), maxDirect)
		nd := make([]int64, grow*s)
		copy(nd, u.direct)
		u.direct = nd
	}
	// No test of the record here: a row adds to it without waiting for it to arrive from
	// memory, so the next row's parsing overlaps the cache miss.
	return u.direct[n*s : (n+1)*s : (n+1)*s]
}

// tally adds a row's combined values (nums, by schema column) to its user's record.
func (p *plan) tally(u *users, rec, nums []int64) {
	if p.sumOnly { // records start at zero: a sum needs no first-row case
		for k, ci := range p.combined {
			rec[1+k] += nums[ci]
		}
	} else {
		first := rec[0] == 0
		for k, ci := range p.combined {
			u.combine(rec, k, nums[ci], first)
		}
	}
	rec[0]++
}

func (u *users) add(key []byte) int32 {
	i := int32(len(u.KeyEnd))
	u.KeyBuf = append(u.KeyBuf, key...)
	u.KeyEnd = append(u.KeyEnd, int32(len(u.KeyBuf)))
	for range u.stride {
		u.rec = append(u.rec, 0)
	}
	return i
}

// combine folds value v of combined column k into record r; first says this is the user's
// first row.
func (u *users) combine(r []int64, k int, v int64, first bool) {
	p := &r[1+k]
	if first {
		*p = v
		return
	}
	switch u.rules[k] {
	case ruleSum:
		*p += v
	case ruleMax:
		*p = max(*p, v)
	case ruleMin:
		*p = min(*p, v)
	case ruleLast:
		*p = v
	}
}

// merge adds the users of partial p (a later chunk) into u.
func (u *users) merge(p *partial) {
	start := int32(0)
	for j, end := range p.KeyEnd {
		r := record(u, p.KeyBuf[start:end])
		start = end
		first := r[0] == 0
		for k := range u.rules {
			u.combine(r, k, p.Vals[k][j], first)
		}
		r[0] += int64(p.UserRows[j])
	}
}

// partial is one chunk's outcome, staged until aggregation.
type partial struct {
	Chunk      int
	Rows       int64
	Failed     int64
	ErrorCount int64
	Errors     []RowError
	KeyBuf     []byte
	KeyEnd     []int32
	Vals       [][]int64
	UserRows   []int32
	Stats      []ColumnStats
	Audit      []int // with AuditAll: the lines of accepted rows
}

// consistent reports whether p's per-user arrays agree with each other and with a plan that
// combines ncombined columns (a staged partial is read back from a file).
func (p *partial) consistent(ncombined int) bool {
	if len(p.Vals) != ncombined || len(p.UserRows) != len(p.KeyEnd) {
		return false
	}
	for _, v := range p.Vals {
		if len(v) != len(p.KeyEnd) {
			return false
		}
	}
	prev := int32(0)
	for _, end := range p.KeyEnd {
		if end < prev || int(end) > len(p.KeyBuf) {
			return false
		}
		prev = end
	}
	return true
}

// plan is the per-job preparation shared by all chunks.
type plan struct {
	s        *Schema
	cols     []int
	nfields  int
	enc      string
	delim    byte
	combined []int // schema column indexes combined per user (mapped integer fields)
	rules    []string
	sumOnly  bool      // every combined column adds up (the default rule)
	fast     *fastPlan // the fast row path, nil when the schema needs the general one
	keyCol   int
	maxErr   int
}

func newPlan(jc *jobContext) (*plan, error) {
	s, err := jc.Options.schema()
	if err != nil {
		return nil, err
	}
	v := &jc.Validation
	p := &plan{s: s, cols: v.Columns, nfields: v.ColumnCount, enc: v.Encoding, delim: v.Delimiter[0],
		keyCol: s.keyIdx, maxErr: jc.Options.MaxErrorRecords}
	if p.maxErr <= 0 {
		p.maxErr = DefaultMaxErrorRecords
	}
	if len(p.cols) != len(s.Columns) {
		return nil, job.Errorf(job.E016, "the job context does not match its schema").WithName("States.TaskFailed")
	}
	for i, c := range s.Columns {
		if c.Field == FieldLoginCount || c.Field == FieldPostCount {
			p.combined = append(p.combined, i)
			p.rules = append(p.rules, c.Combine)
		}
	}
	p.sumOnly = !slices.ContainsFunc(p.rules, func(r string) bool { return r != CombineSum })
	p.fast = newFastPlan(p)
	return p, nil
}

func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// chunkBufs keeps chunk buffers between chunks and jobs: a fresh one would be zeroed and
// faulted in page by page only to be overwritten by the read. Nothing returned by parseChunk
// points into the buffer.
var chunkBufs = sync.Pool{New: func() any { return new([]byte) }}

// processChunk reads chunk c of the job's file (a byte range of the object) and validates and
// combines its rows.
func processChunk(ctx context.Context, bs blob.Store, jc *jobContext, p *plan, c Chunk, auditAll bool) (*partial, error) {
	if c.Length < 0 || c.Length > 1<<30 {
		return nil, job.Errorf(job.E014, "chunk %d has an invalid length %d", c.Index, c.Length).WithName(KindValidation)
	}
	f, err := bs.OpenRange(ctx, jc.Validation.ReadPath, c.Offset, c.Length)
	if err != nil {
		return nil, job.Wrap(job.E004, err, "the CSV file cannot be read any more").
			WithJa("CSVファイルを読み取れなくなりました。").WithName("TemporaryError").Transient()
	}
	defer f.Close()
	bp := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(bp)
	if int64(cap(*bp)) < c.Length {
		*bp = make([]byte, c.Length)
	}
	buf := (*bp)[:c.Length]
	if _, err := io.ReadFull(f, buf); err != nil && err != io.EOF {
		return nil, job.Wrap(job.E004, err, "the CSV file cannot be read any more").
			WithJa("CSVファイルを読み取れなくなりました。").WithName("TemporaryError").Transient()
	}
	return parseChunk(ctx, buf, p, c, auditAll)
}

// parseChunk validates and combines the records in buf (chunk c).
func parseChunk(ctx context.Context, buf []byte, p *plan, c Chunk, auditAll bool) (*partial, error) {
	s := p.s
	u := newUsers(p.rules)
	stats := make([]ColumnStats, len(s.Columns))
	for i, col := range s.Columns {
		stats[i] = ColumnStats{Name: col.Name, Type: col.Type}
	}
	out := &partial{Chunk: c.Index}
	nums := make([]int64, len(s.Columns))
	imin, imax := make([]int64, len(s.Columns)), make([]int64, len(s.Columns))
	flts := make([]float64, len(s.Columns))
	texts := make([]string, len(s.Columns))
	r := NewReader(buf, p.delim, c.FirstLine)
	addErr := func(e RowError) {
		out.ErrorCount++
		if len(out.Errors) < p.maxErr {
			e.Value = clip(e.Value)
			out.Errors = append(out.Errors, e)
		}
	}
	utf8File := p.enc == EncUTF8 || p.enc == EncUTF8BOM || isUTF16(p.enc)
	keyCol := p.cols[p.keyCol]
	if k := s.Columns[p.keyCol]; k.plainID && k.fastID.digits <= 7 && len(k.fastID.prefix) <= 16 {
		// Keys are numbered by their pattern's digits, whatever key comes first.
		u.learned, u.prefix, u.width = true, k.fastID.prefix, k.fastID.digits
	}
	fp := p.fast
	var fastRows int64
	for {
		if fp != nil {
			if end, ks, ke, kn := fp.row(buf, r.pos, nums); end >= 0 {
				if out.Rows++; out.Rows&0xFFFF == 0 && ctx.Err() != nil {
					return nil, cancelled(ctx.Err())
				}
				for _, ci := range fp.ints {
					addInt(&stats[ci], nums[ci], &imin[ci], &imax[ci])
				}
				var rec []int64
				if fp.keyNum && kn < maxDirect {
					rec = u.numbered(kn)
				} else {
					rec = record(u, buf[ks:ke])
				}
				p.tally(u, rec, nums)
				if auditAll {
					out.Audit = append(out.Audit, r.Line)
				}
				fastRows++
				r.pos = end
				r.Line++
				continue
			}
		}
		if !r.Next() {
			break
		}
		if out.Rows++; out.Rows&0xFFFF == 0 && ctx.Err() != nil {
			return nil, cancelled(ctx.Err())
		}
		fs := r.Fields
		if r.Unterminated {
			addErr(RowError{Line: r.RecLine, Value: decodeText(p.enc, buf[r.Start:r.End]), Kind: KindValidation,
				Reason: "a quoted value is not closed", ReasonJa: "引用符で囲まれた値が閉じていません"})
			out.Failed++
			continue
		}
		if len(fs) != p.nfields {
			addErr(RowError{Line: r.RecLine, Value: decodeText(p.enc, trimEOL(buf[r.Start:r.End])), Kind: KindValidation,
				Reason:   fmt.Sprintf("expected %d fields, found %d", p.nfields, len(fs)),
				ReasonJa: fmt.Sprintf("項目数が %d ではなく %d です", p.nfields, len(fs))})
			out.Failed++
			continue
		}
		bad := false
		if r.High {
			for i, j := range p.cols {
				if j < 0 || isASCII(fs[j]) {
					continue
				}
				ok := false
				if utf8File {
					ok = utf8.Valid(fs[j])
				} else {
					ok = validIn(p.enc, fs[j])
				}
				if !ok {
					addErr(RowError{Line: r.RecLine, Column: s.Columns[i].Name, Value: decodeText(p.enc, fs[j]), Kind: KindValidation,
						Reason:   "contains bytes that are not valid " + p.enc,
						ReasonJa: p.enc + " として正しくないバイトがあります"})
					bad = true
				}
			}
			if bad {
				out.Failed++
				continue
			}
		}
		for i := range s.Columns {
			j := p.cols[i]
			if j < 0 {
				continue
			}
			col := &s.Columns[i]
			v := fs[j]
			if len(v) == 0 {
				nums[i] = 0 // an empty optional number is combined as 0
				if col.Required {
					addErr(RowError{Line: r.RecLine, Column: col.Name, Kind: KindValidation,
						Reason: "a required value is missing", ReasonJa: "必須の値がありません"})
					bad = true
				}
				continue
			}
			// The common cases first, without a call: an integer in range, an ID of its pattern.
			if col.plainInt {
				if x, ok := parseInt(v); ok && x >= col.min && x <= col.max {
					nums[i] = x
					continue
				}
			} else if col.plainID && col.fastID.match(v) {
				continue
			}
			if msg, ja, kind := checkValue(col, v, p.enc, &nums[i], &flts[i], &texts[i]); msg != "" {
				addErr(RowError{Line: r.RecLine, Column: col.Name, Value: decodeText(p.enc, v), Kind: kind, Reason: msg, ReasonJa: ja})
				stats[i].Invalid++
				bad = true
			}
		}
		if bad {
			out.Failed++
			continue
		}
		for i := range s.Columns {
			j := p.cols[i]
			st := &stats[i]
			if j < 0 || len(fs[j]) == 0 {
				st.Empty++
				continue
			}
			if s.Columns[i].Type == TypeInteger {
				addInt(st, nums[i], &imin[i], &imax[i])
				continue
			}
			st.Count++
			switch s.Columns[i].Type {
			case TypeDecimal:
				st.num(flts[i])
			case TypeDate:
				if st.MinText == "" || texts[i] < st.MinText {
					st.MinText = texts[i]
				}
				if texts[i] > st.MaxText {
					st.MaxText = texts[i]
				}
			}
		}
		key := fs[keyCol]
		var rec []int64
		if r.High && !isASCII(key) {
			rec = record(u, decodeText(p.enc, key))
		} else {
			rec = record(u, key)
		}
		p.tally(u, rec, nums)
		if auditAll {
			out.Audit = append(out.Audit, r.RecLine)
		}
	}
	if fp != nil {
		for _, ci := range fp.counted {
			stats[ci].Count += fastRows
		}
		for _, ci := range fp.absent {
			stats[ci].Empty += fastRows
		}
	}
	for i := range stats {
		if st := &stats[i]; st.Type == TypeInteger && st.Count > 0 {
			st.Min, st.Max, st.Sum, st.hasNum = float64(imin[i]), float64(imax[i]), float64(st.IntSum), true
		}
	}
	out.Vals, out.UserRows = u.columns() // compacts u first
	out.KeyBuf, out.KeyEnd, out.Stats = u.KeyBuf, u.KeyEnd, stats
	return out, nil
}

// addInt counts integer x in st, keeping the running min and max as integers in lo and hi
// (folded into Min and Max when the chunk ends).
func addInt(st *ColumnStats, x int64, lo, hi *int64) {
	st.Count++
	st.IntSum += x
	if st.Count == 1 || x < *lo {
		*lo = x
	}
	if st.Count == 1 || x > *hi {
		*hi = x
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// checkValue validates v against col; it returns an English and a Japanese reason and the error
// kind when v is rejected, and leaves the parsed number in *n / *f and a date in *t.
func checkValue(col *Column, v []byte, enc string, n *int64, f *float64, t *string) (string, string, string) {
	switch col.Type {
	case TypeInteger:
		x, ok := parseInt(v)
		if !ok {
			return "not an integer", "整数ではありません", KindValidation
		}
		if x < col.min {
			if col.min == 0 {
				return "negative number (must be 0 or more)", "負の数です（0以上である必要があります）", KindBusiness
			}
			return "below the minimum " + strconv.FormatInt(col.min, 10), "最小値 " + strconv.FormatInt(col.min, 10) + " より小さい値です", KindBusiness
		}
		if x > col.max {
			return "above the maximum " + strconv.FormatInt(col.max, 10), "最大値 " + strconv.FormatInt(col.max, 10) + " より大きい値です", KindBusiness
		}
		*n = x
	case TypeDecimal:
		x, ok := parseDecimal(v)
		if !ok {
			return "not a decimal number", "数値ではありません", KindValidation
		}
		if col.Min != nil && x < *col.Min {
			return "below the minimum " + strconv.FormatFloat(*col.Min, 'g', -1, 64), "最小値 " + strconv.FormatFloat(*col.Min, 'g', -1, 64) + " より小さい値です", KindBusiness
		}
		if col.Max != nil && x > *col.Max {
			return "above the maximum " + strconv.FormatFloat(*col.Max, 'g', -1, 64), "最大値 " + strconv.FormatFloat(*col.Max, 'g', -1, 64) + " より大きい値です", KindBusiness
		}
		*f = x
	case TypeDate:
		d, ok := parseDate(v)
		if !ok {
			return "not a date (YYYY-MM-DD)", "日付（YYYY-MM-DD）ではありません", KindValidation
		}
		if col.MinDate != "" && d < normDate(col.MinDate) {
			return "before " + col.MinDate, col.MinDate + " より前の日付です", KindBusiness
		}
		if col.MaxDate != "" && d > normDate(col.MaxDate) {
			return "after " + col.MaxDate, col.MaxDate + " より後の日付です", KindBusiness
		}
		*t = d
	case TypeBoolean:
		if _, ok := parseBool(v); !ok {
			return "not true or false", "真偽値（true/false）ではありません", KindValidation
		}
	}
	if col.fastID != nil {
		if !col.fastID.match(v) {
			return "does not match the pattern " + col.Pattern, "形式 " + col.Pattern + " に一致しません", KindValidation
		}
	} else if col.re != nil {
		var ok bool
		if isASCII(v) {
			ok = col.re.Match(v)
		} else {
			ok = col.re.MatchString(decodeText(enc, v))
		}
		if !ok {
			return "does not match the pattern " + col.Pattern, "形式 " + col.Pattern + " に一致しません", KindValidation
		}
	}
	return "", "", ""
}

func normDate(s string) string {
	d, _ := parseDate([]byte(s))
	return d
}
