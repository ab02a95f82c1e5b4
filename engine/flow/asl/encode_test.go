package asl

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// viaEncodingJSON is what Encode must match byte for byte.
func viaEncodingJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	cases := []any{
		nil, true, false, "", "plain", "quote\" back\\ <html> & 'x'", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"日本語の文字列", "bad \xff utf-8 \xc3", "line\u2028sep\u2029", 0.0, -0.0, 1.0, -2.5, 1e20, 1e21, 123456789.125,
		1e-6, 1e-7, 2.5e-9, -3e30, math.MaxFloat64, math.SmallestNonzeroFloat64, 7, int64(-9), int64(math.MaxInt64),
		json.RawMessage(`{ "b" : [1, 2 ,"<x>"], "a":null }`), json.RawMessage(nil), json.RawMessage(`not json`),
		math.NaN(), math.Inf(1), []any(nil), map[string]any(nil), []any{}, map[string]any{},
		map[string]any{"z": 1.0, "a": []any{"x", nil, map[string]any{"k": true, "B": "é"}}, "m": json.RawMessage(`"s"`)},
		map[string]any{"n": math.NaN()}, []any{1.0, int32(3), []byte("bytes"), map[string]string{"s": "t"}},
		struct{ A int }{1},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		cases = append(cases, randomValue(r, 3))
	}
	for _, v := range cases {
		if got, want := Encode(v), viaEncodingJSON(v); !bytes.Equal(got, want) {
			t.Errorf("Encode(%#v) = %s, encoding/json gives %s", v, got, want)
		}
	}
}

func randomValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(8); {
	case depth > 0 && k == 0:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomValue(r, depth-1)
		}
		return m
	case depth > 0 && k == 1:
		a := []any{}
		for range r.IntN(5) {
			a = append(a, randomValue(r, depth-1))
		}
		return a
	case k == 2:
		return math.Float64frombits(r.Uint64())
	case k == 3:
		return float64(r.IntN(2000)-1000) / 8
	case k == 4:
		return r.IntN(2) == 0
	case k == 5:
		return nil
	}
	return randomString(r)
}

func randomString(r *rand.Rand) string {
	alphabet := []rune{'a', 'Z', '"', '\\', '<', '&', '\n', '\x01', '\x7f', 'é', '日', '\u2028', '\u2029', '😀', '\ufffd'}
	var b []byte
	for range r.IntN(12) {
		if r.IntN(20) == 0 {
			b = append(b, 0xff)
			continue
		}
		b = append(b, string(alphabet[r.IntN(len(alphabet))])...)
	}
	return string(b)
}
