package aijob

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// MaxRetryWait caps one wait between a call's tries, a server's Retry-After included: a server
// asking for longer is asked again after MaxRetryWait, and the tries bound the whole.
const MaxRetryWait = 30 * time.Second

// Retrying gives each call of any Provider its own retries: a call that was throttled, found the
// service unavailable or lost its connection is tried again by Policy (up to Policy.MaxAttempts
// retries), after the wait the service asked for (Retry-After) or else after the policy's
// backoff with a little jitter, each wait at most MaxRetryWait. It never waits past the
// context's deadline or after it is cancelled. When the retries give up, the failure is final:
// the *ProviderError returned carries the number of tries (Attempts) and is no longer
// retryable, so no outer retry multiplies them. Other failures (refused, offline, timed out)
// return at once, unchanged.
//
// Every call a Service makes goes through Retrying (Service.CallRetry), so a workflow Task that
// makes many calls — eight sub-goals' actions in one ACTION_GENERATION Task — does not spend its
// own retry budget one call after another.
type Retrying struct {
	Provider
	Policy RetryPolicy
	// OnAttempt, when set, is told the outcome of every try (the Service records each as usage).
	OnAttempt func(Reply, error)
}

// Complete sends req, retrying as the type's doc says.
func (r Retrying) Complete(ctx context.Context, req Request) (Reply, error) {
	for n := 1; ; n++ {
		rep, err := r.Provider.Complete(ctx, req)
		if r.OnAttempt != nil {
			r.OnAttempt(rep, err)
		}
		var pe *ProviderError
		if err == nil || r.Policy.MaxAttempts <= 0 || ctx.Err() != nil || !errors.As(err, &pe) || !pe.Kind.busy() || pe.Attempts > 0 {
			return rep, err
		}
		if n > r.Policy.MaxAttempts {
			return rep, pe.final(n)
		}
		wait := r.Policy.wait(n, pe.RetryAfter)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return rep, pe.final(n) // the answer would come too late anyway
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return rep, err
		case <-t.C:
		}
	}
}

// final is a copy of e, final after n tries.
func (e *ProviderError) final(n int) *ProviderError {
	f := *e
	f.Attempts = n
	return &f
}

// wait is the wait before retry n (1-based): what the server asked for, else the policy's
// backoff plus up to a quarter of it at random (so calls throttled together do not come back
// together); at most MaxRetryWait.
func (p RetryPolicy) wait(n int, retryAfter *time.Duration) time.Duration {
	var d time.Duration
	if retryAfter != nil {
		d = max(*retryAfter, 0)
	} else {
		d = p.Delay(n)
		d += rand.N(d/4 + 1)
	}
	return min(d, MaxRetryWait)
}
