package activities

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
)

// Streaming a reply to watching clients.
//
// A running CallModel heartbeats the reply's text so far as its heartbeat
// details (ReplyStream). The server keeps the latest details in the run's
// mutable state, not in its history, and shows them as the pending
// activity's heartbeat details of DescribeWorkflowExecution: a client that
// polls it sees the text while the model writes it, and one that attaches
// mid-reply sees all of it so far. History still records the reply once,
// when the activity completes; a worker that dies mid-stream leaves only a
// preview behind (in the timed-out attempt's failure, as its last heartbeat
// details, at most MaxStreamBytes), and the call's next attempt streams
// again from the start.
//
// The SDK sends at most one heartbeat per throttle interval (the latest
// details win), so that interval, the worker's MaxHeartbeatThrottleInterval,
// is what a watcher waits at most between two updates of the text.

// ReplyStream is the heartbeat detail of a running CallModel.
type ReplyStream struct {
	AgentID string `json:"agent_id"`
	Turn    int    `json:"turn"`
	Call    int    `json:"call"`
	// Text is the reply's text so far (its end, when it grew past
	// MaxStreamBytes).
	Text string `json:"text"`
	// Cut counts the bytes of the reply left out before Text.
	Cut int `json:"cut,omitempty"`
}

// MaxStreamBytes bounds the text a heartbeat carries: the details are
// rewritten with every heartbeat, a client shows a reply's last lines only,
// and a call whose worker dies leaves its last details in history (the
// attempt's timeout failure carries them as LastHeartbeatDetails).
const MaxStreamBytes = 16 << 10

// replyStream collects a model call's streamed text and keeps the activity
// alive with it as its details.
type replyStream struct {
	mu     sync.Mutex
	head   ReplyStream
	text   strings.Builder
	record func(ReplyStream) // activity.RecordHeartbeat in an activity
	stop   func()
}

// streamReply starts heartbeating for a model call; add receives the
// reply's pieces, stop ends the heartbeats. Outside an activity it records
// nothing.
func streamReply(ctx context.Context, in CallModelInput) *replyStream {
	s := &replyStream{head: ReplyStream{AgentID: in.AgentID, Turn: in.Turn, Call: in.Call}, record: func(ReplyStream) {}}
	if activity.IsActivity(ctx) {
		s.record = func(d ReplyStream) { activity.RecordHeartbeat(ctx, d) }
	}
	s.stop = keepBeating(ctx, s.beat)
	return s
}

// add appends a piece of the reply and heartbeats at once: the SDK sends it
// now or, within its throttle interval, with the next batch.
func (s *replyStream) add(delta string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.WriteString(delta)
	s.record(s.details())
}

// beat records the current details. Heartbeats are recorded under the
// lock, so that an older text can never be sent after a newer one.
func (s *replyStream) beat() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record(s.details())
}

func (s *replyStream) details() ReplyStream {
	d := s.head
	d.Text = s.text.String()
	if len(d.Text) > MaxStreamBytes {
		cut := len(d.Text) - MaxStreamBytes
		for cut < len(d.Text) && !utf8.RuneStart(d.Text[cut]) {
			cut++
		}
		d.Cut, d.Text = cut, d.Text[cut:]
	}
	return d
}
