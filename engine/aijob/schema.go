package aijob

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schema is the subset of JSON Schema the job schemas use: type (object, array, string,
// integer, number, boolean), properties, required, additionalProperties false, items,
// minItems/maxItems, enum, minLength/maxLength, minimum/maximum. The same JSON goes to the model
// as response_format, so the model is constrained and the reply is checked by one definition.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
}

// ParseSchema reads a schema; keywords outside the subset are refused so that a schema never
// promises a check the validator does not make.
func ParseSchema(b []byte) (*Schema, error) {
	if err := checkKeywords(b, "$"); err != nil {
		return nil, err
	}
	var s Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &s, nil
}

var knownKeywords = map[string]bool{"type": true, "description": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "minItems": true, "maxItems": true, "enum": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true}

func checkKeywords(b []byte, at string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("schema %s: %w", at, err)
	}
	for k, v := range m {
		if !knownKeywords[k] {
			return fmt.Errorf("schema %s: keyword %q is not supported", at, k)
		}
		switch k {
		case "items":
			if err := checkKeywords(v, at+"[]"); err != nil {
				return err
			}
		case "properties":
			var props map[string]json.RawMessage
			if err := json.Unmarshal(v, &props); err != nil {
				return fmt.Errorf("schema %s.properties: %w", at, err)
			}
			for name, p := range props {
				if err := checkKeywords(p, at+"."+name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ValidationError lists what is wrong with a value, each with its JSON path.
type ValidationError struct{ Problems []string }

// Error joins the problems (at most five).
func (e *ValidationError) Error() string {
	p := e.Problems
	more := ""
	if len(p) > 5 {
		more = fmt.Sprintf(" (and %d more)", len(p)-5)
		p = p[:5]
	}
	return strings.Join(p, "; ") + more
}

// ValidateJSON parses raw and validates it; a parse failure is reported as a problem at $.
func (s *Schema) ValidateJSON(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &ValidationError{[]string{"$: not valid JSON: " + err.Error()}}
	}
	return v, s.Validate(v)
}

// Validate checks a decoded JSON value (as encoding/json decodes into any).
func (s *Schema) Validate(v any) error {
	var probs []string
	s.validate(v, "$", &probs)
	if len(probs) > 0 {
		return &ValidationError{probs}
	}
	return nil
}

func (s *Schema) validate(v any, at string, probs *[]string) {
	bad := func(f string, a ...any) { *probs = append(*probs, at+": "+fmt.Sprintf(f, a...)) }
	if len(s.Enum) > 0 {
		ok := false
		for _, e := range s.Enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				ok = true
			}
		}
		if !ok {
			bad("must be one of %v, got %v", s.Enum, v)
			return
		}
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				bad("missing required property %q", r)
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				p.validate(m[k], at+"."+k, probs)
			} else if s.AdditionalProperties != nil && !*s.AdditionalProperties {
				bad("property %q is not allowed", k)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("must be an array")
			return
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			bad("must have at least %d items, has %d", *s.MinItems, len(a))
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			bad("must have at most %d items, has %d", *s.MaxItems, len(a))
		}
		if s.Items != nil {
			for i, it := range a {
				s.Items.validate(it, fmt.Sprintf("%s[%d]", at, i), probs)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("must be a string")
			return
		}
		n := utf8.RuneCountInString(str)
		if s.MinLength != nil && n < *s.MinLength {
			bad("must be at least %d characters", *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			bad("must be at most %d characters", *s.MaxLength)
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok {
			bad("must be a %s", s.Type)
			return
		}
		if s.Type == "integer" && f != math.Trunc(f) {
			bad("must be an integer, got %v", f)
		}
		if s.Minimum != nil && f < *s.Minimum {
			bad("must be at least %v", *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			bad("must be at most %v", *s.Maximum)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("must be true or false")
		}
	case "":
	default:
		bad("schema type %q is not supported", s.Type)
	}
}
