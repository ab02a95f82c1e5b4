// Package asl is the pure part of JobDesk's Amazon States Language engine: parsing and
// validating definitions in both query languages (JSONPath and JSONata), the JSONPath subset ASL
// uses (with filters and $variable references), Parameters / ResultSelector / Assign templates
// with ".$" keys, JSONata field templates ("{% … %}"), the intrinsic functions, Choice rules,
// workflow variable scopes, ResultPath and Retry/Catch matching. It does no I/O, so it is fast,
// deterministic and fuzzed; engine/flow runs it durably.
package asl

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is a compiled JSONPath: "$" followed by steps (names, indices, wildcards, slices).
type Path struct {
	src      string
	context  bool   // $$ (the context object)
	variable string // $name: the path reads the variable name
	steps    []step
	single   bool // no wildcard, slice or deep scan: a reference path
}

type stepKind int

const (
	stName stepKind = iota
	stIndex
	stWild
	stSlice
	stDeep
	stFilter
)

type step struct {
	kind         stepKind
	name         string
	index        int
	lo, hi       int
	hasLo, hasHi bool
	filter       *filter
}

// String returns the source text.
func (p *Path) String() string { return p.src }

// Context reports whether the path reads the context object ($$).
func (p *Path) Context() bool { return p.context }

// Reference reports whether the path names at most one node (no wildcard, slice or deep scan).
func (p *Path) Reference() bool { return p.single }

// Variable returns the name of the variable the path reads ("" when it reads the input or the
// context object).
func (p *Path) Variable() string { return p.variable }

// Notation prints the path's steps as Step Functions does in a cause: $['a']['b'][0].
func (p *Path) Notation() string { return p.notation(len(p.steps)) }

// missingAt is the index of the step of a reference path that finds nothing in doc (-1 when
// every step finds something, or the path is no reference path).
func (p *Path) missingAt(doc any) int {
	if !p.single {
		return -1
	}
	cur := doc
	for i, st := range p.steps {
		one := &Path{steps: []step{st}, single: true}
		v, ok := one.Get(cur)
		if !ok {
			return i
		}
		cur = v
	}
	return -1
}

// notation prints the first n steps (see Notation).
func (p *Path) notation(n int) string {
	var b strings.Builder
	b.WriteString("$")
	for _, st := range p.steps[:n] {
		switch st.kind {
		case stName:
			b.WriteString("['" + st.name + "']")
		case stIndex:
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
		case stWild:
			b.WriteString("[*]")
		case stDeep:
			b.WriteString("..")
		case stSlice, stFilter:
			b.WriteString("[?]")
		}
	}
	return b.String()
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ParsePath compiles a JSONPath starting with "$" (or "$$" for the context object).
func ParsePath(s string) (*Path, error) {
	p := &Path{src: s, single: true}
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("path %q must start with $", s)
	}
	i := 1
	if strings.HasPrefix(s, "$$") {
		p.context = true
		i = 2
	} else if len(s) > 1 && isNameStart(s[1]) {
		j := 1
		for j < len(s) && (isNameStart(s[j]) || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		p.variable, i = s[1:j], j
	}
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			if i < len(s) && s[i] == '.' {
				i++
				p.steps = append(p.steps, step{kind: stDeep})
				p.single = false
			}
			if i < len(s) && s[i] == '*' {
				p.steps = append(p.steps, step{kind: stWild})
				p.single = false
				i++
				continue
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("path %q: empty name at offset %d", s, i)
			}
			name := s[i:j]
			if strings.ContainsAny(name, " \t\n'\"()") {
				return nil, fmt.Errorf("path %q: invalid character in name %q", s, name)
			}
			p.steps = append(p.steps, step{kind: stName, name: name})
			i = j
		case '[':
			if strings.HasPrefix(s[i:], "[?(") {
				f, n, err := parseFilter(s, i)
				if err != nil {
					return nil, err
				}
				p.steps = append(p.steps, step{kind: stFilter, filter: f})
				p.single = false
				i = n
				continue
			}
			end := strings.IndexByte(s[i:], ']')
			if i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '"') {
				q := s[i+1]
				k := strings.IndexByte(s[i+2:], q)
				if k < 0 || i+2+k+1 >= len(s) || s[i+2+k+1] != ']' {
					return nil, fmt.Errorf("path %q: unterminated quoted name", s)
				}
				p.steps = append(p.steps, step{kind: stName, name: s[i+2 : i+2+k]})
				i = i + 2 + k + 2
				continue
			}
			if end < 0 {
				return nil, fmt.Errorf("path %q: missing ]", s)
			}
			inner := strings.TrimSpace(s[i+1 : i+end])
			i += end + 1
			switch {
			case inner == "*":
				p.steps = append(p.steps, step{kind: stWild})
				p.single = false
			case strings.Contains(inner, ":"):
				a, b, _ := strings.Cut(inner, ":")
				st := step{kind: stSlice}
				if a = strings.TrimSpace(a); a != "" {
					n, err := strconv.Atoi(a)
					if err != nil {
						return nil, fmt.Errorf("path %q: bad slice %q", s, inner)
					}
					st.lo, st.hasLo = n, true
				}
				if b = strings.TrimSpace(b); b != "" {
					n, err := strconv.Atoi(b)
					if err != nil {
						return nil, fmt.Errorf("path %q: bad slice %q", s, inner)
					}
					st.hi, st.hasHi = n, true
				}
				p.steps = append(p.steps, st)
				p.single = false
			default:
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("path %q: bad index %q", s, inner)
				}
				p.steps = append(p.steps, step{kind: stIndex, index: n})
			}
		default:
			return nil, fmt.Errorf("path %q: unexpected %q at offset %d", s, s[i], i)
		}
	}
	return p, nil
}

// MustPath is ParsePath for constants; it panics on a bad path.
func MustPath(s string) *Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// Get evaluates the path on doc. A reference path returns the node and whether it exists; any
// other path returns the array of matches (found is true even when empty).
func (p *Path) Get(doc any) (any, bool) {
	if p.single {
		cur := doc
		for _, st := range p.steps {
			switch st.kind {
			case stName:
				m, ok := cur.(map[string]any)
				if !ok {
					return nil, false
				}
				v, ok := m[st.name]
				if !ok {
					return nil, false
				}
				cur = v
			case stIndex:
				a, ok := cur.([]any)
				if !ok {
					return nil, false
				}
				i := st.index
				if i < 0 {
					i += len(a)
				}
				if i < 0 || i >= len(a) {
					return nil, false
				}
				cur = a[i]
			}
		}
		return cur, true
	}
	nodes := []any{doc}
	for _, st := range p.steps {
		var next []any
		for _, n := range nodes {
			next = apply(st, n, next)
		}
		nodes = next
	}
	if nodes == nil {
		nodes = []any{}
	}
	return nodes, true
}

func apply(st step, n any, out []any) []any {
	switch st.kind {
	case stName:
		if m, ok := n.(map[string]any); ok {
			if v, ok := m[st.name]; ok {
				out = append(out, v)
			}
		}
	case stIndex:
		if a, ok := n.([]any); ok {
			i := st.index
			if i < 0 {
				i += len(a)
			}
			if i >= 0 && i < len(a) {
				out = append(out, a[i])
			}
		}
	case stWild:
		switch v := n.(type) {
		case []any:
			out = append(out, v...)
		case map[string]any:
			for _, k := range sortedKeys(v) {
				out = append(out, v[k])
			}
		}
	case stSlice:
		if a, ok := n.([]any); ok {
			lo, hi := 0, len(a)
			if st.hasLo {
				lo = st.lo
				if lo < 0 {
					lo += len(a)
				}
			}
			if st.hasHi {
				hi = st.hi
				if hi < 0 {
					hi += len(a)
				}
			}
			lo, hi = max(lo, 0), min(hi, len(a))
			for i := lo; i < hi; i++ {
				out = append(out, a[i])
			}
		}
	case stFilter:
		switch v := n.(type) {
		case []any:
			for _, c := range v {
				if st.filter.match(c) {
					out = append(out, c)
				}
			}
		case map[string]any:
			if st.filter.match(v) {
				out = append(out, v)
			}
		}
	case stDeep:
		out = append(out, n)
		switch v := n.(type) {
		case []any:
			for _, c := range v {
				out = apply(st, c, out)
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				out = apply(st, v[k], out)
			}
		}
	}
	return out
}

// Set returns doc with value placed at the reference path p (creating objects on the way), as
// ResultPath does. Setting "$" returns value. The input is not modified: maps on the way are
// copied.
func (p *Path) Set(doc, value any) (any, error) {
	if !p.single || p.context || p.variable != "" {
		return nil, fmt.Errorf("ResultPath %q must be a reference path", p.src)
	}
	return setSteps(doc, p.steps, value, p.src)
}

func setSteps(doc any, steps []step, value any, src string) (any, error) {
	if len(steps) == 0 {
		return value, nil
	}
	st := steps[0]
	switch st.kind {
	case stName:
		var m map[string]any
		switch v := doc.(type) {
		case map[string]any:
			m = make(map[string]any, len(v)+1)
			for k, x := range v {
				m[k] = x
			}
		case nil:
			m = map[string]any{}
		default:
			return nil, fmt.Errorf("cannot set %q: the input at %q is not an object", src, st.name)
		}
		child, err := setSteps(m[st.name], steps[1:], value, src)
		if err != nil {
			return nil, err
		}
		m[st.name] = child
		return m, nil
	case stIndex:
		a, ok := doc.([]any)
		i := st.index
		if ok && i < 0 {
			i += len(a)
		}
		if !ok || i < 0 || i >= len(a) {
			return nil, fmt.Errorf("cannot set %q: index %d is out of range", src, st.index)
		}
		b := append([]any(nil), a...)
		child, err := setSteps(b[i], steps[1:], value, src)
		if err != nil {
			return nil, err
		}
		b[i] = child
		return b, nil
	}
	return nil, fmt.Errorf("cannot set %q", src)
}
