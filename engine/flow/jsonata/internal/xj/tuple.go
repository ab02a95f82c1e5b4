package xj

import (
	"math"
	"reflect"
	"sort"

	"github.com/blues/jsonata-go/jlib"
	"github.com/blues/jsonata-go/jtypes"
	"jobdesk/engine/flow/jsonata/internal/jparse"
)

// A path with variable bindings (step@$v, step#$i, or a step the parent operator % refers
// to) is evaluated, from its first such step on, as a stream of tuples: each tuple is a
// context value and the variables bound along the path for it. The steps, filters and sort
// terms of the path see a tuple's variables.

type binding struct {
	name  string
	value reflect.Value
}

type tuple struct {
	at    reflect.Value
	binds []binding
}

// with returns t with name bound to v (t itself is not changed).
func (t tuple) with(name string, v reflect.Value) tuple {
	nb := make([]binding, 0, len(t.binds)+1)
	for _, b := range t.binds {
		if b.name != name {
			nb = append(nb, b)
		}
	}
	return tuple{at: t.at, binds: append(nb, binding{name, v})}
}

// tupleStream is the result of a path (or block) whose tuples a parent operator outside it
// needs.
type tupleStream struct {
	tuples []tuple
}

var typeTupleStream = reflect.TypeOf((*tupleStream)(nil))

func asTupleStream(v reflect.Value) (*tupleStream, bool) {
	if !v.IsValid() || v.Type() != typeTupleStream {
		return nil, false
	}
	return v.Interface().(*tupleStream), true
}

// values returns the context values of the stream as one value (undefined, one item, or a
// sequence).
func (ts *tupleStream) values(keepSingletons bool) reflect.Value {
	seq := newSequence(len(ts.tuples))
	for _, t := range ts.tuples {
		if t.at.IsValid() && t.at.CanInterface() {
			seq.Append(t.at.Interface())
		}
	}
	seq.keepSingletons = keepSingletons
	return seq.Value()
}

// untuple turns a tuple stream into its values; any other value is returned as it is.
func untuple(v reflect.Value) reflect.Value {
	if ts, ok := asTupleStream(v); ok {
		return ts.values(false)
	}
	return v
}

// frame returns env with the tuple's variables bound.
func frame(env *environment, t tuple) *environment {
	if len(t.binds) == 0 {
		return env
	}
	e := newEnvironment(env, len(t.binds))
	for _, b := range t.binds {
		e.bind(b.name, b.value)
	}
	return e
}

// isTupleStep reports whether a path step starts (or continues) a tuple stream.
func isTupleStep(n jparse.Node) bool {
	switch n := n.(type) {
	case *jparse.StepNode:
		return true
	case *jparse.PathNode:
		return n.Tuple
	case *jparse.BlockNode:
		return n.Tuple
	case *jparse.PredicateNode:
		return isTupleStep(n.Expr)
	}
	return false
}

func hasTupleStep(path *jparse.PathNode) bool {
	for _, s := range path.Steps {
		if isTupleStep(s) {
			return true
		}
	}
	return false
}

// evalT evaluates node and, when it returns a tuple stream, returns the stream.
func evalT(node jparse.Node, data reflect.Value, env *environment) (reflect.Value, error) {
	switch n := node.(type) {
	case *jparse.PathNode:
		if n.Tuple {
			return evalPath(n, data, env)
		}
	case *jparse.BlockNode:
		if n.Tuple {
			env = newEnvironment(env, 0)
			var res reflect.Value
			var err error
			for i, x := range n.Exprs {
				if i == len(n.Exprs)-1 {
					res, err = evalT(x, data, env)
				} else {
					res, err = eval(x, data, env)
				}
				if err != nil {
					return undefined, err
				}
			}
			return res, nil
		}
	case *jparse.PredicateNode:
		if isTupleStep(n.Expr) {
			return evalPredicateT(n, data, env)
		}
	}
	return eval(node, data, env)
}

// evalPredicateT filters the tuple stream of a predicate's expression.
func evalPredicateT(node *jparse.PredicateNode, data reflect.Value, env *environment) (reflect.Value, error) {
	v, err := evalT(node.Expr, data, env)
	if err != nil {
		return undefined, err
	}
	ts, ok := asTupleStream(v)
	if !ok {
		ts = &tupleStream{}
		for _, x := range itemsOf(v) {
			ts.tuples = append(ts.tuples, tuple{at: x})
		}
	}
	tuples := ts.tuples
	for _, f := range node.Filters {
		if tuples, err = filterTuples(f, tuples, env); err != nil {
			return undefined, err
		}
	}
	return reflect.ValueOf(&tupleStream{tuples}), nil
}

// itemsOf returns the items of a value: those of an array or sequence, or the value itself.
func itemsOf(v reflect.Value) []reflect.Value {
	if seq, ok := asSequence(v); ok {
		out := make([]reflect.Value, 0, len(seq.values))
		for _, x := range seq.values {
			out = append(out, reflect.ValueOf(x))
		}
		return out
	}
	if !v.IsValid() {
		return nil
	}
	if jtypes.IsArray(v) {
		v = jtypes.Resolve(v)
		out := make([]reflect.Value, 0, v.Len())
		for i := 0; i < v.Len(); i++ {
			if x := v.Index(i); x.IsValid() {
				out = append(out, x)
			}
		}
		return out
	}
	return []reflect.Value{v}
}

// evalTuplePath evaluates a path with a tuple step.
func evalTuplePath(node *jparse.PathNode, data reflect.Value, env *environment) (reflect.Value, error) {
	ts, err := evalTupleStream(node, data, env)
	if err != nil || ts == nil {
		return undefined, err
	}
	if node.Tuple {
		return reflect.ValueOf(ts), nil
	}
	v := ts.values(node.KeepArrays)
	if node.KeepArrays && v.IsValid() {
		if s := jtypes.Resolve(v); s.Kind() == reflect.Slice {
			seq := newSequence(s.Len())
			for k := 0; k < s.Len(); k++ {
				seq.Append(s.Index(k).Interface())
			}
			seq.keepSingletons = true
			return reflect.ValueOf(seq), nil
		}
	}
	return v, nil
}

// evalTupleStream evaluates a path with a tuple step into its tuple stream (nil when a step
// before the first tuple step gives nothing).
func evalTupleStream(node *jparse.PathNode, data reflect.Value, env *environment) (*tupleStream, error) {
	isVar := startsWithVariable(node.Steps[0])

	output := data
	if isVar || !jtypes.IsArray(data) || env.isRoot(data) {
		output = reflect.MakeSlice(typeInterfaceSlice, 1, 1)
		if data.IsValid() {
			output.Index(0).Set(data)
		}
	}

	var tuples []tuple
	inTuples := false
	var err error
	last := len(node.Steps) - 1
	for i, step := range node.Steps {
		if !inTuples && isTupleStep(step) {
			inTuples = true
			for _, x := range itemsOf(output) {
				tuples = append(tuples, tuple{at: x})
			}
			if tuples, err = evalTupleStep(step, tuples, true, env); err != nil {
				return nil, err
			}
			continue
		}
		if inTuples {
			if tuples, err = evalTupleStep(step, tuples, false, env); err != nil {
				return nil, err
			}
			continue
		}
		if step0, ok := step.(*jparse.ArrayNode); ok && i == 0 {
			output, err = eval(step0, output, env)
		} else {
			output, err = evalPathStep(step, output, env, i == last)
		}
		if err != nil || output == undefined {
			return nil, err
		}
		if jtypes.IsArray(output) && jtypes.Resolve(output).Len() == 0 {
			return nil, nil
		}
	}
	return &tupleStream{tuples}, nil
}

// evalTupleStep evaluates one step over a tuple stream; fresh is true for the path's
// first tuple step (whose tuples carry no variables yet).
func evalTupleStep(step jparse.Node, tuples []tuple, fresh bool, env *environment) ([]tuple, error) {
	expr := step
	var focus, index string
	var stages []jparse.Stage
	var anc *jparse.Slot
	switch s := step.(type) {
	case *jparse.StepNode:
		expr, focus, index, stages, anc = s.Expr, s.Focus, s.Index, s.Stages, s.Ancestor
	case *jparse.PredicateNode:
		expr = s.Expr
		for _, f := range s.Filters {
			stages = append(stages, jparse.Stage{Filter: f})
		}
	}
	if srt, ok := expr.(*jparse.SortNode); ok && srt.Expr == nil {
		out, err := sortTuples(srt, tuples, env)
		if err != nil {
			return nil, err
		}
		if fresh && index != "" {
			for k := range out {
				out[k] = out[k].with(index, reflect.ValueOf(float64(k)))
			}
		}
		return applyStages(stages, out, env)
	}
	var out []tuple
	for _, t := range tuples {
		res, err := evalT(expr, t.at, frame(env, t))
		if err != nil {
			return nil, err
		}
		if ts, ok := asTupleStream(res); ok {
			for _, rt := range ts.tuples {
				nt := t
				for _, b := range rt.binds {
					nt = nt.with(b.name, b.value)
				}
				nt.at = rt.at
				out = append(out, nt)
			}
			continue
		}
		if res == undefined {
			continue
		}
		for k, v := range itemsOf(res) {
			nt := t
			if focus != "" {
				nt = nt.with(focus, v)
			} else {
				nt.at = v
			}
			if index != "" {
				nt = nt.with(index, reflect.ValueOf(float64(k)))
			}
			if anc != nil {
				nt = nt.with(anc.Label, t.at)
			}
			out = append(out, nt)
		}
	}
	return applyStages(stages, out, env)
}

func applyStages(stages []jparse.Stage, tuples []tuple, env *environment) ([]tuple, error) {
	var err error
	for _, st := range stages {
		if st.Filter == nil {
			for k := range tuples {
				tuples[k] = tuples[k].with(st.Index, reflect.ValueOf(float64(k)))
			}
			continue
		}
		if tuples, err = filterTuples(st.Filter, tuples, env); err != nil {
			return nil, err
		}
	}
	return tuples, nil
}

// filterTuples keeps the tuples a predicate selects (by position or truth).
func filterTuples(filter jparse.Node, tuples []tuple, env *environment) ([]tuple, error) {
	n := len(tuples)
	var out []tuple
	for i, t := range tuples {
		res, err := eval(filter, t.at, frame(env, t))
		if err != nil {
			return nil, err
		}
		if jtypes.IsNumber(res) {
			res = arrayify(res)
		}
		switch {
		case jtypes.IsArrayOf(res, jtypes.IsNumber):
			for j, m := 0, res.Len(); j < m; j++ {
				x, _ := jtypes.AsNumber(res.Index(j))
				idx := int(math.Floor(x))
				if idx < 0 {
					idx += n
				}
				if idx == i {
					out = append(out, t)
				}
			}
		case jlib.Boolean(res):
			out = append(out, t)
		}
	}
	return out, nil
}

// sortTuples orders the stream by the sort terms, each evaluated with the tuple's variables.
func sortTuples(node *jparse.SortNode, tuples []tuple, env *environment) ([]tuple, error) {
	info := make([]*sortinfo, len(tuples))
	isNumberTerm := make([]bool, len(node.Terms))
	isStringTerm := make([]bool, len(node.Terms))
	for i, t := range tuples {
		values := make([]reflect.Value, len(node.Terms))
		e := frame(env, t)
		for j, term := range node.Terms {
			v, err := eval(term.Expr, t.at, e)
			if err != nil {
				return nil, err
			}
			if v == undefined {
				continue
			}
			switch {
			case jtypes.IsNumber(v):
				if isStringTerm[j] {
					return nil, newEvalError(ErrSortMismatch, term.Expr, nil)
				}
				isNumberTerm[j] = true
			case jtypes.IsString(v):
				if isNumberTerm[j] {
					return nil, newEvalError(ErrSortMismatch, term.Expr, nil)
				}
				isStringTerm[j] = true
			default:
				return nil, newEvalError(ErrNonSortable, term.Expr, nil)
			}
			values[j] = v
		}
		info[i] = &sortinfo{index: i, values: values}
	}
	sort.SliceStable(info, makeLessFunc(info, node.Terms))
	out := make([]tuple, len(info))
	for i := range info {
		out[i] = tuples[info[i].index]
	}
	return out, nil
}

// evalTupleGroup groups a tuple stream: the key and value expressions see each tuple's
// variables; the variables of the tuples of one group are joined as JSONata does.
func evalTupleGroup(node *jparse.ObjectNode, ts *tupleStream, env *environment) (reflect.Value, error) {
	type group struct {
		pair   int
		tuples []tuple
	}
	groups := map[string]*group{}
	var order []string
	for _, t := range ts.tuples {
		e := frame(env, t)
		for p, pair := range node.Pairs {
			k, err := eval(pair[0], t.at, e)
			if err != nil {
				return undefined, err
			}
			if k == undefined {
				continue
			}
			key, ok := jtypes.AsString(k)
			if !ok {
				return undefined, newEvalError(ErrIllegalKey, pair[0], nil)
			}
			g, ok := groups[key]
			if !ok {
				groups[key] = &group{pair: p, tuples: []tuple{t}}
				order = append(order, key)
				continue
			}
			if g.pair != p {
				return undefined, newEvalError(ErrDuplicateKey, pair[0], key)
			}
			g.tuples = append(g.tuples, t)
		}
	}
	results := make(map[string]interface{}, len(groups))
	for _, key := range order {
		g := groups[key]
		// the group's context and each variable: one value, or the values of its tuples
		ctx := joinValues(g.tuples, func(t tuple) (reflect.Value, bool) { return t.at, true })
		e := env
		var names []string
		seen := map[string]bool{}
		for _, t := range g.tuples {
			for _, b := range t.binds {
				if !seen[b.name] {
					seen[b.name] = true
					names = append(names, b.name)
				}
			}
		}
		if len(names) > 0 {
			e = newEnvironment(env, len(names))
			for _, name := range names {
				e.bind(name, joinValues(g.tuples, func(t tuple) (reflect.Value, bool) {
					for _, b := range t.binds {
						if b.name == name {
							return b.value, true
						}
					}
					return undefined, false
				}))
			}
		}
		v, err := eval(node.Pairs[g.pair][1], ctx, e)
		if err != nil {
			return undefined, err
		}
		if v.IsValid() && v.CanInterface() {
			results[key] = v.Interface()
		}
	}
	return reflect.ValueOf(results), nil
}

// joinValues joins one value per tuple as $append does: a single value stays itself,
// several become one array (arrays among them are spliced in).
func joinValues(tuples []tuple, get func(tuple) (reflect.Value, bool)) reflect.Value {
	var vals []reflect.Value
	for _, t := range tuples {
		if v, ok := get(t); ok && v.IsValid() {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return undefined
	}
	if len(vals) == 1 {
		return vals[0]
	}
	out := make([]interface{}, 0, len(vals))
	for _, v := range vals {
		if jtypes.IsArray(v) {
			v = jtypes.Resolve(v)
			for i := 0; i < v.Len(); i++ {
				out = append(out, v.Index(i).Interface())
			}
			continue
		}
		if v.CanInterface() {
			out = append(out, v.Interface())
		}
	}
	return reflect.ValueOf(out)
}
