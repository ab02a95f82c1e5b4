package xj

import (
	"fmt"
	"reflect"

	"github.com/blues/jsonata-go/jtypes"
	"jobdesk/engine/flow/jsonata/internal/jparse"
)

// Preprocess, when set, rewrites the text of an expression before it is parsed by $eval
// (the package above this one rewrites JSONata 2.x syntax the parser does not read).
var Preprocess func(string) string

// evalFn is $eval(expr [, context]): it parses and evaluates a JSONata expression given as a
// string, in the calling expression's variables, on the context (or the current one).
type evalFn struct {
	callableName
	callableMarshaler
}

func (*evalFn) ParamCount() int { return 2 }

// Call runs $eval when it was passed as a value (to $map, …): it sees only the built-in
// variables.
func (f *evalFn) Call(argv []reflect.Value) (reflect.Value, error) {
	return runEval(argv, undefined, newEnvironment(baseEnv, 0))
}

func runEval(argv []reflect.Value, data reflect.Value, env *environment) (reflect.Value, error) {
	if len(argv) == 0 || argv[0] == undefined {
		return undefined, nil
	}
	src, ok := jtypes.AsString(argv[0])
	if !ok {
		return undefined, fmt.Errorf("T0410: argument 1 of function $eval must be a string")
	}
	if Preprocess != nil {
		src = Preprocess(src)
	}
	node, err := jparse.Parse(src)
	if err != nil {
		return undefined, fmt.Errorf("D3120: syntax error in the expression passed to function $eval: %v", err)
	}
	ctx := data
	if len(argv) > 1 && argv[1] != undefined {
		ctx = argv[1]
	}
	v, err := eval(node, ctx, env)
	if err != nil {
		return undefined, fmt.Errorf("D3121: error evaluating the expression passed to function $eval: %v", err)
	}
	return v, nil
}

func init() {
	baseEnv.bind("eval", reflect.ValueOf(&evalFn{callableName: callableName{name: "eval"}}))
}
