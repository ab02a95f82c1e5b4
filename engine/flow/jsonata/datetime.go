package jsonata

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/blues/jsonata-go/jtypes"
)

// $fromMillis with XPath date/time pictures ("[Y0001]-[M01]-[D01]", "[FNn], [D1o] [MNn]",
// "[X0001]-W[W01]-[F1]", "[h]:[m01] [P]", "[Z01:01t]", …) and a "±HHMM" timezone, replacing the
// port's, which knows fewer components and presentations.

const defaultDateTimePicture = "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]"

var widthRe = regexp.MustCompile(`^(\d+|\*)(-(\d+|\*))?$`)

func fromMillis(ms float64, picture, tz jtypes.OptionalString) (string, error) {
	pic := defaultDateTimePicture
	if picture.IsSet() {
		pic = picture.String
	}
	offset := 0 // minutes east of UTC
	if tz.IsSet() && tz.String != "" {
		o, err := parseOffset(tz.String)
		if err != nil {
			return "", err
		}
		offset = o
	}
	t := time.UnixMilli(int64(ms)).UTC().Add(time.Duration(offset) * time.Minute)
	var b strings.Builder
	for i := 0; i < len(pic); {
		c := pic[i]
		switch {
		case strings.HasPrefix(pic[i:], "[["):
			b.WriteByte('[')
			i += 2
		case strings.HasPrefix(pic[i:], "]]"):
			b.WriteByte(']')
			i += 2
		case c == '[':
			end := strings.IndexByte(pic[i:], ']')
			if end < 0 {
				return "", fmt.Errorf("D3135: the picture %q has a [ without ]", pic)
			}
			s, err := component(strings.Join(strings.Fields(pic[i+1:i+end]), ""), t, offset)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			i += end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

func parseOffset(s string) (int, error) {
	if len(s) != 5 || (s[0] != '+' && s[0] != '-') {
		if s == "0000" {
			return 0, nil
		}
		return 0, fmt.Errorf("the timezone %q is not ±HHMM", s)
	}
	h, err1 := strconv.Atoi(s[1:3])
	m, err2 := strconv.Atoi(s[3:5])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("the timezone %q is not ±HHMM", s)
	}
	o := h*60 + m
	if s[0] == '-' {
		o = -o
	}
	return o, nil
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// isoWeekday is 1 (Monday) … 7 (Sunday).
func isoWeekday(t time.Time) int {
	d := int(t.Weekday())
	if d == 0 {
		return 7
	}
	return d
}

// weekOfMonth is the week of the month (weeks from Monday; a week belongs to the month of its
// Thursday) and that month.
func weekOfMonth(t time.Time) (int, time.Month) {
	thu := t.AddDate(0, 0, 4-isoWeekday(t))
	first := time.Date(thu.Year(), thu.Month(), 1, 0, 0, 0, 0, time.UTC)
	firstThu := 1 + (4-isoWeekday(first)+7)%7
	return (thu.Day()-firstThu)/7 + 1, thu.Month()
}

func component(marker string, t time.Time, offset int) (string, error) {
	if marker == "" {
		return "", fmt.Errorf("D3135: an empty [] in a picture")
	}
	comp := marker[0]
	rest := marker[1:]
	// width: after the last comma, when what follows is one
	var minW, maxW = -1, -1
	if k := strings.LastIndexByte(rest, ','); k >= 0 && widthRe.MatchString(rest[k+1:]) {
		m := widthRe.FindStringSubmatch(rest[k+1:])
		if m[1] != "*" {
			minW, _ = strconv.Atoi(m[1])
		}
		if m[3] != "" && m[3] != "*" {
			maxW, _ = strconv.Atoi(m[3])
		}
		rest = rest[:k]
	}
	defaults := map[byte]string{'Y': "1", 'M': "1", 'D': "1", 'd': "1", 'F': "n", 'W': "1", 'w': "1", 'X': "1", 'x': "1",
		'H': "1", 'h': "1", 'P': "n", 'm': "01", 's': "01", 'f': "1", 'Z': "01:01", 'z': "01:01", 'C': "n", 'E': "n"}
	def, known := defaults[comp]
	if !known {
		return "", fmt.Errorf("D3132: unknown component %q in a date/time picture", string(comp))
	}
	explicit := rest != ""
	if !explicit {
		rest = def
	}
	var value int
	var name string
	switch comp {
	case 'Y':
		value = t.Year()
	case 'M':
		value, name = int(t.Month()), monthNames[t.Month()-1]
	case 'D':
		value = t.Day()
	case 'd':
		value = t.YearDay()
	case 'F':
		value, name = isoWeekday(t), dayNames[isoWeekday(t)-1]
	case 'W':
		_, value = t.ISOWeek()
	case 'X':
		value, _ = t.ISOWeek()
	case 'w':
		value, _ = weekOfMonth(t)
	case 'x':
		_, m := weekOfMonth(t)
		value, name = int(m), monthNames[m-1]
	case 'H':
		value = t.Hour()
	case 'h':
		value = t.Hour() % 12
		if value == 0 {
			value = 12
		}
	case 'P':
		name = "am"
		if t.Hour() >= 12 {
			name = "pm"
		}
	case 'm':
		value = t.Minute()
	case 's':
		value = t.Second()
	case 'f':
		digits := 0
		for _, r := range rest {
			if unicode.IsDigit(r) {
				digits++
			}
		}
		ms := fmt.Sprintf("%03d", t.Nanosecond()/1e6)
		for len(ms) < digits {
			ms += "0"
		}
		if digits < len(ms) && digits > 0 {
			ms = ms[:digits]
		}
		return ms, nil
	case 'Z', 'z':
		return zone(rest, offset, comp == 'z')
	case 'C', 'E':
		return "ISO", nil
	}
	// names
	switch rest {
	case "N", "n", "Nn":
		if name == "" {
			return "", fmt.Errorf("D3133: the component %q cannot be written as a name", string(comp))
		}
		if maxW > 0 && len(name) > maxW {
			name = name[:maxW]
		}
		switch rest {
		case "N":
			return strings.ToUpper(name), nil
		case "n":
			return strings.ToLower(name), nil
		}
		return name, nil
	}
	if comp == 'P' {
		return name, nil
	}
	ordinal := false
	if len(rest) > 1 && strings.HasSuffix(rest, "o") {
		rest, ordinal = rest[:len(rest)-1], true
	}
	p := rest
	if ordinal {
		p += ";o"
	}
	pic, err := parsePicture(p)
	if err != nil {
		return "", err
	}
	if pic.kind == 'd' && minW > pic.width {
		pic.width = minW
	}
	if comp == 'Y' && pic.kind == 'd' {
		if n := maxW; n > 0 || (!explicit && minW > 0) {
			if n <= 0 {
				n = minW
			}
			value %= int(math.Pow10(n))
			pic.width = n
		}
	}
	s, err := formatInteger(float64(value), p)
	if err != nil {
		return "", err
	}
	if pic.kind == 'd' {
		s = pic.decimal(float64(value))
		if ordinal {
			s += ordinalSuffix(int64(value))
		}
	}
	return s, nil
}

// zone writes a timezone offset: "01:01" → +05:30, "0101" → +0530, "0" → +5:30 or -5; a final
// "t" writes Z for UTC; z prefixes GMT.
func zone(p string, offset int, gmt bool) (string, error) {
	t := strings.HasSuffix(p, "t")
	p = strings.TrimSuffix(p, "t")
	if t && offset == 0 {
		return "Z", nil
	}
	sign := "+"
	if offset < 0 {
		sign = "-"
	}
	h, m := abs(offset)/60, abs(offset)%60
	digits := 0
	for _, r := range p {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	var s string
	switch {
	case digits > 4:
		return "", fmt.Errorf("D3134: the timezone picture %q has too many digits", p)
	case digits <= 2:
		s = strconv.Itoa(h)
		if digits == 2 {
			s = fmt.Sprintf("%02d", h)
		}
		if m != 0 {
			s += fmt.Sprintf(":%02d", m)
		}
	case strings.ContainsAny(p, ":"):
		s = fmt.Sprintf("%02d:%02d", h, m)
	default:
		s = fmt.Sprintf("%02d%02d", h, m)
	}
	if gmt {
		return "GMT" + sign + s, nil
	}
	return sign + s, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
