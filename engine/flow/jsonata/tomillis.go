package jsonata

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/blues/jsonata-go/jtypes"
)

// $toMillis: an ISO 8601 timestamp, or a date/time written with an XPath picture (the inverse
// of $fromMillis), as milliseconds since the epoch; nothing when the text does not match the
// picture.

var isoRe = regexp.MustCompile(`^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$`)

func toMillis(s string, picture jtypes.OptionalString) (any, error) {
	if !picture.IsSet() {
		m := isoRe.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("D3110: %q is not an ISO 8601 timestamp", s)
		}
		num := func(i, def int) int {
			if m[i] == "" {
				return def
			}
			n, _ := strconv.Atoi(m[i])
			return n
		}
		ms := 0
		if m[7] != "" {
			ms, _ = strconv.Atoi((m[7] + "00")[:3])
		}
		t := time.Date(num(1, 0), time.Month(num(2, 1)), num(3, 1), num(4, 0), num(5, 0), num(6, 0), ms*1e6, time.UTC)
		off := 0
		if z := m[8]; z != "" && z != "Z" {
			off = zoneMinutes(z)
		}
		return float64(t.UnixMilli() - int64(off)*60000), nil
	}
	return parseDateTime(s, picture.String)
}

// zoneMinutes reads "+05:30", "-0500", "+5", "-5:30".
func zoneMinutes(z string) int {
	sign := 1
	if strings.HasPrefix(z, "-") {
		sign = -1
	}
	z = strings.TrimLeft(z, "+-")
	h, m := z, ""
	if i := strings.IndexByte(z, ':'); i >= 0 {
		h, m = z[:i], z[i+1:]
	} else if len(z) == 4 {
		h, m = z[:2], z[2:]
	}
	hh, _ := strconv.Atoi(h)
	mm, _ := strconv.Atoi(m)
	return sign * (hh*60 + mm)
}

type dtPart struct {
	comp  byte
	pres  string // presentation modifier
	maxW  int
	ord   bool
	regex string
}

func parseDateTime(s, pic string) (any, error) {
	var re strings.Builder
	re.WriteString("^")
	var parts []dtPart
	for i := 0; i < len(pic); {
		switch {
		case strings.HasPrefix(pic[i:], "[["):
			re.WriteString(regexp.QuoteMeta("["))
			i += 2
		case strings.HasPrefix(pic[i:], "]]"):
			re.WriteString(regexp.QuoteMeta("]"))
			i += 2
		case pic[i] == '[':
			end := strings.IndexByte(pic[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("D3135: the picture %q has a [ without ]", pic)
			}
			p, err := dtMarker(strings.Join(strings.Fields(pic[i+1:i+end]), ""))
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
			re.WriteString("(" + p.regex + ")")
			i += end + 1
		default:
			j := i
			for j < len(pic) && pic[j] != '[' && !strings.HasPrefix(pic[j:], "]]") {
				j++
			}
			re.WriteString(regexp.QuoteMeta(pic[i:j]))
			i = j
		}
	}
	re.WriteString("$")
	m := regexp.MustCompile(re.String()).FindStringSubmatch(s)
	if m == nil {
		return nil, jtypes.ErrUndefined // nothing: the text does not match the picture
	}
	vals := map[byte]int{}
	offset, pm, hasP := 0, false, false
	for k, p := range parts {
		text := m[k+1]
		switch p.comp {
		case 'Z', 'z':
			z := strings.TrimPrefix(text, "GMT")
			if z != "Z" {
				offset = zoneMinutes(z)
			}
			continue
		case 'P':
			hasP, pm = true, strings.EqualFold(text, "pm")
			continue
		case 'F', 'C', 'E':
			continue
		case 'X', 'x', 'W', 'w':
			return nil, fmt.Errorf("D3136: the components of %q cannot make a date", pic)
		case 'f':
			ms, _ := strconv.Atoi((text + "000")[:3])
			vals['f'] = ms
			continue
		}
		n, err := dtValue(p, text)
		if err != nil {
			return nil, err
		}
		vals[p.comp] = n
	}
	if h, ok := vals['h']; ok {
		if hasP && pm && h < 12 {
			h += 12
		} else if hasP && !pm && h == 12 {
			h = 0
		}
		vals['H'] = h
	}
	order := []byte{'Y', 'M', 'D', 'H', 'm', 's', 'f'}
	if _, ok := vals['d']; ok {
		order = []byte{'Y', 'd', 'H', 'm', 's', 'f'}
	}
	first, last := -1, -1
	for i, c := range order {
		if _, ok := vals[c]; ok {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 && len(parts) == 0 {
		return nil, jtypes.ErrUndefined // a picture of literal text only
	}
	if first < 0 {
		return nil, fmt.Errorf("D3136: the components of %q cannot make a date", pic)
	}
	for i := first; i <= last; i++ {
		if _, ok := vals[order[i]]; !ok {
			return nil, fmt.Errorf("D3136: the components of %q cannot make a date", pic)
		}
	}
	now := time.Now().UTC()
	nowVals := map[byte]int{'Y': now.Year(), 'M': int(now.Month()), 'D': now.Day(), 'd': now.YearDay()}
	get := func(c byte, i int, def int) int {
		if v, ok := vals[c]; ok {
			return v
		}
		if i < first {
			return nowVals[c]
		}
		return def
	}
	var t time.Time
	if len(order) == 6 {
		t = time.Date(get('Y', 0, 0), 1, 1, get('H', 2, 0), get('m', 3, 0), get('s', 4, 0), get('f', 5, 0)*1e6, time.UTC).AddDate(0, 0, get('d', 1, 1)-1)
	} else {
		t = time.Date(get('Y', 0, 0), time.Month(get('M', 1, 1)), get('D', 2, 1), get('H', 3, 0), get('m', 4, 0), get('s', 5, 0), get('f', 6, 0)*1e6, time.UTC)
	}
	return float64(t.UnixMilli() - int64(offset)*60000), nil
}

func dtMarker(marker string) (dtPart, error) {
	if marker == "" {
		return dtPart{}, fmt.Errorf("D3135: an empty [] in a picture")
	}
	p := dtPart{comp: marker[0], maxW: -1}
	rest := marker[1:]
	if k := strings.LastIndexByte(rest, ','); k >= 0 && widthRe.MatchString(rest[k+1:]) {
		w := widthRe.FindStringSubmatch(rest[k+1:])
		if w[3] != "" && w[3] != "*" {
			p.maxW, _ = strconv.Atoi(w[3])
		}
		rest = rest[:k]
	}
	if !strings.ContainsRune("YMDdFWwXxHhPmsfZzCE", rune(p.comp)) {
		return p, fmt.Errorf("D3132: unknown component %q in a date/time picture", string(p.comp))
	}
	if len(rest) > 1 && strings.HasSuffix(rest, "o") {
		rest, p.ord = rest[:len(rest)-1], true
	}
	p.pres = rest
	switch {
	case p.comp == 'Z':
		p.regex = `Z|[+-]\d{1,2}(?::?\d{2})?`
	case p.comp == 'z':
		p.regex = `GMT[+-]\d{1,2}(?::?\d{2})?`
	case p.comp == 'P':
		p.regex = `(?i:am|pm)`
	case rest == "N" || rest == "n" || rest == "Nn" || (rest == "" && (p.comp == 'F' || p.comp == 'C' || p.comp == 'E')):
		if !strings.ContainsRune("MFxCE", rune(p.comp)) {
			return p, fmt.Errorf("D3133: the component %q cannot be written as a name", string(p.comp))
		}
		p.regex = `[A-Za-z]+`
	case rest == "I" || rest == "i":
		p.regex = `[IVXLCDMivxlcdm]+`
	case rest == "A" || rest == "a":
		p.regex = `[A-Za-z]+`
	case rest == "W" || rest == "w" || rest == "Ww":
		p.regex = `[A-Za-z][A-Za-z, \-]*?`
	default:
		digits, optional := 0, false
		for _, r := range rest {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r == '#':
				optional = true
			}
		}
		switch {
		case p.maxW > 0:
			p.regex = fmt.Sprintf(`\d{1,%d}`, p.maxW)
		case digits > 1 && !optional:
			p.regex = fmt.Sprintf(`\d{%d}`, digits)
		default:
			p.regex = `\d+`
		}
		if p.ord {
			p.regex += `(?:st|nd|rd|th)`
		}
	}
	return p, nil
}

func dtValue(p dtPart, text string) (int, error) {
	switch p.pres {
	case "N", "n", "Nn":
		if p.comp == 'M' {
			for i, name := range monthNames {
				if strings.EqualFold(text, name) || (len(text) >= 3 && strings.HasPrefix(strings.ToLower(name), strings.ToLower(text))) {
					return i + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("D3137: %q is not a month name", text)
	case "I", "i", "A", "a", "W", "w", "Ww":
		pic := p.pres
		if pic == "Ww" {
			pic = "w"
		}
		n, err := parseInteger(strings.ToLower(text), strings.ToLower(pic))
		if strings.ToUpper(pic) == "I" || pic == "A" || pic == "a" {
			n, err = parseInteger(text, pic)
		}
		return int(n), err
	}
	digits := strings.TrimRight(text, "stndrh")
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, fmt.Errorf("D3137: %q is not a number", text)
	}
	return n, nil
}
