package flow

import (
	"context"
	"time"

	"jobdesk/engine/flow/asl"
)

// stateJ runs a Pass, Choice, Succeed, Fail or Wait state whose query language is JSONata.
// Output and Assign are evaluated with the variables as they were when the state was entered;
// what Assign sets is visible from the next state on.
func (r *run) stateJ(ctx context.Context, fr *frame, s *asl.State, raw any, key string, entered time.Time) (any, string, *asl.Error) {
	cobj := r.contextObject(s, entered, 0, "")
	vs := asl.JVars(fr.vars, raw, cobj, nil, nil, false, false)
	finish := func(assign, output asl.JTemplate, next string) (any, string, *asl.Error) {
		assigned, aerr := r.jassignment(assign, vs)
		if aerr != nil {
			return nil, "", aerr
		}
		out := raw
		if output.Present() {
			v, err := output.Eval(vs)
			if err != nil {
				return nil, "", toASL(err)
			}
			out = v
		}
		if aerr := r.assign(fr, assigned); aerr != nil {
			return nil, "", aerr
		}
		return out, next, nil
	}
	switch s.Type {
	case "Pass":
		return finish(s.J.Assign, s.J.Output, s.Next)
	case "Succeed":
		return finish(asl.JTemplate{}, s.J.Output, "")
	case "Choice":
		for i := range s.Choices {
			c := &s.Choices[i]
			ok, err := c.ConditionTrue(vs)
			if err != nil {
				return nil, "", toASL(err)
			}
			if ok {
				return finish(c.JAssign, c.JOutput, c.Next)
			}
		}
		if s.Default != "" {
			return finish(s.J.Assign, s.J.Output, s.Default)
		}
		return nil, "", fail("States.NoChoiceMatched", "no choice rule matched and there is no Default in state %q", s.Name)
	case "Fail":
		e := &asl.Error{}
		for _, f := range []struct {
			t   asl.JTemplate
			out *string
		}{{s.J.Error, &e.Name}, {s.J.Cause, &e.Cause}} {
			if !f.t.Present() {
				continue
			}
			v, err := f.t.Eval(vs)
			if err != nil {
				return nil, "", toASL(err)
			}
			str, ok := v.(string)
			if !ok {
				str = string(asl.Encode(v))
			}
			*f.out = str
		}
		return nil, "", e
	case "Wait":
		until := entered
		switch {
		case s.HasSeconds:
			until = entered.Add(time.Duration(s.Seconds * float64(time.Second)))
		case s.J.Seconds.Present():
			f, err := asl.EvalJNumber(s.J.Seconds, vs, true, 0)
			if err != nil {
				return nil, "", toASL(err)
			}
			until = entered.Add(time.Duration(f) * time.Second)
		case s.Timestamp != "":
			until, _ = asl.ParseTimestamp(s.Timestamp)
		case s.J.Timestamp.Present():
			v, err := s.J.Timestamp.Eval(vs)
			if err != nil {
				return nil, "", toASL(err)
			}
			ts, _ := v.(string)
			t, ok := asl.ParseTimestamp(ts)
			if !ok {
				return nil, "", fail("States.QueryEvaluationError", "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: %s", plain(v))
			}
			until = t
		}
		if err := r.sleep(ctx, key+"/wait", until); err != nil {
			return nil, "", err
		}
		return finish(s.J.Assign, s.J.Output, s.Next)
	}
	return nil, "", fail("States.Runtime", "state %q: unknown type %s", s.Name, s.Type)
}
