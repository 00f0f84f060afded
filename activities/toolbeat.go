package activities

import (
	"context"
	"math"
	"sync"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/activity"
)

// A running tool's heartbeat.
//
// RunTool heartbeats while its tool runs (see keepBeating for why and how
// often), with a ToolProgress as its details: the server keeps the latest
// in the run's mutable state, never in its history, and shows it as the
// pending activity's heartbeat details of DescribeWorkflowExecution, where
// a client watching the session reads which tool runs and how far it has
// come. Progress a tool reports (an MCP server's notifications/progress)
// goes out with the next heartbeat: at the liveness cadence, which the SDK
// throttles further, so that progress costs no heartbeat of its own.
//
// The details also carry what the next attempt must know of this one:
// Unsent, recorded as an attempt's last act when it fails before its call
// reached the tool (see mayResend). The SDK sends a heartbeat recorded
// before a failure ahead of the failure, so the server hands it to the
// next attempt.

// MaxProgressMessage bounds a progress message in the heartbeat: it is
// rewritten with every heartbeat, and a client shows it on one line.
const MaxProgressMessage = 200

// toolBeat heartbeats for a running tool with its latest progress.
type toolBeat struct {
	mu     sync.Mutex
	d      api.ToolProgress
	record func(any) // the activity's heartbeat
	stop   func()
}

// beatTool starts heartbeating for a call of tool; stop ends it.
func beatTool(ctx context.Context, tool string) *toolBeat {
	b := &toolBeat{d: api.ToolProgress{Tool: tool}, record: running(ctx).beat}
	b.stop = keepBeating(ctx, b.beat)
	return b
}

// progress takes a tool's report; the next beat carries it. Values JSON
// cannot carry (NaN, infinities) are dropped.
func (b *toolBeat) progress(p tools.Progress) {
	if !finite(p.Progress) || !finite(p.Total) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.d.Progress, b.d.Total = p.Progress, p.Total
	b.d.Message = p.Message
	if len(p.Message) > MaxProgressMessage {
		b.d.Message = p.Message[:text.CutIndex(p.Message, MaxProgressMessage-len("…"))] + "…"
	}
}

// unsent records, at once, that this attempt ends before its call reached
// the tool; later beats keep saying so.
func (b *toolBeat) unsent(attempt int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.d.Unsent = attempt
	b.record(b.d)
}

// beat records the current details, under the lock, so that older details
// are never sent after newer ones.
func (b *toolBeat) beat() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.record(b.d)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// lastBeat is the last heartbeat an earlier attempt of this call recorded;
// nil if none did (or it is not a ToolProgress), as on a first attempt.
func lastBeat(ctx context.Context) *api.ToolProgress {
	if attempt(ctx) <= 1 || !activity.HasHeartbeatDetails(ctx) {
		return nil
	}
	var d api.ToolProgress
	if activity.GetHeartbeatDetails(ctx, &d) != nil {
		return nil
	}
	return &d
}
