package workflows

// The user stops the running turn (InterruptUpdate).

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/internal/text"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// errInterrupted ends a model call that the user's interrupt cancelled.
var errInterrupted = errors.New("interrupted by the user")

// interruptedReply is the reply of an interrupted turn, and the last
// message of its transcript.
const interruptedReply = "Interrupted by the user: the turn stopped here, with what it had done. The todo list and the plan stay as they are."

// validateInterrupt refuses an interrupt that has no turn to stop: kept, it
// would stop the next turn, which the user has not seen yet.
func (a *agent) validateInterrupt() error {
	switch {
	case a.cfg.Subagent:
		return errors.New("a subagent's turn is stopped by its parent (cancel_subagent)")
	case a.ended:
		return errors.New("the session has ended")
	case a.cur == nil:
		return errors.New("no turn is running; there is nothing to interrupt")
	case a.cur.stop:
		return errors.New("the turn is already being interrupted")
	}
	return nil
}

// onInterrupt stops the running turn: its model call in flight at once;
// a tool that runs finishes first (each has its timeout), and the turn ends
// before the next model call. It returns once the turn has ended.
func (a *agent) onInterrupt(ctx workflow.Context) (string, error) {
	cur := a.cur
	cur.stop = true
	if cur.cancel != nil {
		cur.cancel()
	}
	if err := workflow.Await(ctx, func() bool { return a.cur != cur }); err != nil {
		return "", err
	}
	return interruptedReply, nil
}

// stopping reports whether the user interrupted the running turn.
func (a *agent) stopping() bool { return a.cur != nil && a.cur.stop }

// endInterrupted ends the turn the user interrupted and returns its reply:
// the reply its model call had written, when it had written one, then the
// note that says where the user stopped it.
func (a *agent) endInterrupted() string {
	reply := interruptedReply
	if a.cur != nil && a.cur.cut != "" {
		reply = a.cur.cut + api.InterruptedCut + cutNote
	}
	a.append(model.Message{Role: model.RoleAssistant, Name: api.NameInterrupted, Content: reply})
	todo.TurnEnded(&a.todo)
	return reply
}

// cutNote follows, in the interrupted message, the reply the model was
// writing when the user stopped it.
const cutNote = "Interrupted by the user here: the reply above is what they read before they stopped the turn. The todo list and the plan stay as they are."

// What the user read is what the model reads: an interrupted model call
// (patchKeepInterrupted) is cancelled and waited for, and answers with the
// reply it had streamed (the details of its cancellation), which the
// turn's interrupted message keeps. The worker is the source of the text,
// never the client that asked for the interrupt.

// cutWait bounds the wait for an interrupted model call's answer: a
// heartbeat's interval, the round trips of its cancellation, and room.
const cutWait = 10 * time.Second

// awaitCall waits for the model call f and returns its error, the answer in
// resp. A call the user interrupts is waited for cutWait at most (the turn
// then goes on without its answer: errInterrupted); an older run's
// (patchKeepInterrupted) is not waited for, as before the patch.
func (a *agent) awaitCall(ctx workflow.Context, f workflow.Future, resp *model.Response) error {
	if err := workflow.Await(ctx, func() bool { return f.IsReady() || a.stopping() }); err != nil {
		return err // the run is being cancelled
	}
	if !f.IsReady() {
		if !a.keepsCut(ctx) {
			return errInterrupted
		}
		opts := workflow.AwaitOptions{Timeout: cutWait, TimerOptions: workflow.TimerOptions{Summary: "the interrupted model call's reply so far"}}
		ok, err := workflow.AwaitWithOptions(ctx, opts, f.IsReady)
		if err != nil {
			return err
		}
		if !ok {
			workflow.GetLogger(ctx).Warn("the interrupted model call did not answer in time; the turn ends without the reply it had written", "waited", cutWait)
			return errInterrupted
		}
	}
	return f.Get(ctx, resp)
}

// keepsCut says the run takes patchKeepInterrupted. It is read when an
// interrupt reaches a model call, not where the run starts: a run that is
// never interrupted (every subagent, most sessions) records no marker for
// it (patches.go).
func (a *agent) keepsCut(ctx workflow.Context) bool {
	return patchedOnce(ctx, &a.keepCut, patchKeepInterrupted)
}

// keepCutReply keeps, for the interrupted turn's message, the reply its
// model call had written: the call's whole answer when it came anyway (its
// tool calls are not run), else what its cancellation reported.
func (a *agent) keepCutReply(ctx workflow.Context, resp model.Response, err error) {
	if err == nil {
		addUsage(&a.usage, resp.Usage)
		a.served = cmp.Or(resp.Model, a.served)
		a.cur.cut = text.Cut(resp.Content, maxCutBytes)
		return
	}
	var ce *temporal.CanceledError
	var rs api.ReplyStream
	if !errors.As(err, &ce) || !ce.HasDetails() || ce.Details(&rs) != nil || rs.Text == "" {
		return
	}
	cut := text.Cut(rs.Text, maxCutBytes)
	if rs.Cut > 0 {
		cut = fmt.Sprintf("[… the first %d bytes of this reply are left out …]\n", rs.Cut) + cut
	}
	a.cur.cut = cut
	workflow.GetLogger(ctx).Info("the interrupted model call reported the reply it had written", "bytes", len(rs.Text)+rs.Cut)
}

// maxCutBytes bounds the cut reply the interrupted message keeps: what a
// call's watchers are sent of its reply (activities.MaxStreamBytes).
const maxCutBytes = activities.MaxStreamBytes
