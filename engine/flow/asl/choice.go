package asl

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Choose returns the Next of the first matching rule, the Default, or a States.NoChoiceMatched
// error.
func (s *State) Choose(env Env) (string, error) {
	next, _, err := s.ChooseRule(env)
	return next, err
}

// ChooseRule is Choose that also returns the matching rule (nil when the Default is taken).
func (s *State) ChooseRule(env Env) (string, *Rule, error) {
	for i := range s.Choices {
		ok, err := s.Choices[i].Eval(env)
		if err != nil {
			return "", nil, err
		}
		if ok {
			return s.Choices[i].Next, &s.Choices[i], nil
		}
	}
	if s.Default != "" {
		return s.Default, nil, nil
	}
	return "", nil, Errorf("States.NoChoiceMatched", "no choice rule matched and there is no Default in state %q", s.Name)
}

// Eval evaluates the rule. Comparisons are type-sensitive: a value of another type never
// matches. A missing Variable is a States.Runtime error, except for IsPresent (false) and the
// other Is* tests (false).
func (r *Rule) Eval(env Env) (bool, error) {
	switch {
	case r.And != nil:
		for i := range r.And {
			ok, err := r.And[i].Eval(env)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case r.Or != nil:
		for i := range r.Or {
			ok, err := r.Or[i].Eval(env)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case r.Not != nil:
		ok, err := r.Not.Eval(env)
		return !ok && err == nil, err
	}
	vp := r.variable
	if vp == nil {
		var err error
		if vp, err = ParsePath(r.Variable); err != nil {
			return false, Errorf("States.Runtime", "%v", err)
		}
	}
	doc, derr := env.doc(vp)
	if derr != nil {
		return false, derr
	}
	v, found := vp.Get(doc)
	if !vp.single {
		found = found && len(v.([]any)) > 0
	}
	op, isPath := strings.CutSuffix(r.Op, "Path")
	want := r.Value
	if isPath {
		p := r.valuePath
		if p == nil {
			var err error
			if p, err = ParsePath(r.Value.(string)); err != nil {
				return false, Errorf("States.Runtime", "%v", err)
			}
		}
		d, derr := env.doc(p)
		if derr != nil {
			return false, derr
		}
		w, ok := p.Get(d)
		if !ok {
			return false, Errorf("States.Runtime", "the choice rule's %s %s could not be found in the input", r.Op, p.src)
		}
		want = w
	}
	if strings.HasPrefix(op, "Is") {
		b, _ := want.(bool)
		var is bool
		switch op {
		case "IsPresent":
			is = found
		case "IsNull":
			is = found && v == nil
		case "IsNumeric":
			_, is = v.(float64)
			is = is && found
		case "IsString":
			_, is = v.(string)
			is = is && found
		case "IsBoolean":
			_, is = v.(bool)
			is = is && found
		case "IsTimestamp":
			s, ok := v.(string)
			if ok && found {
				_, is = ParseTimestamp(s)
			}
		}
		return is == b, nil
	}
	if !found {
		return false, Errorf("States.Runtime", "invalid path %s: the choice state's Variable could not be found in the input", r.Variable)
	}
	switch operators[op] {
	case "string":
		a, ok1 := v.(string)
		b, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		switch op {
		case "StringEquals":
			return a == b, nil
		case "StringLessThan":
			return a < b, nil
		case "StringGreaterThan":
			return a > b, nil
		case "StringLessThanEquals":
			return a <= b, nil
		case "StringGreaterThanEquals":
			return a >= b, nil
		case "StringMatches":
			return Match(b, a), nil
		}
	case "number":
		a, ok1 := v.(float64)
		b, ok2 := want.(float64)
		if !ok1 || !ok2 {
			return false, nil
		}
		switch op {
		case "NumericEquals":
			return a == b, nil
		case "NumericLessThan":
			return a < b, nil
		case "NumericGreaterThan":
			return a > b, nil
		case "NumericLessThanEquals":
			return a <= b, nil
		case "NumericGreaterThanEquals":
			return a >= b, nil
		}
	case "bool":
		a, ok1 := v.(bool)
		b, ok2 := want.(bool)
		return ok1 && ok2 && a == b, nil
	case "timestamp":
		as, ok1 := v.(string)
		bs, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		a, ok1 := ParseTimestamp(as)
		b, ok2 := ParseTimestamp(bs)
		if !ok1 || !ok2 {
			return false, nil
		}
		switch op {
		case "TimestampEquals":
			return a.Equal(b), nil
		case "TimestampLessThan":
			return a.Before(b), nil
		case "TimestampGreaterThan":
			return a.After(b), nil
		case "TimestampLessThanEquals":
			return !a.After(b), nil
		case "TimestampGreaterThanEquals":
			return !a.Before(b), nil
		}
	}
	return false, Errorf("States.Runtime", "unknown operator %s", r.Op)
}

// Match reports whether s matches the StringMatches pattern: '*' matches any run of characters,
// "\*" a literal star and "\\" a backslash.
func Match(pattern, s string) bool {
	type tok struct {
		lit  string
		star bool
	}
	var toks []tok
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '\\' && i+1 < len(pattern) {
			b.WriteByte(pattern[i+1])
			i++
			continue
		}
		if c == '*' {
			toks = append(toks, tok{lit: b.String()}, tok{star: true})
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	toks = append(toks, tok{lit: b.String()})
	// greedy-free matching with backtracking over stars
	var match func(ti int, s string) bool
	match = func(ti int, s string) bool {
		if ti == len(toks) {
			return s == ""
		}
		t := toks[ti]
		if !t.star {
			if !strings.HasPrefix(s, t.lit) {
				return false
			}
			return match(ti+1, s[len(t.lit):])
		}
		if ti+1 == len(toks)-1 && toks[ti+1].lit == "" {
			return true
		}
		for i := 0; i <= len(s); i++ {
			if match(ti+1, s[i:]) {
				return true
			}
		}
		return false
	}
	return match(0, s)
}

// Matches reports whether a Retry or Catch ErrorEquals list matches the error name. States.Runtime
// is never caught nor retried (it always fails the execution); States.ALL matches every other
// error except States.DataLimitExceeded; States.TaskFailed matches every error except
// States.Timeout. States.Timeout also matches States.HeartbeatTimeout: Step Functions documents
// it as covering a Task that "failed to send a heartbeat for a period longer than the
// HeartbeatSeconds value", while States.HeartbeatTimeout matches only that case.
func Matches(list []string, name string) bool {
	if name == "States.Runtime" {
		return false
	}
	for _, e := range list {
		switch {
		case e == name:
			return true
		case e == "States.Timeout":
			if name == "States.HeartbeatTimeout" {
				return true
			}
		case e == "States.ALL":
			if name != "States.DataLimitExceeded" && name != "States.Runtime" {
				return true
			}
		case e == "States.TaskFailed":
			if name != "States.Timeout" && name != "States.DataLimitExceeded" && name != "States.Runtime" &&
				name != "States.Aborted" {
				return true
			}
		}
	}
	return false
}

// Delay is the wait before retry number attempt (0 for the first retry): IntervalSeconds ×
// BackoffRate^attempt, capped by MaxDelaySeconds, and with FULL jitter a random duration between
// 0 and that.
func (r *Retrier) Delay(attempt int) time.Duration {
	d := r.IntervalSeconds * math.Pow(r.BackoffRate, float64(attempt))
	if r.MaxDelaySeconds > 0 && d > r.MaxDelaySeconds {
		d = r.MaxDelaySeconds
	}
	if d > 366*24*3600 {
		d = 366 * 24 * 3600
	}
	if r.JitterStrategy == "FULL" {
		d = rand.Float64() * d
	}
	return time.Duration(d * float64(time.Second))
}
