package xj

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/blues/jsonata-go/jtypes"
)

// Objects are Go maps, which keep no order of their keys. So that an expression gives the
// same result every time, the keys of an object are visited in sorted order ($keys, $each,
// $spread, the wildcard and descendant operators), the order in which JobDesk writes JSON.

func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

func keysFn(obj reflect.Value) (interface{}, error) {
	var out []interface{}
	seen := map[string]bool{}
	var add func(v reflect.Value)
	add = func(v reflect.Value) {
		v = jtypes.Resolve(v)
		switch {
		case jtypes.IsArray(v):
			for i := 0; i < v.Len(); i++ {
				add(v.Index(i))
			}
		case jtypes.IsMap(v):
			for _, k := range sortedKeys(v) {
				if !seen[k.String()] {
					seen[k.String()] = true
					out = append(out, k.String())
				}
			}
		}
	}
	add(obj)
	return asSequenceResult(out)
}

func eachFn(obj reflect.Value, fn jtypes.Callable) (interface{}, error) {
	obj = jtypes.Resolve(obj)
	if !jtypes.IsMap(obj) {
		return nil, fmt.Errorf("T0410: argument 1 of function $each must be an object")
	}
	var out []interface{}
	for _, k := range sortedKeys(obj) {
		argv := []reflect.Value{obj.MapIndex(k), k, obj}
		n := arity(fn)
		if n < 1 {
			n = 1
		}
		if n > 3 {
			n = 3
		}
		res, err := fn.Call(argv[:n])
		if err != nil {
			return nil, err
		}
		if res.IsValid() && res.CanInterface() {
			out = append(out, res.Interface())
		}
	}
	return asSequenceResult(out)
}

func spreadFn(v reflect.Value) (interface{}, error) {
	v = jtypes.Resolve(v)
	switch {
	case jtypes.IsMap(v):
		var out []interface{}
		for _, k := range sortedKeys(v) {
			if x := v.MapIndex(k); x.CanInterface() {
				out = append(out, map[string]interface{}{k.String(): x.Interface()})
			}
		}
		return out, nil
	case jtypes.IsArray(v):
		var out []interface{}
		for i := 0; i < v.Len(); i++ {
			res, err := spreadFn(v.Index(i))
			if err != nil {
				return nil, err
			}
			if list, ok := res.([]interface{}); ok {
				out = append(out, list...)
			} else if res != nil {
				out = append(out, res)
			}
		}
		return out, nil
	}
	if v.IsValid() && v.CanInterface() {
		return v.Interface(), nil
	}
	return nil, jtypes.ErrUndefined
}
