package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// livenessShare is how much of an activity's heartbeat timeout passes
// between two of its heartbeats: the server takes an activity whose worker
// has been silent for the whole timeout for dead and retries it, so one
// heartbeat per timeout would do, and the rest (1.5 s of 5 s) is room for a
// slow heartbeat RPC. A dead worker is noticed when the timeout runs out
// after its last heartbeat, however often it beat before.
//
// Each heartbeat is a billed action on Temporal Cloud (and a write of the
// run's state on any server): at this cadence a model call or tool that
// runs 10 s costs two, where one a second cost ten and one per streamed
// piece (the reply's text once travelled this way) about sixty. It is also
// how soon a running activity learns that it was cancelled.
const livenessShare = 0.7

// heartbeatEvery, when set, replaces the cadence the heartbeat timeout
// implies; for tests.
var heartbeatEvery time.Duration

// defaultBeat is the cadence of an activity scheduled without a heartbeat
// timeout (all of todoflow's have one): its heartbeats only tell it that
// it was cancelled.
const defaultBeat = 10 * time.Second

// beatEvery is how often the activity of info heartbeats.
func beatEvery(info activity.Info) time.Duration {
	if heartbeatEvery > 0 {
		return heartbeatEvery
	}
	if t := info.HeartbeatTimeout; t > 0 {
		return time.Duration(float64(t) * livenessShare)
	}
	return defaultBeat
}

// keepBeating calls beat at the liveness cadence (beatEvery) until stop is
// called; beat records a heartbeat with whatever details are current (a
// model call's reply so far, stream.go; a tool's progress, toolbeat.go).
// The work itself (a model thinking, a tool running) cannot heartbeat, but
// the worker that runs it can, and its death is what the server must notice
// in seconds, not at StartToClose.
//
// The first heartbeat comes after one interval, not at once: the server
// counts the heartbeat timeout from the activity's start, so a worker that
// dies at once is noticed as soon, while a call that is done within the
// interval (a scripted model, most tools) costs no heartbeat. An immediate
// one was a synchronous RPC and a write of the run's state on the server for
// every model call and tool call, a third of what they cost over a bare
// activity (BENCHMARKS.md).
func keepBeating(ctx context.Context, beat func()) (stop func()) {
	hbCtx, cancel := context.WithCancel(ctx)
	every := beatEvery(running(ctx).info)
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
