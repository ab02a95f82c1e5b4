package sfnapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// epoch is a date as the protocol writes it: seconds since 1970 with a millisecond fraction.
type epoch time.Time

// MarshalJSON writes the date as a JSON number of seconds.
func (t epoch) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return strconv.AppendFloat(nil, float64(ms)/1000, 'f', -1, 64), nil
}

// at returns a date for a required field.
func at(t time.Time) epoch { return epoch(t) }

// atp returns a date for an optional field: nil when t is nil or zero.
func atp(t *time.Time) *epoch {
	if t == nil || t.IsZero() {
		return nil
	}
	e := epoch(*t)
	return &e
}

// decode reads a request body into v. An empty body is an empty object, as the SDK sends for
// operations without input. Unknown fields are ignored, as AWS does.
func decode(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &Error{Status: 400, Type: "SerializationException", Message: wrongType(te)}
		}
		if tooDeep(err) {
			return &Error{Status: 400, Type: "SerializationException", Message: fmt.Sprintf("the request body is nested too deeply: JSON is read to a depth of %d", maxJSONDepth)}
		}
		return &Error{Status: 400, Type: "SerializationException", Message: "the request body is not valid JSON: " + err.Error()}
	}
	return nil
}

// maxJSONDepth is how deeply encoding/json (and so the engine) nests arrays and objects.
const maxJSONDepth = 10000

// tooDeep reports whether err is encoding/json refusing JSON nested deeper than maxJSONDepth.
func tooDeep(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth")
}

// wrongType says what AWS's JSON 1.0 services say when a value has the wrong type
// ("STRING_VALUE can not be converted to an Integer"), not the Go types involved.
func wrongType(te *json.UnmarshalTypeError) string {
	switch te.Value {
	case "object":
		return "Start of structure or map found where not expected."
	case "array":
		return "Start of list found where not expected"
	}
	value := map[string]string{"string": "STRING_VALUE", "number": "NUMBER_VALUE", "bool": "BOOLEAN_VALUE"}[te.Value]
	if value == "" {
		value = strings.ToUpper(te.Value) + "_VALUE"
	}
	target := "a Structure"
	if te.Type != nil {
		switch te.Type.Kind() {
		case reflect.String:
			target = "a String"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			target = "an Integer"
		case reflect.Float32, reflect.Float64:
			target = "a Double"
		case reflect.Bool:
			target = "a Boolean"
		case reflect.Slice, reflect.Array:
			target = "a List"
		case reflect.Map:
			target = "a Map"
		}
	}
	return value + " can not be converted to " + target
}

// handler answers one operation: the request body in, the answer to encode (or an error) out.
type handler func(s *Server, ctx context.Context, body []byte) (any, error)

// operation makes the handler of an operation from the function that answers its request, a
// struct R: the body is decoded into an R (SerializationException when it cannot be), then every
// field tagged arn:"kind" ("kind1|kind2" for several) is checked with checkARN and named by its
// JSON name, in field order, before f runs. An operation whose ARN rule depends on the request
// (ListExecutions takes one of two) checks it itself.
func operation[R any](f func(*Server, context.Context, *R) (any, error)) handler {
	arns := arnFields(reflect.TypeFor[R]())
	return func(s *Server, ctx context.Context, body []byte) (any, error) {
		var in R
		if err := decode(body, &in); err != nil {
			return nil, err
		}
		v := reflect.ValueOf(&in).Elem()
		for _, a := range arns {
			if err := checkARN(a.name, v.Field(a.index).String(), a.kinds...); err != nil {
				return nil, err
			}
		}
		return f(s, ctx, &in)
	}
}

// arnField is a request field that must hold the ARN of one of kinds.
type arnField struct {
	index int
	name  string
	kinds []string
}

// arnFields lists the fields of request struct t tagged arn:"…". A tag on a field that is not a
// string is a mistake in the program, reported when the operations table is built.
func arnFields(t reflect.Type) []arnField {
	var out []arnField
	for i := range t.NumField() {
		f := t.Field(i)
		kinds, ok := f.Tag.Lookup("arn")
		if !ok {
			continue
		}
		if f.Type.Kind() != reflect.String {
			panic(fmt.Sprintf("sfnapi: %s.%s has an arn tag but is not a string", t.Name(), f.Name))
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, arnField{i, name, strings.Split(kinds, "|")})
	}
	return out
}

// required fails with ValidationException naming the first empty field (pairs of name, value).
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return validation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", pairs[i])
		}
	}
	return nil
}

// checkName applies the API reference's rule for names of state machines, executions and
// activities: 1 to 80 characters, none of whitespace, brackets, wildcards, the special
// characters " # % \ ^ | ~ ` $ & , ; : / or control characters. The engine may be stricter.
func checkName(field, name string) error {
	if name == "" {
		return required(field, "")
	}
	if !utf8.ValidString(name) {
		return typed("InvalidName", "Invalid Name: '%s' is not valid UTF-8", name)
	}
	if n := utf8.RuneCountInString(name); n > 80 {
		return typed("InvalidName", "Invalid Name: '%s' is %d characters long; at most 80 are allowed", name, n)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || (r >= 0x7f && r <= 0x9f) || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return typed("InvalidName", "Invalid Name: '%s' contains %q, which a name may not contain", name, r)
		}
	}
	return nil
}

// checkARN checks that arn is a Step Functions ARN of one of the resource kinds
// (stateMachine, execution, activity, mapRun): arn:PARTITION:states:REGION:ACCOUNT:KIND:…
func checkARN(field, arn string, kinds ...string) error {
	if arn == "" {
		return required(field, "")
	}
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) == 7 && parts[0] == "arn" && strings.HasPrefix(parts[1], "aws") && parts[2] == "states" && parts[6] != "" {
		for _, k := range kinds {
			if parts[5] == k {
				return nil
			}
		}
	}
	return typed("InvalidArn", "Invalid Arn: '%s' is not the ARN of a %s", arn, strings.Join(kinds, " or "))
}

// checkPayload checks an execution input or task output: valid JSON of at most 256 KiB.
// Empty means "{}" (the API's default input).
func checkPayload(typ, what, s string) (json.RawMessage, error) {
	if s == "" {
		return json.RawMessage("{}"), nil
	}
	if len(s) > maxPayloadBytes {
		return nil, typed(typ, "the %s is %d bytes; at most %d are allowed", what, len(s), maxPayloadBytes)
	}
	if !json.Valid([]byte(s)) {
		var v json.RawMessage
		if tooDeep(json.Unmarshal([]byte(s), &v)) {
			return nil, typed(typ, "the %s is nested too deeply: JSON is read to a depth of %d", what, maxJSONDepth)
		}
		return nil, typed(typ, "the %s is not valid JSON", what)
	}
	return json.RawMessage(s), nil
}

// maxResults checks a page size: 0 means the default, 1 to 1000 are allowed.
func maxResults(n int) (int, error) {
	switch {
	case n == 0:
		return defaultMaxResults, nil
	case n < 0 || n > maxMaxResults:
		return 0, validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 0 and %d", n, maxMaxResults)
	}
	return n, nil
}

// str returns a JSON payload as the protocol carries it: a string, nil when there is none.
func str(raw json.RawMessage) *string {
	if len(raw) == 0 {
		return nil
	}
	s := string(raw)
	return &s
}

// strp returns s, or nil when empty (optional string fields are left out).
func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// included is the inputDetails / outputDetails object: the data was included in full.
type included struct {
	Included bool `json:"included"`
}
