package asl

import (
	"fmt"
	"strconv"
	"strings"
)

// filter is a JSONPath filter expression, [?(@.field op value)] or [?(@.field)], as Step
// Functions' JSONPath accepts it: it keeps the array items whose field compares so with the
// literal (==, !=, <, <=, >, >=), or that have the field.
type filter struct {
	field *Path // relative to the item (@ stands for $)
	op    string
	value any
}

// parseFilter reads the filter starting at s[i] ("[?(") and returns it with the offset after
// its closing ")]".
func parseFilter(s string, i int) (*filter, int, error) {
	j := i + 3
	var q byte
	end := -1
	for k := j; k < len(s); k++ {
		c := s[k]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == ')' && k+1 < len(s) && s[k+1] == ']':
			end = k
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return nil, 0, fmt.Errorf("path %q: unterminated filter expression", s)
	}
	body := strings.TrimSpace(s[j:end])
	if !strings.HasPrefix(body, "@") {
		return nil, 0, fmt.Errorf("path %q: a filter expression must test @", s)
	}
	f := &filter{}
	lhs, rest := body, ""
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if k := strings.Index(body, op); k > 0 {
			lhs, rest, f.op = strings.TrimSpace(body[:k]), strings.TrimSpace(body[k+len(op):]), op
			break
		}
	}
	fp, err := ParsePath("$" + lhs[1:])
	if err != nil || !fp.single {
		return nil, 0, fmt.Errorf("path %q: bad field %q in filter expression", s, lhs)
	}
	f.field = fp
	if f.op != "" {
		switch {
		case rest == "true":
			f.value = true
		case rest == "false":
			f.value = false
		case rest == "null":
			f.value = nil
		case len(rest) >= 2 && (rest[0] == '\'' || rest[0] == '"') && rest[len(rest)-1] == rest[0]:
			f.value = rest[1 : len(rest)-1]
		default:
			n, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("path %q: bad value %q in filter expression", s, rest)
			}
			f.value = n
		}
	}
	return f, end + 2, nil
}

// match reports whether the item passes the filter.
func (f *filter) match(item any) bool {
	v, ok := f.field.Get(item)
	if !ok {
		return false
	}
	if f.op == "" {
		return true
	}
	switch f.op {
	case "==":
		return Equal(v, f.value)
	case "!=":
		return !Equal(v, f.value)
	}
	switch a := v.(type) {
	case float64:
		b, ok := f.value.(float64)
		return ok && compare(f.op, cmpNum(a, b))
	case string:
		b, ok := f.value.(string)
		return ok && compare(f.op, strings.Compare(a, b))
	}
	return false
}

func cmpNum(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compare(op string, c int) bool {
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}
