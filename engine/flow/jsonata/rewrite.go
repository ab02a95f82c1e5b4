package jsonata

import (
	"fmt"
	"strings"
)

// JSONata 2.x's operators "??" (the left operand if it exists, else the right) and "?:" (the
// left operand if it is truthy, else the right) are rewritten, before the 1.x port compiles an
// expression, into a block that evaluates the left operand once:
//
//	L ?? R  →  ($__c0 := (L); $exists($__c0) ? $__c0 : (R))
//	L ?: R  →  ($__c0 := (L); $__c0 ? $__c0 : (R))
//
// Both bind like the comparison operators (left to right, tighter than and/or/?:, looser
// than + - * / & and paths).

type token struct {
	text       string
	start, end int
}

// tokens splits src into JSONata tokens (strings, comments, names, numbers, operators).
func tokens(src string) []token {
	var out []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
			continue
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			out = append(out, token{src[i:j], i, j})
			i = j
			continue
		case isIdent(c) || c == '$' || c >= 0x80:
			j := i + 1
			for j < len(src) && (isIdent(src[j]) || src[j] >= 0x80) {
				j++
			}
			out = append(out, token{src[i:j], i, j})
			i = j
			continue
		}
		for _, op := range []string{"??", "?:", ":=", "~>", "!=", "<=", ">=", "..", "**"} {
			if strings.HasPrefix(src[i:], op) {
				out = append(out, token{op, i, i + 2})
				i += 2
				goto next
			}
		}
		out = append(out, token{src[i : i+1], i, i + 1})
		i++
	next:
	}
	return out
}

var (
	leftStops  = map[string]bool{"and": true, "or": true, "?": true, ":": true, ":=": true, ",": true, ";": true}
	rightStops = map[string]bool{"=": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true, "in": true, "??": true, "?:": true,
		"~>": true, "and": true, "or": true, "?": true, ":": true, ":=": true, ",": true, ";": true}
)

func isOpen(s string) bool  { return s == "(" || s == "[" || s == "{" }
func isClose(s string) bool { return s == ")" || s == "]" || s == "}" }

// rewrite2x rewrites every ?? and ?: of src (see above).
func rewrite2x(src string) string {
	if !strings.Contains(src, "??") && !strings.Contains(src, "?:") {
		return src
	}
	for n := 0; n < 32; n++ {
		ts := tokens(src)
		sig := signatures(ts)
		k := -1
		for i, t := range ts {
			if (t.text == "??" || t.text == "?:") && !sig[i] {
				k = i
				break
			}
		}
		if k <= 0 || k == len(ts)-1 {
			return src
		}
		ls, depth := k, 0
		for i := k - 1; i >= 0; i-- {
			t := ts[i].text
			if isClose(t) {
				depth++
			} else if isOpen(t) {
				if depth == 0 {
					break
				}
				depth--
			} else if depth == 0 && leftStops[t] {
				break
			}
			ls = i
		}
		re, depth := k, 0
		for i := k + 1; i < len(ts); i++ {
			t := ts[i].text
			if isOpen(t) {
				depth++
			} else if isClose(t) {
				if depth == 0 {
					break
				}
				depth--
			} else if depth == 0 && rightStops[t] && i > k+1 {
				break
			}
			re = i
		}
		if ls == k || re == k {
			return src
		}
		left := src[ts[ls].start:ts[k-1].end]
		right := src[ts[k+1].start:ts[re].end]
		v := fmt.Sprintf("$__c%d", n)
		test := v
		if ts[k].text == "??" {
			test = "$exists(" + v + ")"
		}
		src = src[:ts[ls].start] + "(" + v + " := (" + left + "); " + test + " ? " + v + " : (" + right + "))" + src[ts[re].end:]
	}
	return src
}

// signatures marks the tokens of function signatures (function($a, $b)<s?:s>{…}), where
// "?:" is an optional parameter followed by the result type, not the operator.
func signatures(ts []token) map[int]bool {
	var out map[int]bool
	for i := 0; i < len(ts); i++ {
		if ts[i].text != "function" && ts[i].text != "λ" {
			continue
		}
		j := i + 1
		if j >= len(ts) || ts[j].text != "(" {
			continue
		}
		for j < len(ts) && ts[j].text != ")" {
			j++
		}
		if j+1 >= len(ts) || ts[j+1].text != "<" {
			continue
		}
		for k := j + 1; k < len(ts) && ts[k].text != "{"; k++ {
			if out == nil {
				out = map[int]bool{}
			}
			out[k] = true
		}
	}
	return out
}

// quotedSteps writes a quoted path step (Order."Product Name", JSONata 2.x accepts it) as the
// backquoted name the port reads (Order.`Product Name`).
func quotedSteps(src string) string {
	if !strings.ContainsAny(src, "\"'") {
		return src
	}
	ts := tokens(src)
	var b strings.Builder
	last := 0
	for i := 1; i < len(ts); i++ {
		t := ts[i].text
		if ts[i-1].text != "." || len(t) < 2 || (t[0] != '"' && t[0] != '\'') || strings.ContainsAny(t[1:len(t)-1], "`\\") {
			continue
		}
		b.WriteString(src[last:ts[i].start])
		b.WriteString("`" + t[1:len(t)-1] + "`")
		last = ts[i].end
	}
	b.WriteString(src[last:])
	return b.String()
}
