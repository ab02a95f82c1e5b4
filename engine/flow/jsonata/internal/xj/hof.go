package xj

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/blues/jsonata-go/jlib"
	"github.com/blues/jsonata-go/jtypes"
)

// The higher-order functions as JSONata defines them: a function is given as many of
// (value, index, array) as it declares parameters, and $map and $filter return a sequence
// (one item is the item itself, none is nothing).

// arity is the number of parameters a function declares (without the optional ones of a
// built-in function).
func arity(f jtypes.Callable) int {
	if c, ok := f.(*goCallable); ok {
		n := 0
		for _, p := range c.params {
			if !p.isOpt && !p.isVar {
				n++
			}
		}
		return n
	}
	return f.ParamCount()
}

func hofArgs(f jtypes.Callable, v reflect.Value, i int, arr reflect.Value) []reflect.Value {
	argv := []reflect.Value{v, reflect.ValueOf(float64(i)), arr}
	n := arity(f)
	if n < 1 {
		n = 1
	}
	if n > 3 {
		n = 3
	}
	return argv[:n]
}

func items(v reflect.Value) reflect.Value {
	v = jtypes.Resolve(v)
	if jtypes.IsArray(v) {
		return v
	}
	return reflect.ValueOf([]interface{}{v.Interface()})
}

func asSequenceResult(results []interface{}) (interface{}, error) {
	switch len(results) {
	case 0:
		return nil, jtypes.ErrUndefined
	case 1:
		return results[0], nil
	}
	return results, nil
}

func hofMap(v reflect.Value, f jtypes.Callable) (interface{}, error) {
	arr := items(v)
	var results []interface{}
	for i := 0; i < arr.Len(); i++ {
		res, err := f.Call(hofArgs(f, arr.Index(i), i, arr))
		if err != nil {
			return nil, err
		}
		if res.IsValid() && res.CanInterface() {
			results = append(results, res.Interface())
		}
	}
	return asSequenceResult(results)
}

func filterItems(arr reflect.Value, f jtypes.Callable) ([]interface{}, error) {
	var results []interface{}
	for i := 0; i < arr.Len(); i++ {
		item := arr.Index(i)
		ok := true
		if f != nil {
			res, err := f.Call(hofArgs(f, item, i, arr))
			if err != nil {
				return nil, err
			}
			ok = jlib.Boolean(res)
		}
		if ok && item.IsValid() && item.CanInterface() {
			results = append(results, item.Interface())
		}
	}
	return results, nil
}

func hofFilter(v reflect.Value, f jtypes.Callable) (interface{}, error) {
	results, err := filterItems(items(v), f)
	if err != nil {
		return nil, err
	}
	return asSequenceResult(results)
}

// hofSingle is $single(array [, function]): the one value that satisfies the function.
func hofSingle(v reflect.Value, f jtypes.OptionalCallable) (interface{}, error) {
	var fn jtypes.Callable
	if f.IsSet() {
		fn = f.Callable
	}
	results, err := filterItems(items(v), fn)
	if err != nil {
		return nil, err
	}
	switch len(results) {
	case 0:
		return nil, fmt.Errorf("D3139: the $single() function expected exactly 1 matching result; instead it matched 0")
	case 1:
		return results[0], nil
	}
	return nil, fmt.Errorf("D3138: the $single() function expected exactly 1 matching result; instead it matched more")
}

// hofReduce is $reduce(array, function [, init]); the function takes (accumulator, value
// [, index [, array]]).
func hofReduce(v reflect.Value, f jtypes.Callable, init jtypes.OptionalValue) (interface{}, error) {
	arr := items(v)
	n := arity(f)
	if n < 2 {
		return nil, fmt.Errorf("D3050: the second argument of $reduce must be a function with at least two arguments")
	}
	var res reflect.Value
	i := 0
	if init.IsSet() {
		res = init.Value
	} else if arr.Len() > 0 {
		res = arr.Index(0)
		i = 1
	}
	for ; i < arr.Len(); i++ {
		argv := []reflect.Value{res, arr.Index(i)}
		if n >= 3 {
			argv = append(argv, reflect.ValueOf(float64(i)))
		}
		if n >= 4 {
			argv = append(argv, arr)
		}
		var err error
		if res, err = f.Call(argv); err != nil {
			return nil, err
		}
	}
	if !res.IsValid() || !res.CanInterface() {
		return nil, jtypes.ErrUndefined
	}
	return res.Interface(), nil
}

// number is $number: JSONata 2.x also reads 0x…, 0b… and 0o… integers.
func number(value jlib.StringNumberBool) (float64, error) {
	if s, ok := jtypes.AsString(reflect.Value(value)); ok && len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'b', 'B':
			base = 2
		case 'o', 'O':
			base = 8
		}
		if base != 0 {
			n, err := strconv.ParseUint(strings.ToLower(s[2:]), base, 64)
			if err != nil {
				return 0, fmt.Errorf("D3030: unable to cast %q to a number", s)
			}
			return float64(n), nil
		}
	}
	return jlib.Number(value)
}

// replace is $replace; a pattern that matches the empty string is refused (D1004), as it
// would replace nothing forever.
func replace(src string, pattern jlib.StringCallable, repl jlib.StringCallable, limit jtypes.OptionalInt) (string, error) {
	if v := jtypes.Resolve(reflect.Value(pattern)); v.IsValid() && v.CanAddr() {
		if rc, ok := v.Addr().Interface().(*regexCallable); ok && rc.re.MatchString("") {
			return "", fmt.Errorf("D1004: regular expression matches zero length string")
		}
	}
	if v := reflect.Value(pattern); v.IsValid() && v.CanInterface() {
		if rc, ok := v.Interface().(*regexCallable); ok && rc.re.MatchString("") {
			return "", fmt.Errorf("D1004: regular expression matches zero length string")
		}
	}
	return jlib.Replace(src, pattern, repl, limit)
}

// StringOf, when set, is how the & operator writes a value that is not a string (the package
// above this one gives JSONata 2.x's $string).
var StringOf func(reflect.Value) (string, error)
