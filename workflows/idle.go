package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// idleTimer is a session's idle timeout as one timer that moves
// (patchLeanTurn): each wait for the user moves the deadline (at) instead of
// starting a timer, and a timer that fires before it is started again for
// what is left. A timer is a billable action and two events, so a session
// pays one per idle timeout of activity instead of one per turn.
type idleTimer struct {
	at    time.Time       // when the session has been idle for its timeout
	fires workflow.Future // the running timer, due at or before at; nil when none runs
}

// awaitUser waits for the user until cond holds or the session has been
// idle for d since this wait began, and reports whether cond came first.
func (a *agent) awaitUser(ctx workflow.Context, d time.Duration, cond func() bool) (bool, error) {
	if !a.lean {
		return a.awaitOrTimeout(ctx, d, "idle timeout", cond)
	}
	if cond() {
		return true, nil
	}
	t := &a.idle
	t.at = workflow.Now(ctx).Add(d)
	for {
		if t.fires == nil {
			left := t.at.Sub(workflow.Now(ctx))
			if left <= 0 {
				return false, nil
			}
			t.fires = workflow.NewTimerWithOptions(ctx, left, workflow.TimerOptions{Summary: "idle timeout"})
		}
		fires := t.fires
		if err := workflow.Await(ctx, func() bool { return cond() || fires.IsReady() }); err != nil {
			return false, err
		}
		if cond() {
			return true, nil
		}
		// Fired: at its deadline, or at an older one that a later wait
		// moved; or cancelled with the run, which ends the wait (a timer
		// started on a cancelled context is ready at once, and the loop
		// would never yield).
		t.fires = nil
		if err := fires.Get(ctx, nil); err != nil {
			return false, err
		}
	}
}
