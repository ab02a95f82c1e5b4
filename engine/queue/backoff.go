package queue

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff is the delay policy between attempts: Base × Factor^(attempt−1), capped at Max, with a
// uniform jitter of ±Jitter (a fraction) so that many jobs failing together do not retry
// together. The default follows the seeds: 1 s → 2 s → 4 s.
type Backoff struct {
	Base   time.Duration
	Factor float64
	Max    time.Duration
	Jitter float64
}

// DefaultBackoff is 1 s doubling, at most 5 minutes, ±20 % jitter.
var DefaultBackoff = Backoff{Base: time.Second, Factor: 2, Max: 5 * time.Minute, Jitter: 0.2}

// Nominal returns the delay after failed attempt n (1-based) without jitter.
func (b Backoff) Nominal(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := float64(b.Base) * math.Pow(b.Factor, float64(n-1))
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	return time.Duration(d)
}

// Delay returns the delay after failed attempt n with jitter applied.
func (b Backoff) Delay(n int) time.Duration {
	d := float64(b.Nominal(n))
	if b.Jitter > 0 {
		d *= 1 + b.Jitter*(2*rand.Float64()-1)
	}
	return time.Duration(d)
}
