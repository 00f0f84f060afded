package client

import (
	"context"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/todoflow/todoflow/internal/replystream"
)

// How Watch reads a reply as it is written.
//
// The worker that runs the root agent's model call serves its reply over
// HTTP, and names where in its identity, which DescribeWorkflowExecution
// shows with the running call (package internal/replystream): Watch
// follows that stream, so each piece shows as soon as the model writes it,
// at no cost on the Temporal server. The call's heartbeats carry a preview
// of the same text every few seconds; Watch shows whichever is further
// along, so a worker that serves no stream, or that cannot be reached from
// here, still shows the reply, in steps. A stream that breaks is followed
// again (it starts with the reply so far).
//
// A call that fails, or whose worker dies, is retried by the server as the
// next attempt of the same activity (same activity id, workflows'
// modelcall.go), which writes its reply again from the start, on whichever
// worker takes it. So a stream is the stream of one attempt
// (PendingActivityInfo.Attempt): the next attempt's is followed anew, on
// its own worker or on the same one, and the heartbeat details the server
// keeps from an attempt that ended (the failed attempt's preview) are not
// shown as the next attempt's reply (currentDetails).

// refollowAfter is how long Watch waits before it follows again a stream
// that broke, or was not there yet, while its call still ran; it doubles
// with each failure of the same call's stream, up to 16 times.
const refollowAfter = 250 * time.Millisecond

// liveStream is one followed stream.
type liveStream struct {
	at      string // the server's URL
	key     replystream.Key
	attempt int32 // the call's attempt whose reply the stream serves
	cancel  func()
	tries   int // the streams of this call followed before, that failed

	mu     sync.Mutex
	reply  replystream.Assembled
	got    bool      // a frame came
	over   bool      // Follow returned
	failed time.Time // when it returned with the call still running; zero: it did not
}

// follow follows the stream of the running model call pa names, unless it
// is followed already; a call that names none, or that runs no more, is
// followed no more.
func (w *watcher) follow(execution *workflowpb.WorkflowExecutionInfo, pa *workflowpb.PendingActivityInfo) {
	var at string
	var key replystream.Key
	var attempt int32
	if pa != nil && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
		at = replystream.Locate(pa.GetLastWorkerIdentity())
		key = replystream.Key{WorkflowID: execution.GetExecution().GetWorkflowId(), RunID: execution.GetExecution().GetRunId(), ActivityID: pa.GetActivityId()}
		attempt = pa.GetAttempt()
	}
	tries := 0
	if l := w.live; l != nil {
		l.mu.Lock()
		// The next attempt of the call is another reply, even on the
		// same worker under the same key: the stream of the attempt that
		// ended has ended with it.
		same := l.at == at && l.key == key && l.attempt == attempt
		// Following, or ended (nothing more to read), or failed a moment
		// ago: a stream that keeps failing (a worker that is gone, frames
		// this client cannot read) is tried again less and less often.
		wait := refollowAfter << min(l.tries, 4)
		keep := same && (!l.over || l.failed.IsZero() || time.Since(l.failed) < wait)
		l.mu.Unlock()
		if keep {
			return
		}
		l.cancel()
		w.live = nil
		if same {
			tries = l.tries + 1
		}
	}
	if at == "" {
		return
	}
	ctx, cancel := context.WithCancel(w.ctx)
	l := &liveStream{at: at, key: key, attempt: attempt, cancel: cancel, tries: tries}
	w.live = l
	dc := w.s.c.opts.DataConverter
	go func() {
		err := replystream.Follow(ctx, at, key, dc, func(f replystream.Frame) {
			l.mu.Lock()
			l.reply.Apply(f)
			l.got = true
			l.mu.Unlock()
			select {
			case w.streamed <- struct{}{}:
			default:
			}
		})
		l.mu.Lock()
		l.over = true
		if err != nil {
			// ErrEnded too: the worker may not have begun the call that
			// the server shows started. A call that has ended is gone from
			// the next look.
			l.failed = time.Now()
		}
		l.mu.Unlock()
	}()
}

// currentDetails are the heartbeat details of the model call pa's
// current attempt, nil when it has none: the server keeps an attempt's
// last details for the next one (an attempt that fails, or whose worker
// dies, leaves its preview there), but that attempt's reply is not the
// next one's, which starts again from nothing. Details are the current
// attempt's when they were recorded after it started; between two
// attempts (the call scheduled again) there are none.
func currentDetails(pa *workflowpb.PendingActivityInfo) *commonpb.Payloads {
	hd := pa.GetHeartbeatDetails()
	if hd == nil || pa.GetAttempt() <= 1 {
		return hd
	}
	beat, started := pa.GetLastHeartbeatTime().AsTime(), pa.GetLastStartedTime().AsTime()
	if started.Unix() <= 0 || beat.Before(started) {
		return nil // not started yet, or beaten before it started
	}
	return hd
}

// streamNow is the reply as Watch shows it now: the preview of the last
// look, or the followed stream when it is further along.
func (w *watcher) streamNow() StreamChanged {
	st := w.preview
	if l := w.live; l != nil && st.Running {
		l.mu.Lock()
		r, got := l.reply, l.got
		l.mu.Unlock()
		if got && r.Cut+len(r.Text) >= st.Cut+len(st.Text) {
			st.Call, st.Text, st.Cut = r.Call, r.Text, r.Cut
		}
	}
	return st
}

// streamEvents are the events of a frame that came between two looks.
func (w *watcher) streamEvents() []Event {
	st := w.streamNow()
	if st == w.stream {
		return nil
	}
	w.stream = st
	return []Event{st, Looked{time.Now()}}
}
