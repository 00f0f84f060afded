package workflows

// The user stops the running turn (InterruptUpdate).

import (
	"errors"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"

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

// endInterrupted ends the turn the user interrupted and returns its reply.
func (a *agent) endInterrupted() string {
	a.append(model.Message{Role: model.RoleAssistant, Name: api.NameInterrupted, Content: interruptedReply})
	todo.TurnEnded(&a.todo)
	return interruptedReply
}
