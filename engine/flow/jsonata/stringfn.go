package jsonata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/blues/jsonata-go/jtypes"
)

// $string as JSONata 2.x writes values: numbers rounded to 15 significant digits and printed as
// JavaScript prints them (1e-7, 3.14285714285714), functions as "", and an optional second
// argument that indents objects and arrays by two spaces.
func stringFn(v reflect.Value, pretty jtypes.OptionalBool) (string, error) {
	x := any(nil)
	if v.IsValid() && v.CanInterface() {
		x = v.Interface()
	}
	if s, ok := x.(string); ok {
		return s, nil
	}
	if k := reflect.ValueOf(x).Kind(); x != nil && (k == reflect.Func || k == reflect.Struct || (k == reflect.Ptr && !reflect.ValueOf(x).IsNil())) {
		return "", nil // a function
	}
	var b bytes.Buffer
	if err := writeJS(&b, x, pretty.IsSet() && pretty.Bool, ""); err != nil {
		return "", err
	}
	return b.String(), nil
}

// jsNumber prints f as JavaScript does after rounding it to 15 significant digits.
func jsNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("D3001: attempting to convert a number that is not finite to a string")
	}
	if f != math.Trunc(f) {
		f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	}
	if f == 0 {
		return "0", nil
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp, nil
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

func writeJS(b *bytes.Buffer, x any, pretty bool, indent string) error {
	rv := reflect.ValueOf(x)
	if rv.Kind() == reflect.Ptr && rv.IsNil() {
		x, rv = nil, reflect.Value{}
	}
	switch v := x.(type) {
	case nil:
		b.WriteString("null")
		return nil
	case string:
		enc, _ := json.Marshal(v)
		b.Write(enc)
		return nil
	case bool:
		b.WriteString(strconv.FormatBool(v))
		return nil
	case float64:
		s, err := jsNumber(v)
		b.WriteString(s)
		return err
	}
	inner := indent + "  "
	nl := func(ind string) {
		if pretty {
			b.WriteString("\n" + ind)
		}
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		s, err := jsNumber(float64(rv.Int()))
		b.WriteString(s)
		return err
	case reflect.Slice, reflect.Array:
		b.WriteByte('[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(inner)
			if err := writeJS(b, elem(rv.Index(i)), pretty, inner); err != nil {
				return err
			}
		}
		if rv.Len() > 0 {
			nl(indent)
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, fmt.Sprint(k.Interface()))
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(inner)
			kj, _ := json.Marshal(k)
			b.Write(kj)
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
			if err := writeJS(b, elem(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()))), pretty, inner); err != nil {
				return err
			}
		}
		if len(keys) > 0 {
			nl(indent)
		}
		b.WriteByte('}')
		return nil
	}
	b.WriteString(`""`) // a function
	return nil
}

func elem(v reflect.Value) any {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() || (v.Kind() == reflect.Interface && v.IsNil()) {
		return nil
	}
	return v.Interface()
}
