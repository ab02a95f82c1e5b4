package csvjob

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/job"
)

// Column types a schema may declare.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeDecimal = "decimal"
	TypeDate    = "date"
	TypeBoolean = "boolean"
)

// Combine rules: how the values of several rows of the same user in one file become one value.
const (
	CombineSum   = "sum"
	CombineMax   = "max"
	CombineMin   = "min"
	CombineFirst = "first"
	CombineLast  = "last"
)

// Table fields a column may be mapped to (Column.Field). Only these reach the csv_users table.
const (
	FieldUserID     = "user_id"
	FieldLoginCount = "login_count"
	FieldPostCount  = "post_count"
)

// Column is one column of a job schema. Name is matched against the header (spaces trimmed).
// Min and Max bound numbers (integer, decimal) and, as YYYY-MM-DD strings, dates. Field maps the
// column to a csv_users column; an integer column with a Field is combined per user by Combine.
type Column struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Required bool     `json:"required,omitempty"`
	Pattern  string   `json:"pattern,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	MinDate  string   `json:"min_date,omitempty"`
	MaxDate  string   `json:"max_date,omitempty"`
	Field    string   `json:"field,omitempty"`
	Combine  string   `json:"combine,omitempty"`

	re     *regexp.Regexp
	fastID *idPattern
	min    int64
	max    int64
	// plainInt: an integer column without a pattern; plainID: a string column whose pattern
	// idPattern checks. The chunk loop checks both inline.
	plainInt, plainID bool
}

// Schema describes the rows a CSV job accepts. Key names the column identifying a user (the
// first column when empty); rows are combined per key. A schema without user_id, login_count and
// post_count fields is still validated and reported, but writes nothing to the table.
type Schema struct {
	Name    string   `json:"name,omitempty"`
	Key     string   `json:"key,omitempty"`
	Columns []Column `json:"columns"`

	keyIdx int
}

func f64(v float64) *float64 { return &v }

// DefaultSchema is the seed's user-log schema: ユーザーID matching U followed by five digits, and
// ログイン回数 and 投稿回数 as integers ≥ 0, summed per user.
func DefaultSchema() *Schema {
	s := &Schema{Name: "user-log", Key: "ユーザーID", Columns: []Column{
		{Name: "ユーザーID", Type: TypeString, Required: true, Pattern: `^U\d{5}$`, Field: FieldUserID},
		{Name: "ログイン回数", Type: TypeInteger, Required: true, Min: f64(0), Field: FieldLoginCount, Combine: CombineSum},
		{Name: "投稿回数", Type: TypeInteger, Required: true, Min: f64(0), Field: FieldPostCount, Combine: CombineSum},
	}}
	if err := s.Compile(); err != nil {
		panic(err)
	}
	return s
}

// LoadSchema reads a schema from a JSON file (the CLI's --schema F) and compiles it.
func LoadSchema(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, job.Wrap(job.E014, err, fmt.Sprintf("the schema file %s cannot be read", path)).
			WithJa(fmt.Sprintf("スキーマファイル %s を読み取れません。", path))
	}
	return ParseSchema(b)
}

// ParseSchema parses and compiles a schema in JSON.
func ParseSchema(b []byte) (*Schema, error) {
	var s Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, job.Wrap(job.E014, err, "the schema is not valid JSON").WithJa("スキーマが正しいJSONではありません。")
	}
	if err := s.Compile(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Compile checks the schema and prepares its patterns. Every schema is compiled before use.
func (s *Schema) Compile() error {
	bad := func(format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		return job.Errorf(job.E014, "schema: %s", msg).WithJa("スキーマが正しくありません: " + msg)
	}
	if len(s.Columns) == 0 {
		return bad("no columns")
	}
	if len(s.Columns) > 1000 {
		return bad("too many columns (%d)", len(s.Columns))
	}
	seen := map[string]bool{}
	fields := map[string]bool{}
	s.keyIdx = -1
	for i := range s.Columns {
		c := &s.Columns[i]
		c.Name = strings.TrimSpace(c.Name)
		if c.Name == "" {
			return bad("column %d has no name", i+1)
		}
		if seen[c.Name] {
			return bad("column %q appears twice", c.Name)
		}
		seen[c.Name] = true
		if c.Type == "" {
			c.Type = TypeString
		}
		switch c.Type {
		case TypeString, TypeInteger, TypeDecimal, TypeDate, TypeBoolean:
		default:
			return bad("column %q has unknown type %q", c.Name, c.Type)
		}
		if c.Combine == "" && (c.Field == FieldLoginCount || c.Field == FieldPostCount) {
			c.Combine = CombineSum // only combined columns have a rule
		}
		switch c.Combine {
		case "", CombineSum, CombineMax, CombineMin, CombineFirst, CombineLast:
		default:
			return bad("column %q has unknown combine rule %q", c.Name, c.Combine)
		}
		switch c.Field {
		case "":
		case FieldUserID:
		case FieldLoginCount, FieldPostCount:
			if c.Type != TypeInteger {
				return bad("column %q maps to %s and must be an integer", c.Name, c.Field)
			}
		default:
			return bad("column %q maps to unknown field %q", c.Name, c.Field)
		}
		if c.Field != "" {
			if fields[c.Field] {
				return bad("field %s is mapped twice", c.Field)
			}
			fields[c.Field] = true
		}
		c.re, c.fastID = nil, nil
		if c.Pattern != "" {
			re, err := regexp.Compile(c.Pattern)
			if err != nil {
				return bad("column %q: pattern: %v", c.Name, err)
			}
			c.re = re
			c.fastID = parseIDPattern(c.Pattern)
		}
		c.min, c.max = minInt64, maxInt64
		if c.Min != nil {
			c.min = int64(*c.Min)
			if float64(c.min) < *c.Min {
				c.min++
			}
		}
		if c.Max != nil {
			c.max = int64(*c.Max)
		}
		c.plainInt = c.Type == TypeInteger && c.Pattern == ""
		c.plainID = c.Type == TypeString && c.fastID != nil
		for _, d := range []string{c.MinDate, c.MaxDate} {
			if d != "" {
				if _, ok := parseDate([]byte(d)); !ok {
					return bad("column %q: %q is not a date (YYYY-MM-DD)", c.Name, d)
				}
			}
		}
		if s.Key == c.Name || c.Field == FieldUserID && s.Key == "" {
			s.keyIdx = i
		}
	}
	if s.Key == "" && s.keyIdx < 0 {
		s.keyIdx = 0
	}
	if s.keyIdx < 0 {
		return bad("key column %q is not among the columns", s.Key)
	}
	s.Key = s.Columns[s.keyIdx].Name
	if fields[FieldLoginCount] || fields[FieldPostCount] {
		if s.Columns[s.keyIdx].Field != FieldUserID {
			return bad("the key column %q must map to user_id when counts are mapped", s.Key)
		}
	}
	return nil
}

// WritesTable reports whether rows of this schema reach the csv_users table.
func (s *Schema) WritesTable() bool {
	if s.Columns[s.keyIdx].Field != FieldUserID {
		return false
	}
	for _, c := range s.Columns {
		if c.Field == FieldLoginCount || c.Field == FieldPostCount {
			return true
		}
	}
	return false
}

// Names returns the column names in schema order.
func (s *Schema) Names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

// idPattern is the fast form of patterns like ^U\d{5}$: a literal ASCII prefix then n digits.
type idPattern struct {
	prefix string
	digits int
}

var idPatternRE = regexp.MustCompile(`^\^([A-Za-z0-9_-]*)(?:\\d|\[0-9\])\{(\d+)\}\$$`)

func parseIDPattern(p string) *idPattern {
	m := idPatternRE.FindStringSubmatch(p)
	if m == nil {
		return nil
	}
	n, err := strconv.Atoi(m[2])
	if err != nil || n < 1 || n > 18 {
		return nil
	}
	return &idPattern{prefix: m[1], digits: n}
}

func (p *idPattern) match(b []byte) bool {
	if len(b) != len(p.prefix)+p.digits || string(b[:len(p.prefix)]) != p.prefix {
		return false
	}
	for _, c := range b[len(p.prefix):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseInt is the exact integer rule: an optional sign and ASCII digits only, at most 18 of them.
// "1e3", "3.5", " 5", "５" and "" are not integers.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseDecimal accepts an optional sign, digits and at most one decimal point with digits on at
// least one side. No exponent, no thousands separators.
func parseDecimal(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 40 {
		return 0, false
	}
	i := 0
	if b[0] == '-' || b[0] == '+' {
		i = 1
	}
	digits, dot := 0, false
	for _, c := range b[i:] {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil
}

// parseDate accepts YYYY-MM-DD and YYYY/MM/DD (calendar-checked) and returns it as YYYY-MM-DD.
func parseDate(b []byte) (string, bool) {
	if len(b) != 10 || (b[4] != '-' && b[4] != '/') || b[7] != b[4] {
		return "", false
	}
	s := string(b[:4]) + "-" + string(b[5:7]) + "-" + string(b[8:])
	if _, err := time.Parse("2006-01-02", s); err != nil {
		return "", false
	}
	return s, true
}

// parseBool accepts true/false, yes/no, 1/0 (any case).
func parseBool(b []byte) (bool, bool) {
	switch strings.ToLower(string(b)) {
	case "true", "yes", "1", "y", "t":
		return true, true
	case "false", "no", "0", "n", "f":
		return false, true
	}
	return false, false
}
