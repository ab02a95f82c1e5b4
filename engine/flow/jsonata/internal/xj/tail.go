package xj

import (
	"reflect"

	"github.com/blues/jsonata-go/jlib"
	"jobdesk/engine/flow/jsonata/internal/jparse"
)

// evalTail evaluates a function body. When the body ends in a call of a JSONata function
// (in the branches of a condition or the last expression of a block), that call is not
// made: the function and its arguments are returned for the caller to run in its own loop.
func evalTail(node jparse.Node, data reflect.Value, env *environment) (reflect.Value, *lambdaCallable, []reflect.Value, error) {
	switch node.(type) {
	case *jparse.ConditionalNode, *jparse.BlockNode, *jparse.FunctionCallNode:
		if c := env.ctl; c != nil {
			if err := c.enter(); err != nil {
				return undefined, nil, nil, err
			}
			defer c.leave()
		}
	}
	switch n := node.(type) {
	case *jparse.ConditionalNode:
		c, err := eval(n.If, data, env)
		if err != nil {
			return undefined, nil, nil, err
		}
		if jlib.Boolean(c) {
			return evalTail(n.Then, data, env)
		}
		if n.Else != nil {
			return evalTail(n.Else, data, env)
		}
		return undefined, nil, nil, nil
	case *jparse.BlockNode:
		if len(n.Exprs) == 0 || n.Tuple {
			break
		}
		env = newEnvironment(env, 0)
		for _, x := range n.Exprs[:len(n.Exprs)-1] {
			if _, err := eval(x, data, env); err != nil {
				return undefined, nil, nil, err
			}
		}
		return evalTail(n.Exprs[len(n.Exprs)-1], data, env)
	case *jparse.FunctionCallNode:
		v, err := eval(n.Func, data, env)
		if err != nil {
			return undefined, nil, nil, err
		}
		if !v.IsValid() || !v.CanInterface() {
			break
		}
		fn, ok := v.Interface().(*lambdaCallable)
		if !ok {
			break
		}
		argv := make([]reflect.Value, len(n.Args))
		for i, arg := range n.Args {
			if argv[i], err = eval(arg, data, env); err != nil {
				return undefined, nil, nil, err
			}
		}
		return undefined, fn, argv, nil
	}
	v, err := eval(node, data, env)
	return v, nil, nil, err
}
