package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often a running model call or tool tells the server
// it is alive; with the workflow's heartbeat timeout this bounds how long a
// call on a crashed worker waits before it is retried elsewhere (the SDK
// throttles the actual RPCs). A variable for tests.
var heartbeatEvery = time.Second

// keepBeating calls beat every heartbeatEvery until stop is called; beat
// records a heartbeat with whatever details are current (a model call's
// reply so far, stream.go; a tool's progress, toolbeat.go). The work itself
// (a model thinking, a tool running) cannot heartbeat, but the worker that
// runs it can, and its death is what the server must notice in seconds, not
// at StartToClose. Outside an activity (tests, direct calls) it does nothing.
//
// The first heartbeat comes after heartbeatEvery, not at once: the server
// counts the heartbeat timeout from the activity's start, so a worker that
// dies at once is noticed as soon, while a call that is done within the
// second (a scripted model, most tools) costs no heartbeat. An immediate one
// was a synchronous RPC and a write of the run's state on the server for
// every model call and tool call, a third of what they cost over a bare
// activity (BENCHMARKS.md).
func keepBeating(ctx context.Context, beat func()) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	hbCtx, cancel := context.WithCancel(ctx)
	every := heartbeatEvery // read here: a test may set it back while the goroutine starts
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return cancel
}
