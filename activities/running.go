package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
)

// activityAPI is what the methods' metrics, heartbeats, retries and
// workflow ids use of the activity they run in: the one seam between them and the SDK's activity
// API, whose calls panic on a context that is no activity's. The methods'
// tests run them in the SDK's test environment; the cold-read measurements
// of package testsuite (reading a run's transcript by Activities.Namespace)
// and the benchmarks call CallModel and RunTool outside an activity, which
// then counts and heartbeats nothing, as attempt 1 of no workflow.
type activityAPI struct {
	info    activity.Info
	metrics client.MetricsHandler
	beat    func(details any)
}

// running returns the activity ctx runs in, or what a call outside one
// makes do with.
func running(ctx context.Context) activityAPI {
	if !activity.IsActivity(ctx) {
		return activityAPI{info: activity.Info{Attempt: 1}, metrics: client.MetricsNopHandler, beat: func(any) {}}
	}
	beat := func(d any) { activity.RecordHeartbeat(ctx, d) }
	return activityAPI{info: activity.GetInfo(ctx), metrics: activity.GetMetricsHandler(ctx), beat: beat}
}
