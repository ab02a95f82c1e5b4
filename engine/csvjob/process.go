package csvjob

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

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

// users adds rows up per user. Users get dense indexes into arrays; keys of the common shape
// "fixed prefix + fixed-width digits" (U00001) are found through an array indexed by their number,
// others through a map. Keys live in one byte arena, so adding a user allocates nothing per user.
type users struct {
	prefix  string
	width   int
	learned bool
	dense   []int32 // number → index+1
	m       map[string]int32
	KeyBuf  []byte    // the keys, end to end
	KeyEnd  []int32   // end of key i in KeyBuf
	Vals    [][]int64 // per combined column, per user
	Rows    []int32   // rows per user
	rules   []string
}

func newUsers(rules []string) *users {
	return &users{m: map[string]int32{}, Vals: make([][]int64, len(rules)), rules: rules}
}

// n is the number of users.
func (u *users) n() int { return len(u.KeyEnd) }

// key returns user i's key.
func (u *users) key(i int) []byte {
	start := int32(0)
	if i > 0 {
		start = u.KeyEnd[i-1]
	}
	return u.KeyBuf[start:u.KeyEnd[i]]
}

const maxDense = 10_000_000

func denseNum[T string | []byte](u *users, key T) (int, bool) {
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
	return n, n < maxDense
}

// index returns key's user index, adding the user when new.
func index[T string | []byte](u *users, key T) int32 {
	if n, ok := denseNum(u, key); ok {
		if n < len(u.dense) {
			if x := u.dense[n]; x != 0 {
				return x - 1
			}
		} else {
			grow := max(n+1, 2*len(u.dense))
			grow = min(max(grow, 1024), maxDense)
			nd := make([]int32, grow)
			copy(nd, u.dense)
			u.dense = nd
		}
		i := u.add([]byte(key))
		u.dense[n] = i + 1
		return i
	}
	if x, ok := u.m[string(key)]; ok {
		return x
	}
	i := u.add([]byte(key))
	u.m[string(key)] = i
	return i
}

func (u *users) add(key []byte) int32 {
	i := int32(len(u.KeyEnd))
	u.KeyBuf = append(u.KeyBuf, key...)
	u.KeyEnd = append(u.KeyEnd, int32(len(u.KeyBuf)))
	for k := range u.Vals {
		u.Vals[k] = append(u.Vals[k], 0)
	}
	u.Rows = append(u.Rows, 0)
	return i
}

// combine folds value v of combined column k into user i; first says this is the user's first row.
func (u *users) combine(i int32, k int, v int64, first bool) {
	if first {
		u.Vals[k][i] = v
		return
	}
	p := &u.Vals[k][i]
	switch u.rules[k] {
	case CombineSum:
		*p += v
	case CombineMax:
		*p = max(*p, v)
	case CombineMin:
		*p = min(*p, v)
	case CombineLast:
		*p = v
	}
}

// merge adds partial p (a later chunk) into u.
func (u *users) merge(p *users) {
	for j := 0; j < p.n(); j++ {
		i := index(u, p.key(j))
		first := u.Rows[i] == 0
		for k := range u.Vals {
			u.combine(i, k, p.Vals[k][j], first)
		}
		u.Rows[i] += p.Rows[j]
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

// plan is the per-job preparation shared by all chunks.
type plan struct {
	s        *Schema
	cols     []int
	nfields  int
	enc      string
	delim    byte
	combined []int // schema column indexes combined per user (mapped integer fields)
	rules    []string
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

// processChunk reads chunk c of the job's file and validates and combines its rows.
func processChunk(ctx context.Context, jc *jobContext, p *plan, c Chunk, auditAll bool) (*partial, error) {
	f, err := os.Open(jc.Validation.ReadPath)
	if err != nil {
		return nil, job.Wrap(job.E004, err, "the CSV file cannot be read any more").
			WithJa("CSVファイルを読み取れなくなりました。").WithName("TemporaryError").Transient()
	}
	defer f.Close()
	if c.Length < 0 || c.Length > 1<<30 {
		return nil, job.Errorf(job.E014, "chunk %d has an invalid length %d", c.Index, c.Length).WithName(KindValidation)
	}
	buf := make([]byte, c.Length)
	if _, err := f.ReadAt(buf, c.Offset); err != nil && !(err == io.EOF) {
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
	for r.Next() {
		out.Rows++
		if out.Rows&0xFFFF == 0 && ctx.Err() != nil {
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
				if col.Required {
					addErr(RowError{Line: r.RecLine, Column: col.Name, Kind: KindValidation,
						Reason: "a required value is missing", ReasonJa: "必須の値がありません"})
					bad = true
				}
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
			st.Count++
			switch s.Columns[i].Type {
			case TypeInteger:
				st.IntSum += nums[i]
				st.num(float64(nums[i]))
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
		var ui int32
		if r.High && !isASCII(key) {
			ui = index(u, decodeText(p.enc, key))
		} else {
			ui = index(u, key)
		}
		first := u.Rows[ui] == 0
		for k, ci := range p.combined {
			u.combine(ui, k, nums[ci], first)
		}
		u.Rows[ui]++
		if auditAll {
			out.Audit = append(out.Audit, r.RecLine)
		}
	}
	out.KeyBuf, out.KeyEnd, out.Vals, out.UserRows, out.Stats = u.KeyBuf, u.KeyEnd, u.Vals, u.Rows, stats
	return out, nil
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
