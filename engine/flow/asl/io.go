package asl

// SelectPath applies an InputPath or OutputPath: "" (null) gives an empty object, "$" the value
// itself.
func SelectPath(path string, v any, ctx any) (any, error) {
	return SelectPathVars(path, v, ctx, nil)
}

// SelectPathVars is SelectPath where the path may read the variables in vars.
func SelectPathVars(path string, v any, ctx any, vars *Scope) (any, error) {
	switch path {
	case "":
		return map[string]any{}, nil
	case "$":
		return v, nil
	}
	return Env{Input: v, Context: ctx, Vars: vars}.Lookup(path)
}

// EffectiveInput applies InputPath, then Parameters, to a state's raw input; in a JSONata
// state it evaluates Arguments (none: the raw input).
func (s *State) EffectiveInput(raw any, ctx any, vars *Scope) (any, error) {
	if s.JSONata {
		if !s.J.Arguments.Present() {
			return raw, nil
		}
		return s.J.Arguments.Eval(JVars(vars, raw, ctx, nil, nil, false, false))
	}
	v, err := SelectPathVars(s.InputPath, raw, ctx, vars)
	if err != nil {
		return nil, err
	}
	if s.HasParameters {
		return Template(s.Parameters, Env{Input: v, Context: ctx, Vars: vars})
	}
	return v, nil
}

// Output applies ResultSelector, ResultPath and OutputPath to a state's result; in a JSONata
// state it evaluates Output (none: the result).
func (s *State) Output(raw, result any, ctx any, vars *Scope) (any, error) {
	if s.JSONata {
		if !s.J.Output.Present() {
			return result, nil
		}
		return s.J.Output.Eval(JVars(vars, raw, ctx, result, nil, true, false))
	}
	if s.HasResultSelector {
		var err error
		if result, err = Template(s.ResultSelector, Env{Input: result, Context: ctx, Vars: vars}); err != nil {
			return nil, err
		}
	}
	merged, err := PlaceResult(s.ResultPath, raw, result)
	if err != nil {
		return nil, err
	}
	return SelectPathVars(s.OutputPath, merged, ctx, vars)
}

// PlaceResult applies a ResultPath: "" (null) keeps the input, "$" replaces it, another
// reference path places the result in (a copy of) the input.
func PlaceResult(resultPath string, input, result any) (any, error) {
	switch resultPath {
	case "":
		return input, nil
	case "$":
		return result, nil
	}
	p, err := ParsePath(resultPath)
	if err != nil {
		return nil, Errorf("States.Runtime", "%v", err)
	}
	out, err := p.Set(input, result)
	if err != nil {
		return nil, Errorf("States.ResultPathMatchFailure", "%v", err)
	}
	return out, nil
}

// ErrorOutput is what a Catch passes on: {"Error": name, "Cause": cause}.
func ErrorOutput(name, cause string) map[string]any {
	return map[string]any{"Error": name, "Cause": cause}
}

// FindCatch returns the first catcher matching name, or nil.
func (s *State) FindCatch(name string) *Catcher {
	for i := range s.Catch {
		if Matches(s.Catch[i].ErrorEquals, name) {
			return &s.Catch[i]
		}
	}
	return nil
}

// FindRetry returns the index of the first retrier matching name, or -1.
func (s *State) FindRetry(name string) int {
	for i := range s.Retry {
		if Matches(s.Retry[i].ErrorEquals, name) {
			return i
		}
	}
	return -1
}
