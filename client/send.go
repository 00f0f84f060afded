package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/internal/patient"
)

// A session's queue (doc.go, "In order, once"). A request that could not be
// sent for a passing reason (the server restarting, an answer lost on the
// way) is sent again with the same update id, which the server runs once.

// request is one update or signal in a session's queue.
type request struct {
	ctx      context.Context
	name     string
	signal   bool
	arg      any // nil: none
	updateID string

	taken chan struct{} // closed once delivered, refused, or given up
	// Set before taken is closed:
	err    error                          // why it was not taken; a *RefusedError when refused
	handle sdkclient.WorkflowUpdateHandle // an update's, once accepted
	ready  bool                           // handle holds the answer already

	mu      sync.Mutex
	follows []string // the update ids of the turn_reply requests that follow it (followID)
}

// followID is the update id of the n-th turn_reply (from 1) that follows
// r's turn into a later run. It is random: an id that can be worked out
// from r's, which the history shows, could be registered first by anyone
// who may update the session, with an update of their own whose answer the
// server would then give as the turn's reply. It is kept, so that Result
// called again asks under the same ids, which the server answers once.
func (r *request) followID(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.follows) < n {
		r.follows = append(r.follows, uuid.NewString())
	}
	return r.follows[n-1]
}

// Sent is a request given to the session's queue: a message (Send) or
// another update. Its methods may be called from any goroutine, and more
// than once.
type Sent struct {
	s *Session
	r *request
}

// UpdateID is the update's id: the same id sent again is answered once,
// with the first answer (SendWithID). Empty for a signal.
func (m *Sent) UpdateID() string { return m.r.updateID }

// Accepted waits until the session has taken the request: nil once an
// update was accepted (its answer may come much later: Reply), a
// *RefusedError when the session refused it, another error when it was
// never delivered (the context given to Send ended first, no such session).
// ctx bounds this wait only.
func (m *Sent) Accepted(ctx context.Context) error {
	select {
	case <-m.r.taken:
		return m.r.err
	case <-ctx.Done():
		return fmt.Errorf("%s to %s: not accepted yet: %w", m.r.name, m.s.id, ctx.Err())
	}
}

// Reply waits for the answer of a send_message: the agent's reply at the
// end of the turn the message started.
func (m *Sent) Reply(ctx context.Context) (string, error) {
	var reply string
	err := m.Result(ctx, &reply)
	return reply, err
}

// Result waits until the update is answered and decodes the answer into
// out (nil to drop it). An answer that is late, because a worker or the
// server restarted meanwhile, is asked for again under the same update id
// until ctx ends: an accepted update is durable and answered once. A turn
// handed over to the session's next run before it answered (a wait of
// days) is followed there with turn_reply, as often as it is handed on,
// so that a message's Result is always its turn's reply. A signal's
// Result is its Accepted.
func (m *Sent) Result(ctx context.Context, out any) error {
	err := m.result(ctx, out)
	for n := 1; ; n++ {
		id, ok := goesOn(err, m.r.updateID)
		if !ok {
			return err
		}
		// The run that answered so may still be handing over: ask its
		// successor, after a pause that grows if the answer comes again.
		if !sleep(ctx, min(time.Duration(n)*firstRetry, maxRetry)) {
			return fmt.Errorf("%s to %s: its turn went on in a later run, not answered yet: %w", m.r.name, m.s.id, ctx.Err())
		}
		next := m.s.post(ctx, api.TurnReplyUpdate, api.TurnReplyArgs{UpdateID: id}, m.r.followID(n))
		err = next.result(ctx, out)
	}
}

// result is Result for this request alone.
func (m *Sent) result(ctx context.Context, out any) error {
	if err := m.Accepted(ctx); err != nil || m.r.signal {
		return err
	}
	r := m.r
	if r.ready {
		return m.s.answerErr(r.name, r.handle.Get(ctx, out))
	}
	wait := firstRetry
	for {
		h := m.s.c.tc.GetWorkflowUpdateHandle(sdkclient.GetWorkflowUpdateHandleOptions{
			WorkflowID: m.s.id, RunID: r.handle.RunID(), UpdateID: r.updateID})
		err := h.Get(ctx, out)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil && !transient(err) {
			return m.s.answerErr(r.name, err)
		}
		if ctx.Err() != nil || !sleep(ctx, wait) {
			return fmt.Errorf("%s to %s: accepted, not answered yet: %w", r.name, m.s.id, ctx.Err())
		}
		wait = min(2*wait, maxRetry)
	}
}

// goesOn reports whether err says the turn an update started goes on in a
// later run, and the update id whose reply turn_reply gives (the failure
// names it; updateID when it does not).
func goesOn(err error, updateID string) (string, bool) {
	ae, ok := errors.AsType[*temporal.ApplicationError](err)
	if !ok || ae.Type() != api.ErrTypeTurnGoesOn {
		return "", false
	}
	var d api.TurnGoesOn
	if ae.HasDetails() && ae.Details(&d) == nil && d.UpdateID != "" {
		return d.UpdateID, true
	}
	return updateID, true
}

// answerErr words the error that came in place of an update's answer.
func (s *Session) answerErr(name string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := goesOn(err, ""); ok {
		return err // not a refusal: Result follows the turn
	}
	if r := refusal(err); r != nil {
		return r
	}
	return fmt.Errorf("%s to %s: %w", name, s.id, err)
}

// Bounds of the waits between two attempts of a request or of its answer.
const (
	firstRetry = 200 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// post queues an update; updateID "" means a fresh one.
func (s *Session) post(ctx context.Context, name string, arg any, updateID string) *Sent {
	if updateID == "" {
		updateID = uuid.NewString()
	}
	return s.enqueue(&request{ctx: ctx, name: name, arg: arg, updateID: updateID})
}

// signal queues a signal and waits until it is delivered.
func (s *Session) signal(ctx context.Context, name string, arg any) error {
	return s.enqueue(&request{ctx: ctx, name: name, signal: true, arg: arg}).Accepted(ctx)
}

// call runs an update to its answer.
func (s *Session) call(ctx context.Context, name string, arg, out any) error {
	return s.post(ctx, name, arg, "").Result(ctx, out)
}

// Update queues the update name with args as they are written (JSON; empty
// for none), as scenario files and `temporal workflow update` name them:
// for a caller that carries the contract's messages by name. The typed
// methods are the usual way.
func (s *Session) Update(ctx context.Context, name string, args json.RawMessage) *Sent {
	return s.post(ctx, name, rawArg(args), "")
}

// Signal sends the signal name with args as they are written (JSON; empty
// for none), in its place in the queue, and returns once it is delivered.
func (s *Session) Signal(ctx context.Context, name string, args json.RawMessage) error {
	return s.signal(ctx, name, rawArg(args))
}

func rawArg(args json.RawMessage) any {
	if len(args) == 0 {
		return nil
	}
	return args
}

func argsOf(arg any) []any {
	if arg == nil {
		return nil
	}
	return []any{arg}
}

// enqueue adds r to the queue and starts its sender when none runs. The
// sender goroutine ends when the queue is empty.
func (s *Session) enqueue(r *request) *Sent {
	r.taken = make(chan struct{})
	s.mu.Lock()
	s.queue = append(s.queue, r)
	start := !s.sending
	s.sending = true
	s.mu.Unlock()
	if start {
		go s.deliverAll()
	}
	return &Sent{s: s, r: r}
}

func (s *Session) deliverAll() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.sending = false
			s.mu.Unlock()
			return
		}
		r := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.mu.Unlock()
		s.deliver(r)
		close(r.taken)
	}
}

// deliver sends r until the session has taken it, or it cannot be.
func (s *Session) deliver(r *request) {
	wait := firstRetry
	for {
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("%s to %s: not sent: %w", r.name, s.id, err)
			return
		}
		if r.signal {
			// Not sent again here: a signal has no id the server would
			// know it by, and the SDK already retries what surely did not
			// arrive.
			if err := s.c.tc.SignalWorkflow(r.ctx, s.id, "", r.name, r.arg); err != nil {
				r.err = s.wrap(r.name, err)
			}
			return
		}
		h, err := s.c.tc.UpdateWorkflow(r.ctx, sdkclient.UpdateWorkflowOptions{
			UpdateID: r.updateID, WorkflowID: s.id, UpdateName: r.name, Args: argsOf(r.arg),
			WaitForStage: sdkclient.WorkflowUpdateStageAccepted,
		})
		if err == nil {
			r.handle = h
			r.ready, err = answered(h)
			if err != nil {
				// Refused by the validator (or failed at once).
				r.err = s.answerErr(r.name, err)
			}
			return
		}
		if r.ctx.Err() != nil || !transient(err) {
			r.err = s.wrap(r.name, err)
			return
		}
		if !sleep(r.ctx, wait) {
			continue // reports the context's end
		}
		wait = min(2*wait, maxRetry)
	}
}

// answered reports whether an update's handle holds its answer already (it
// was refused, or answered as soon as accepted), and the refusal. With
// this SDK, a validator's refusal comes back from the handle, not from
// UpdateWorkflow: a handle that holds its outcome answers Get at once, and
// one that must ask the server fails at once with an ended context.
func answered(h sdkclient.WorkflowUpdateHandle) (bool, error) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.Get(ended, nil)
	if _, ok := errors.AsType[*sdkclient.WorkflowUpdateServiceTimeoutOrCanceledError](err); ok {
		return false, nil
	}
	return true, err
}

// transient reports whether err says only that an answer did not come in
// time or the server could not take the call now: the same request (with
// the same update id) may be sent again. The caller checks its own
// context first.
func transient(err error) bool {
	if _, ok := errors.AsType[*sdkclient.WorkflowUpdateServiceTimeoutOrCanceledError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*serviceerror.ResourceExhausted](err); ok {
		return true
	}
	return patient.Late(err)
}

// sleep waits d, and reports false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// RefusedError is the session's own answer to a request it refused or
// failed: a validator's refusal (nothing waits for that approval, an
// unknown field, a call_id that is not the one waiting) or a handler's
// error. Its Error is the workflow's message alone.
type RefusedError struct {
	Message string
}

func (e *RefusedError) Error() string { return e.Message }

// refusal is err as a *RefusedError when the workflow returned it; nil
// otherwise.
func refusal(err error) error {
	if r, ok := errors.AsType[*RefusedError](err); ok {
		return r
	}
	if ae, ok := errors.AsType[*temporal.ApplicationError](err); ok && ae.Message() != "" {
		return &RefusedError{Message: ae.Message()}
	}
	return nil
}
