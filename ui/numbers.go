package ui

import (
	"strconv"
	"strings"
	"unicode"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// groupInt writes n with a comma between groups of three digits (18,000,000), as the service's
// result views write figures.
func groupInt(n int64) string { return app.GroupDigits(n) }

// jobNumber is how the window names job j: its number with digit groups ("#1,234"), the one
// the command line takes as 1234 or #1234; a job a workflow made has no number and is named
// as the command line takes it ("id:345").
func jobNumber(j job.Job) string {
	if j.Number > 0 {
		return "#" + groupInt(j.Number)
	}
	return j.Ref()
}

// groupNumbers puts digit groups into the counts of an engine's message ("18000000 行" →
// "18,000,000 行"). It leaves alone what is not a count: job numbers (#12345), dates and times
// (2026-11-24, 17:03, 2026/11), decimals, years (2026年), and digits inside words or digests.
func groupNumbers(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i := 0; i < len(r); {
		if !isDigit(r[i]) {
			b.WriteRune(r[i])
			i++
			continue
		}
		k := i
		for k < len(r) && isDigit(r[k]) {
			k++
		}
		run := string(r[i:k])
		if k-i >= 4 && isCount(r, i, k) {
			n, err := strconv.ParseInt(run, 10, 64)
			if err == nil {
				run = groupInt(n)
			}
		}
		b.WriteString(run)
		i = k
	}
	return b.String()
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

// isCount reports whether the digits r[i:k] stand alone as a count.
func isCount(r []rune, i, k int) bool {
	if r[i] == '0' {
		return false
	}
	if i > 0 {
		switch p := r[i-1]; {
		case p == '#' || p == '/' || p == ':' || p == '-' || p == '.' || p == ',' || p == '_' || p == 'v' || p == 'E':
			return false
		case unicode.IsLetter(p) && p < 0x3000:
			return false
		}
	}
	if k < len(r) {
		switch n := r[k]; {
		case n == '/' || n == ':' || n == '-' || n == '_' || n == '年':
			return false
		case n == '.' || n == ',':
			return !(k+1 < len(r) && isDigit(r[k+1]))
		case unicode.IsLetter(n) && n < 0x3000:
			return false
		}
	}
	return true
}
