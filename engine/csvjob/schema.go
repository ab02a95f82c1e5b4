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
//
// Entity and EntityEn name what one key stands for, in Japanese and English singular (社員 /
// employee): a result counts them ("社員 30 人", "30 employees"). When empty, Compile takes them
// from the key column's name (社員ID → 社員 / employee; ユーザーID → ユーザー / user).
type Schema struct {
	Name     string   `json:"name,omitempty"`
	Key      string   `json:"key,omitempty"`
	Entity   string   `json:"entity,omitempty"`
	EntityEn string   `json:"entity_en,omitempty"`
	Columns  []Column `json:"columns"`

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
	s.Entity, s.EntityEn = strings.TrimSpace(s.Entity), strings.TrimSpace(s.EntityEn)
	if s.Entity == "" || s.EntityEn == "" {
		ja, en := entityOf(s.Key)
		if s.Entity == "" {
			s.Entity = ja
		}
		if s.EntityEn == "" {
			s.EntityEn = en
		}
	}
	if fields[FieldLoginCount] || fields[FieldPostCount] {
		if s.Columns[s.keyIdx].Field != FieldUserID {
			return bad("the key column %q must map to user_id when counts are mapped", s.Key)
		}
	}
	return nil
}

// keySuffixes end a key column's name after the thing it identifies (社員ID, 顧客番号, user_id).
var keySuffixes = []string{"ＩＤ", "ID", "Id", "id", "番号", "コード", "No.", "No", "NO", "no", "CD", "cd", "#"}

// entityWords are the English words of things a Japanese key column commonly identifies.
var entityWords = map[string]string{
	"ユーザー": "user", "ユーザ": "user", "利用者": "user", "社員": "employee", "従業員": "employee",
	"職員": "employee", "スタッフ": "staff member", "顧客": "customer", "会員": "member", "お客様": "customer",
	"取引先": "client", "商品": "product", "製品": "product", "品目": "item", "注文": "order", "受注": "order",
	"発注": "purchase order", "店舗": "store", "部署": "department", "学生": "student", "生徒": "student",
	"患者": "patient", "契約": "contract", "案件": "project", "取引": "transaction", "請求": "invoice",
	"伝票": "slip", "アカウント": "account", "端末": "device", "拠点": "site",
}

// entityOf names what a key column named key identifies, in Japanese and English: its name
// without an ID-like suffix (社員ID → 社員 / employee, customer_id → customer / customer). A
// Japanese name without a known English word stands for itself in both languages.
func entityOf(key string) (ja, en string) {
	base := strings.TrimSpace(key)
	for _, suf := range keySuffixes {
		if b, ok := strings.CutSuffix(base, suf); ok && strings.TrimRight(b, " _-・") != "" {
			base = strings.TrimRight(b, " _-・")
			break
		}
	}
	if w, ok := entityWords[base]; ok {
		return base, w
	}
	if isASCII([]byte(base)) {
		w := strings.ToLower(strings.TrimSpace(strings.ReplaceAll(base, "_", " ")))
		if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") {
			w = w[:len(w)-1] // customers → customer; address and status stay
		}
		return base, w
	}
	return base, base
}

// people are the entities counted with 人 in Japanese; any other is counted with 件.
var people = map[string]bool{"ユーザー": true, "ユーザ": true, "利用者": true, "社員": true, "従業員": true,
	"職員": true, "スタッフ": true, "顧客": true, "会員": true, "お客様": true, "学生": true, "生徒": true, "患者": true}

// CountJa says n of the schema's entity in Japanese: "社員 30 人", "商品 12 件".
func (s *Schema) CountJa(n int64) string {
	unit := "件"
	if people[s.Entity] {
		unit = "人"
	}
	return fmt.Sprintf("%s %d %s", s.Entity, n, unit)
}

// CountEn says n of the schema's entity in English: "30 employees", "1 user"; an entity
// without an English word is counted by its key column ("30 distinct 部品コード values").
func (s *Schema) CountEn(n int64) string {
	if s.EntityEn == "" || !isASCII([]byte(s.EntityEn)) {
		return fmt.Sprintf("%d distinct %s %s", n, s.Key, map[bool]string{true: "value", false: "values"}[n == 1])
	}
	return count(n, s.EntityEn)
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

// parseDate is the exact date rule: a real calendar date written YYYY-MM-DD or YYYY/MM/DD,
// the month and day with one or two ASCII digits (2021/4/1) and the same separator twice. It
// returns the date as YYYY-MM-DD. 2020/13/45, 2021-02-29 and 2020/01-31 are not dates.
func parseDate(b []byte) (string, bool) {
	y, b, ok := dateDigits(b, 4, 4)
	if !ok || len(b) == 0 || b[0] != '-' && b[0] != '/' {
		return "", false
	}
	sep := b[0]
	m, b, ok := dateDigits(b[1:], 1, 2)
	if !ok || len(b) == 0 || b[0] != sep {
		return "", false
	}
	d, b, ok := dateDigits(b[1:], 1, 2)
	if !ok || len(b) != 0 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return "", false
	}
	out := [10]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + m/10), byte('0' + m%10), '-', byte('0' + d/10), byte('0' + d%10)}
	return string(out[:]), true
}

// dateDigits reads from lo to hi ASCII digits at the start of b.
func dateDigits(b []byte, lo, hi int) (int, []byte, bool) {
	n, i := 0, 0
	for i < len(b) && i < hi && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		i++
	}
	if i < lo || i < len(b) && b[i] >= '0' && b[i] <= '9' {
		return 0, b, false
	}
	return n, b[i:], true
}

// daysIn is the number of days of month m (1–12) of year y in the Gregorian calendar.
func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
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
