package csvjob

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// naiveLines is countLines written the obvious way, byte by byte.
func naiveLines(b []byte, startEmpty bool) (nl, blank int64) {
	empty := startEmpty
	for i, c := range b {
		switch c {
		case '\n':
			nl++
			if empty {
				blank++
			}
			empty = true
		case '\r':
			// A CR right before a line break does not make the line non-empty.
			if !(i+1 < len(b) && b[i+1] == '\n') {
				empty = false
			}
		default:
			empty = false
		}
	}
	return nl, blank
}

// countLines agrees with the byte-by-byte count on random text made of line breaks, CRs and
// letters, at every length and alignment, with and without an empty line in progress.
func TestCountLinesMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	alphabet := []byte("\n\n\r\nab,")
	for round := 0; round < 20000; round++ {
		b := make([]byte, r.IntN(70))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		// The fast path only sees text where every CR is followed by a line break.
		for i := range b {
			if b[i] == '\r' && (i+1 >= len(b) || b[i+1] != '\n') {
				b[i] = 'x'
			}
		}
		for _, startEmpty := range []bool{false, true} {
			nl, blank := countLines(b, startEmpty)
			wnl, wblank := naiveLines(b, startEmpty)
			if nl != wnl || blank != wblank {
				t.Fatalf("%q startEmpty=%v: got %d lines %d blank, want %d and %d", b, startEmpty, nl, blank, wnl, wblank)
			}
		}
	}
}

// users combines rows per user exactly as a plain map does, for numbered keys (stored by
// number), keys of other shapes and numbers too large for the numbered records, split into
// chunks merged in order, with every combine rule.
func TestUsersMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rules := []string{CombineSum, CombineMax, CombineMin, CombineFirst, CombineLast}
	type acc struct {
		rows int64
		vals []int64
	}
	for round := 0; round < 200; round++ {
		want := map[string]*acc{}
		var order []string
		var chunks []*partial
		for c := 0; c < 1+r.IntN(4); c++ {
			u := newUsers(rules)
			for row := 0; row < r.IntN(300); row++ {
				var key string
				switch r.IntN(6) {
				case 0:
					key = fmt.Sprintf("guest-%d", r.IntN(20))
				case 1:
					key = fmt.Sprintf("U%07d", 9_000_000+r.IntN(5)) // beyond the numbered records
				case 2:
					key = fmt.Sprintf("U%d", r.IntN(50)) // another width
				default:
					key = fmt.Sprintf("U%05d", r.IntN(80))
				}
				if round%7 == 0 && row == 0 && c == 0 {
					key = "first-key-not-numbered" // the learned shape is then "none"
				}
				vals := make([]int64, len(rules))
				for k := range vals {
					vals[k] = int64(r.IntN(1000)) - 500
				}
				rec := record(u, []byte(key))
				first := rec[0] == 0
				for k := range rules {
					u.combine(rec, k, vals[k], first)
				}
				rec[0]++

				a := want[key]
				if a == nil {
					a = &acc{vals: append([]int64(nil), vals...)}
					want[key] = a
					order = append(order, key)
				} else {
					a.vals[0] += vals[0]
					a.vals[1] = max(a.vals[1], vals[1])
					a.vals[2] = min(a.vals[2], vals[2])
					a.vals[4] = vals[4]
				}
				a.rows++
			}
			p := &partial{}
			p.Vals, p.UserRows = u.columns()
			p.KeyBuf, p.KeyEnd = u.KeyBuf, u.KeyEnd
			if !p.consistent(len(rules)) {
				t.Fatalf("round %d: chunk %d is not consistent", round, c)
			}
			chunks = append(chunks, p)
		}
		m := newUsers(rules)
		for _, p := range chunks {
			m.merge(p)
		}
		m.compact()
		if m.n() != len(want) {
			t.Fatalf("round %d: %d users, want %d", round, m.n(), len(want))
		}
		seen := map[string]bool{}
		for i := 0; i < m.n(); i++ {
			key := string(m.key(i))
			a := want[key]
			if a == nil || seen[key] {
				t.Fatalf("round %d: unexpected or repeated key %q", round, key)
			}
			seen[key] = true
			if got := record(m, key); got[0] != a.rows { // found again by key after compact
				t.Fatalf("round %d: %s found again with %d rows, want %d", round, key, got[0], a.rows)
			}
			if m.rows(i) != a.rows {
				t.Fatalf("round %d: %s has %d rows, want %d", round, key, m.rows(i), a.rows)
			}
			for k := range rules {
				if m.val(k, i) != a.vals[k] {
					t.Fatalf("round %d: %s %s = %d, want %d", round, key, rules[k], m.val(k, i), a.vals[k])
				}
			}
		}
	}
}
