package aijob

import (
	"net/http"
	"testing"
	"time"
)

// FuzzOpenAIReply classifies any reply; the classifier is internal, so this test stays inside
// the package.
func FuzzOpenAIReply(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"{}"}}],"usage":{"prompt_tokens":1}}`), 200)
	f.Add([]byte(`{"error":{"message":"quota","code":"insufficient_quota"}}`), 429)
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		if status < 100 || status > 599 {
			return
		}
		e := httpError(status, body, true)
		if e.Kind == "" {
			t.Fatal("unclassified")
		}
		_ = e.JobError()
	})
}

// Retry-After is read in seconds, as an HTTP date or as Retry-After-Ms; anything else, or a
// negative number, is no advice.
func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	d := func(v time.Duration) *time.Duration { return &v }
	for _, c := range []struct {
		header, value string
		want          *time.Duration
	}{
		{"Retry-After", "1", d(time.Second)},
		{"Retry-After", " 0 ", d(0)},
		{"Retry-After", "120", d(2 * time.Minute)},
		{"Retry-After", now.Add(3 * time.Second).Format(http.TimeFormat), d(3 * time.Second)},
		{"Retry-After", now.Add(-time.Minute).Format(http.TimeFormat), d(0)},
		{"Retry-After", "-5", nil},
		{"Retry-After", "soon", nil},
		{"Retry-After-Ms", "250", d(250 * time.Millisecond)},
		{"Retry-After-Ms", "later", nil},
		{"X-Other", "1", nil},
	} {
		h := http.Header{}
		h.Set(c.header, c.value)
		got := retryAfter(h, now)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: %s → %v, want %v", c.header, c.value, got, c.want)
		}
	}
}

// A wait is what the server asked for, else the backoff with at most a quarter more, and never
// more than MaxRetryWait.
func TestRetryWait(t *testing.T) {
	p := RetryPolicy{Interval: time.Second, MaxAttempts: 4, Backoff: 2}
	hour, zero := time.Hour, time.Duration(0)
	if w := p.wait(1, &hour); w != MaxRetryWait {
		t.Fatalf("Retry-After 1 h waited %s", w)
	}
	if w := p.wait(3, &zero); w != 0 {
		t.Fatalf("Retry-After 0 waited %s", w)
	}
	for n := 1; n <= 6; n++ {
		w, base := p.wait(n, nil), min(p.Delay(n), MaxRetryWait)
		if w < base || w > min(base+base/4, MaxRetryWait) {
			t.Fatalf("retry %d waits %s, want %s to %s", n, w, base, base+base/4)
		}
	}
}
