package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often a running model call or tool tells the server
// it is alive; with the workflow's heartbeat timeout this bounds how long a
// call on a crashed worker waits before it is retried elsewhere (the SDK
// throttles the actual RPCs).
const heartbeatEvery = time.Second

// keepAlive heartbeats until the returned stop is called. The work itself
// (a model thinking, a tool running) cannot heartbeat, but the worker that
// runs it can, and its death is what the server must notice in seconds, not
// at StartToClose. Outside an activity (tests, direct calls) it does nothing.
func keepAlive(ctx context.Context, details ...any) (stop func()) {
	return keepBeating(ctx, func() { activity.RecordHeartbeat(ctx, details...) })
}

// keepBeating calls beat now and every heartbeatEvery until stop is called;
// beat records a heartbeat with whatever details are current (see
// replyStream, whose details change while it runs).
func keepBeating(ctx context.Context, beat func()) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	beat()
	hbCtx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(heartbeatEvery)
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
