package jsonata

import "testing"

// Pictures with an exponent used to loop without end for 0 and negative numbers.
func TestFormatNumberExponent(t *testing.T) {
	for src, want := range map[string]string{
		`$formatNumber(0, '0e0')`:           `"0e0"`,
		`$formatNumber(0, '0.000e0')`:       `"0.000e0"`,
		`$formatNumber(-310, '0e0')`:        `"-3e2"`,
		`$formatNumber(-0.5, '0.0e0')`:      `"-5.0e-1"`,
		`$formatNumber(7200, '0.0e0')`:      `"7.2e3"`,
		`$formatNumber(-8, '0e0;(0e0)')`:    `"(8e0)"`,
		`$formatNumber(-1234.5, '#,##0.0')`: `"-1,234.5"`,
	} {
		v, ok := eval(t, src, nil, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s, want %s", src, js(v), want)
		}
	}
}
