package jsonata

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// $formatInteger and $parseInteger, which the JSONata 1.x port lacks: an integer written with
// an XPath picture ("000", "#,##0", "0;o", "I", "i", "A", "a", "w", "W", "Ww", "w;o") and read back.

// firstUndefined makes a function return nothing when its first argument is undefined.
func firstUndefined(argv []reflect.Value) bool { return len(argv) > 0 && !argv[0].IsValid() }

// picture is a parsed primary format token with its modifier.
type picture struct {
	kind     byte // 'd' decimal digits, 'A'/'a' letters, 'I'/'i' roman, 'W'/'w'/'T' words (T: Ww)
	ordinal  bool
	zero     rune  // the zero of the digits' family
	width    int   // mandatory digits
	seps     []sep // grouping separators, by position from the right
	regular  int   // every this many digits (0: at seps' positions only)
	regularS rune
}

type sep struct {
	pos int
	ch  rune
}

func parsePicture(p string) (*picture, error) {
	pic := &picture{}
	primary := p
	if i := strings.LastIndexByte(p, ';'); i >= 0 {
		primary = p[:i]
		mod := p[i+1:]
		if strings.HasPrefix(mod, "o") {
			pic.ordinal = true
		} else if !strings.HasPrefix(mod, "c") && mod != "" {
			return nil, fmt.Errorf("D3130: the picture %q has an unknown modifier", p)
		}
	}
	switch primary {
	case "A", "a", "I", "i", "W", "w":
		pic.kind = primary[0]
		return pic, nil
	case "Ww":
		pic.kind = 'T'
		return pic, nil
	}
	pic.kind = 'd'
	var zero rune = -1
	digits := 0 // digit positions seen, from the right
	runes := []rune(primary)
	for i := len(runes) - 1; i >= 0; i-- {
		r := runes[i]
		switch {
		case unicode.IsDigit(r):
			z := r - rune(digitValue(r))
			if zero >= 0 && z != zero {
				return nil, fmt.Errorf("D3131: the picture %q mixes digits of different families", p)
			}
			zero = z
			pic.width++
			digits++
		case r == '#':
			digits++
		case unicode.IsLetter(r):
			return nil, fmt.Errorf("D3130: the picture %q is not a decimal, roman, letter or word picture", p)
		default:
			pic.seps = append(pic.seps, sep{pos: digits, ch: r})
		}
	}
	if zero < 0 {
		return nil, fmt.Errorf("D3130: the picture %q has no mandatory digit", p)
	}
	pic.zero = zero
	if n := len(pic.seps); n > 0 {
		first := pic.seps[0].pos
		regular := first > 0
		for i, s := range pic.seps {
			if s.ch != pic.seps[0].ch || s.pos != first*(i+1) {
				regular = false
			}
		}
		if regular {
			pic.regular, pic.regularS = first, pic.seps[0].ch
		}
	}
	return pic, nil
}

// digitValue is the value of a Unicode decimal digit.
func digitValue(r rune) int {
	for z := r; z >= r-9; z-- {
		if !unicode.IsDigit(z) {
			return int(r - z - 1)
		}
	}
	return int(r - (r - 9))
}

func formatInteger(v float64, p string) (string, error) {
	pic, err := parsePicture(p)
	if err != nil {
		return "", err
	}
	neg := v < 0
	n := math.Trunc(math.Abs(v))
	var s string
	switch pic.kind {
	case 'A', 'a':
		s = letters(int64(n), pic.kind == 'A')
	case 'I', 'i':
		s = roman(int64(n))
		if pic.kind == 'i' {
			s = strings.ToLower(s)
		}
	case 'W', 'w', 'T':
		s = words(n, false, pic.ordinal)
		switch pic.kind {
		case 'W':
			s = strings.ToUpper(s)
		case 'T':
			s = titleWords(s)
		}
	default:
		s = pic.decimal(n)
		if pic.ordinal {
			s += ordinalSuffix(int64(n))
		}
	}
	if neg {
		s = "-" + s
	}
	return s, nil
}

func (pic *picture) decimal(n float64) string {
	ds := fmt.Sprintf("%.0f", n)
	for len(ds) < pic.width {
		ds = "0" + ds
	}
	var out []rune
	count := 0
	next := 0 // index into seps
	for i := len(ds) - 1; i >= 0; i-- {
		if count > 0 {
			switch {
			case pic.regular > 0 && count%pic.regular == 0:
				out = append(out, pic.regularS)
			case pic.regular == 0 && next < len(pic.seps) && pic.seps[next].pos == count:
				out = append(out, pic.seps[next].ch)
				next++
			}
		}
		out = append(out, pic.zero+rune(ds[i]-'0'))
		count++
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

func ordinalSuffix(n int64) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

func letters(n int64, upper bool) string {
	base := 'a'
	if upper {
		base = 'A'
	}
	var out []rune
	for n > 0 {
		n--
		out = append([]rune{base + rune(n%26)}, out...)
		n /= 26
	}
	return string(out)
}

var romanNumerals = []struct {
	v int64
	s string
}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}}

func roman(n int64) string {
	var b strings.Builder
	for _, r := range romanNumerals {
		for n >= r.v {
			b.WriteString(r.s)
			n -= r.v
		}
	}
	return b.String()
}

var (
	fewWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
		"thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	fewOrdinals = []string{"zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
		"eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"}
	decadeWords = []string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	magnitudes  = []string{"thousand", "million", "billion", "trillion"}
)

// words writes n in English words as JSONata does ("three thousand, seven hundred and thirty").
func words(n float64, prev, ord bool) string {
	lead := func(s string) string {
		if prev {
			return s
		}
		return ""
	}
	switch {
	case n <= 19:
		w := fewWords[int(n)]
		if ord {
			w = fewOrdinals[int(n)]
		}
		return lead(" and ") + w
	case n < 100:
		tens, rem := int(n)/10, int(n)%10
		w := lead(" and ") + decadeWords[tens-2]
		if rem > 0 {
			w += "-" + words(float64(rem), false, ord)
		} else if ord {
			w = w[:len(w)-1] + "ieth"
		}
		return w
	case n < 1000:
		hundreds, rem := int(n)/100, math.Mod(n, 100)
		w := lead(", ") + fewWords[hundreds] + " hundred"
		if rem > 0 {
			w += words(rem, true, ord)
		} else if ord {
			w += "th"
		}
		return w
	}
	mag := int(math.Floor(math.Log10(n) / 3))
	if mag > len(magnitudes) {
		mag = len(magnitudes)
	}
	factor := math.Pow(10, float64(mag*3))
	mant := math.Floor(n / factor)
	rem := n - mant*factor
	w := lead(", ") + words(mant, false, false) + " " + magnitudes[mag-1]
	if rem > 0 {
		w += words(rem, true, ord)
	} else if ord {
		w += "th"
	}
	return w
}

// titleWords capitalises each word but "and" ("Five Hundred and Fifty-Five").
func titleWords(s string) string {
	fields := strings.Split(s, " ")
	for i, f := range fields {
		if f == "and" {
			continue
		}
		parts := strings.Split(f, "-")
		for j, p := range parts {
			if r, size := utf8.DecodeRuneInString(p); size > 0 {
				parts[j] = string(unicode.ToUpper(r)) + p[size:]
			}
		}
		fields[i] = strings.Join(parts, "-")
	}
	return strings.Join(fields, " ")
}

var wordValues = func() map[string]float64 {
	m := map[string]float64{}
	for i, w := range fewWords {
		m[w] = float64(i)
	}
	for i, w := range fewOrdinals {
		m[w] = float64(i)
	}
	for i, w := range decadeWords {
		m[w] = float64((i + 2) * 10)
		m[w[:len(w)-1]+"ieth"] = float64((i + 2) * 10)
	}
	m["hundred"], m["hundredth"] = 100, 100
	for i, w := range magnitudes {
		v := math.Pow(10, float64((i+1)*3))
		m[w], m[w+"th"] = v, v
	}
	return m
}()

func parseInteger(s, p string) (float64, error) {
	pic, err := parsePicture(p)
	if err != nil {
		return 0, err
	}
	switch pic.kind {
	case 'A', 'a':
		var n float64
		for _, r := range strings.ToUpper(s) {
			if r < 'A' || r > 'Z' {
				return 0, fmt.Errorf("D3137: %q is not written in letters", s)
			}
			n = n*26 + float64(r-'A'+1)
		}
		return n, nil
	case 'I', 'i':
		up := strings.ToUpper(s)
		var n float64
		for up != "" {
			matched := false
			for _, r := range romanNumerals {
				if strings.HasPrefix(up, r.s) {
					n += float64(r.v)
					up = up[len(r.s):]
					matched = true
					break
				}
			}
			if !matched {
				return 0, fmt.Errorf("D3137: %q is not a roman numeral", s)
			}
		}
		return n, nil
	case 'W', 'w', 'T':
		text := strings.ToLower(s)
		text = strings.ReplaceAll(text, ", ", " ")
		text = strings.ReplaceAll(text, " and ", " ")
		text = strings.ReplaceAll(text, "-", " ")
		segs := []float64{0}
		for _, part := range strings.Fields(text) {
			v, ok := wordValues[part]
			if !ok {
				return 0, fmt.Errorf("D3137: %q is not a number in words", s)
			}
			top := segs[len(segs)-1]
			segs = segs[:len(segs)-1]
			if v < 100 {
				if top >= 1000 {
					segs = append(segs, top)
					top = 0
				}
				segs = append(segs, top+v)
			} else {
				segs = append(segs, top*v)
			}
		}
		var n float64
		for _, v := range segs {
			n += v
		}
		return n, nil
	}
	if pic.ordinal {
		for _, suf := range []string{"st", "nd", "rd", "th"} {
			if strings.HasSuffix(s, suf) {
				s = strings.TrimSuffix(s, suf)
				break
			}
		}
	}
	var n float64
	seen := false
	for _, r := range s {
		switch {
		case r >= pic.zero && r <= pic.zero+9:
			n = n*10 + float64(r-pic.zero)
			seen = true
		case r == '-' && !seen:
		default:
			isSep := false
			for _, sp := range pic.seps {
				isSep = isSep || sp.ch == r
			}
			if !isSep {
				return 0, fmt.Errorf("D3137: %q does not match the picture %q", s, p)
			}
		}
	}
	if strings.HasPrefix(s, "-") {
		n = -n
	}
	return n, nil
}
