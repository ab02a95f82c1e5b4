package xj

import (
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/blues/jsonata-go/jlib"
	"github.com/blues/jsonata-go/jtypes"
)

// formatNumber is $formatNumber. The library's version loops without end on a picture with
// an exponent (0e0) when the number is 0 or negative: those are formatted here from a
// positive number.
func formatNumber(value float64, picture string, options jtypes.OptionalValue) (string, error) {
	if value > 0 || math.IsNaN(value) || math.IsInf(value, 0) || !hasExponent(picture, options) {
		return jlib.FormatNumber(value, picture, options)
	}
	if value == 0 {
		s, err := jlib.FormatNumber(1, strings.SplitN(picture, ";", 2)[0], options)
		if err != nil {
			return "", err
		}
		// the digits of 1 (1e0, 1.00e0, 10e-1) become those of 0 (0e0, 0.00e0, 00e0)
		s = strings.Map(func(r rune) rune {
			if r >= '1' && r <= '9' {
				return '0'
			}
			if r == '-' {
				return -1
			}
			return r
		}, s)
		return s, nil
	}
	if pos, neg, ok := strings.Cut(picture, ";"); ok {
		_ = pos
		return jlib.FormatNumber(-value, neg, options)
	}
	s, err := jlib.FormatNumber(-value, picture, options)
	if err != nil {
		return "", err
	}
	return "-" + s, nil
}

var exponentPicture = regexp.MustCompile(`[0-9#.]e[0-9]`)

func hasExponent(picture string, options jtypes.OptionalValue) bool {
	if options.IsSet() {
		if m := jtypes.Resolve(options.Value); jtypes.IsMap(m) {
			if v := m.MapIndex(reflect.ValueOf("exponent-separator")); v.IsValid() {
				if sep, ok := jtypes.AsString(v); ok && sep != "e" {
					return regexp.MustCompile(`[0-9#.]` + regexp.QuoteMeta(sep) + `[0-9]`).MatchString(picture)
				}
			}
		}
	}
	return exponentPicture.MatchString(picture)
}
