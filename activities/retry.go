package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
)

// The server retries a failed activity under its RetryPolicy; what an
// attempt knows of its retries, and what it asks of the next one.

// attempt is the number of the running activity's attempt.
func attempt(ctx context.Context) int32 { return running(ctx).info.Attempt }

// minRetryAfter is the least a provider's Retry-After makes the server wait
// before the next attempt. The server takes an error's NextRetryDelay in
// place of its backoff, so a storm of 429s with "Retry-After: 1" obeyed to
// the letter would be an attempt a second for as long as it lasts, each
// billed and each a request to a provider that asked for calm (when the
// workflow retried, each also added events to history: 1,459 events and
// 23.6 MB for a storm of two and a half minutes).
const minRetryAfter = 5 * time.Second

// retryDelay is the wait before the attempt after attempt n when the
// provider asked for retryAfter (0: it did not, and the policy's backoff
// applies unchanged): at least minRetryAfter and at least the backoff of
// policy p for this attempt, so that under the floor the waits go on
// growing as without a Retry-After; never over p's MaximumInterval, so that
// a provider that names an hour is asked again within minutes.
func retryDelay(retryAfter time.Duration, n int32, p *temporal.RetryPolicy) time.Duration {
	if retryAfter <= 0 {
		return 0
	}
	d := max(retryAfter, minRetryAfter)
	if p == nil {
		return d
	}
	backoff := p.InitialInterval
	for i := int32(1); i < n && backoff > 0 && (p.MaximumInterval <= 0 || backoff < p.MaximumInterval); i++ {
		backoff = time.Duration(float64(backoff) * p.BackoffCoefficient)
	}
	d = max(d, backoff)
	if p.MaximumInterval > 0 {
		d = min(d, p.MaximumInterval)
	}
	return d
}
