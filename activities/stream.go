package activities

import (
	"context"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"

	"github.com/todoflow/todoflow/internal/replystream"
)

// Streaming a reply to watching clients.
//
// A running CallModel keeps its reply so far in a replystream.Reply. With a
// stream server (Activities.Streams) the worker serves it over HTTP to the
// clients that watch the call, found through the worker's identity, which
// the Temporal server shows with the running activity (package
// internal/replystream): a piece of text reaches them as it is written and
// costs no billable action, whether or not anyone watches. A watcher that
// comes late gets the reply so far, then the rest.
//
// The call heartbeats only to say it is alive, at the liveness cadence
// (heartbeat.go): a 10 s reply costs two heartbeats, not one per piece.
// Each heartbeat carries a ReplyStream, the text so far, for the clients
// that cannot reach the worker (a worker that serves no stream, or one on
// another machine that serves on loopback): they see the reply in steps of
// seconds. History still records the reply once, when the activity
// completes; a worker that dies mid-stream leaves only a preview behind (its
// last heartbeat details, at most MaxStreamBytes, which the server keeps
// with the pending call), and the call's next attempt, the same activity
// retried by the server, streams again from the start, from its own worker
// (clients show the next attempt's reply, not that preview:
// client/stream.go).

// MaxStreamBytes bounds the text a heartbeat carries and a worker keeps
// for a call's watchers: a client shows a reply's last lines only, and a
// call whose worker dies leaves its last details in history (the attempt's
// timeout failure carries them as LastHeartbeatDetails).
const MaxStreamBytes = replystream.MaxBytes

// replyStream is a model call's reply as it is written, served to its
// watchers, and the heartbeats that keep the call alive with its preview.
type replyStream struct {
	head  api.ReplyStream
	reply *replystream.Reply
	stop  func()
}

// streamReply starts keeping a model call's reply and heartbeating;
// reply.Add receives the reply's pieces, stop ends both (and the watchers'
// streams).
func (a *Activities) streamReply(ctx context.Context, in CallModelInput) *replyStream {
	s := &replyStream{head: api.ReplyStream{AgentID: in.AgentID, Turn: in.Turn, Call: in.Call}}
	if a.Streams != nil {
		info := activity.GetInfo(ctx)
		s.reply = a.Streams.Open(replystream.Key{
			WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID, ActivityID: info.ActivityID,
		}, in.Call)
	} else {
		s.reply = replystream.NewReply(in.Call)
	}
	record := running(ctx).beat
	stopBeats := keepBeating(ctx, func() { record(s.details()) })
	s.stop = func() {
		stopBeats()
		s.reply.End()
	}
	return s
}

// details are the heartbeat details now: the call and its text so far.
func (s *replyStream) details() api.ReplyStream {
	d := s.head
	d.Text, d.Cut = s.reply.Text()
	return d
}
