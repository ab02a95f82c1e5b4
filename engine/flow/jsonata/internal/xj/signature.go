package xj

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/blues/jsonata-go/jtypes"
	"jobdesk/engine/flow/jsonata/internal/jparse"
)

// A typed function's arguments are checked as JSONata does: each argument has a one-letter
// type symbol, the signature is a regular expression over those symbols, and the groups it
// matches say which argument goes to which parameter (a variadic parameter takes several, a
// missing contextable one takes the context, a missing optional one is undefined).

type signature struct {
	re     *regexp.Regexp
	params []jparse.Param
	ctx    []*regexp.Regexp // per parameter, for a contextable one: its type without options
}

var signatures sync.Map // []jparse.Param's first element → *signature

func symbolOf(v reflect.Value) byte {
	switch {
	case v == undefined:
		return 'm'
	case jtypes.IsCallable(v):
		return 'f'
	case jtypes.IsString(v):
		return 's'
	case jtypes.IsNumber(v):
		return 'n'
	case jtypes.IsBool(v):
		return 'b'
	case jtypes.IsArray(v):
		return 'a'
	case jtypes.IsMap(v), jtypes.IsStruct(v):
		return 'o'
	}
	return 'l' // null
}

func typeClass(t jparse.ParamType) string {
	switch {
	case t&jparse.ParamTypeAny != 0:
		return "[asnblfom]"
	case t&jparse.ParamTypeJSON != 0:
		return "[asnblom]"
	case t == jparse.ParamTypeFunc:
		return "f"
	case t == jparse.ParamTypeArray:
		return "[asnblfom]"
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, c := range []struct {
		t jparse.ParamType
		s byte
	}{{jparse.ParamTypeNumber, 'n'}, {jparse.ParamTypeString, 's'}, {jparse.ParamTypeBool, 'b'}, {jparse.ParamTypeNull, 'l'},
		{jparse.ParamTypeArray, 'a'}, {jparse.ParamTypeObject, 'o'}, {jparse.ParamTypeFunc, 'f'}} {
		if t&c.t != 0 {
			b.WriteByte(c.s)
		}
	}
	b.WriteString("m]")
	return b.String()
}

func signatureOf(params []jparse.Param) (*signature, error) {
	if len(params) == 0 {
		return &signature{re: regexp.MustCompile(`^$`)}, nil
	}
	if s, ok := signatures.Load(&params[0]); ok {
		return s.(*signature), nil
	}
	sig := &signature{params: params, ctx: make([]*regexp.Regexp, len(params))}
	var b strings.Builder
	b.WriteByte('^')
	for i, p := range params {
		class := typeClass(p.Type)
		switch p.Option {
		case jparse.ParamOptional:
			class += "?"
		case jparse.ParamVariadic:
			class += "+"
		case jparse.ParamContextable:
			sig.ctx[i] = regexp.MustCompile(class)
			class += "?"
		}
		b.WriteString("(" + class + ")")
	}
	b.WriteByte('$')
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	sig.re = re
	signatures.Store(&params[0], sig)
	return sig, nil
}

// validateSignature checks and arranges the arguments of a typed function.
func validateSignature(f *lambdaCallable, argv []reflect.Value) ([]reflect.Value, error) {
	sig, err := signatureOf(f.params)
	if err != nil {
		return nil, err
	}
	symbols := make([]byte, len(argv))
	for i, a := range argv {
		symbols[i] = symbolOf(a)
	}
	m := sig.re.FindStringSubmatchIndex(string(symbols))
	if m == nil {
		return nil, fmt.Errorf("T0410: the arguments of function %s do not match its signature", f.Name())
	}
	var out []reflect.Value
	next := 0
	for i, p := range sig.params {
		start, end := m[2*i+2], m[2*i+3]
		if start == end {
			if sig.ctx[i] != nil {
				if !sig.ctx[i].MatchString(string(symbolOf(f.context))) {
					return nil, fmt.Errorf("T0411: the context value is not of the type function %s expects for argument %d", f.Name(), i+1)
				}
				out = append(out, f.context)
				continue
			}
			if next < len(argv) {
				out = append(out, argv[next])
			} else {
				out = append(out, undefined)
			}
			next++
			continue
		}
		for k := start; k < end; k++ {
			arg := undefined
			if next < len(argv) {
				arg = argv[next]
			}
			next++
			if p.Type == jparse.ParamTypeArray {
				if symbols[k] == 'm' {
					arg = undefined
				} else {
					if len(p.SubParams) > 0 {
						want := typeClass(p.SubParams[0].Type)
						ok := true
						if symbols[k] != 'a' {
							ok = strings.IndexByte(want, symbols[k]) >= 0 && symbols[k] != 'm'
						} else {
							items := jtypes.Resolve(arg)
							for j := 0; j < items.Len(); j++ {
								if s := symbolOf(items.Index(j)); strings.IndexByte(want, s) < 0 || s == 'm' {
									ok = false
									break
								}
							}
						}
						if !ok {
							return nil, fmt.Errorf("T0412: argument %d of function %s must be an array of %s", k+1, f.Name(), p.SubParams[0].Type)
						}
					}
					if symbols[k] != 'a' {
						arg = reflect.ValueOf([]interface{}{arg.Interface()})
					}
				}
			}
			out = append(out, arg)
		}
	}
	return out, nil
}
