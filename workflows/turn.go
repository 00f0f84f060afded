package workflows

// One turn: model calls and the guards' decisions until the turn ends.

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// turn handles one user message: model calls and tools until the model
// answers without tool calls and the guards let the turn end, the model
// pauses, or the turn's model calls are spent.
func (a *agent) turn(ctx workflow.Context, m Inbound) error {
	first := 0
	switch {
	case m.Blocked != nil:
		// The turn the run before handed over in one of its waits: it
		// goes on where it stood, with its model calls counted.
		first = m.Blocked.Calls
	case m.Retry:
		// The same user message again: its failure notice goes, so that
		// the model does not read it as its own answer.
		if n := len(a.msgs); n > 0 && a.msgs[n-1].Name == NameModelError {
			a.msgs = a.msgs[:n-1]
			if a.sentMsgs > n-1 {
				// A message the workers may have kept is gone: their
				// copies of this transcript are void.
				a.sentMsgs, a.epoch = n-1, a.epoch+1
			}
		}
	default:
		a.turns++
	}
	if m.Blocked == nil {
		todo.NewUserMessage(&a.todo)
	}
	a.status = StatusRunning
	a.failedTurn = false
	if !m.Retry && m.Blocked == nil {
		a.append(model.Message{Role: model.RoleUser, Content: m.Text})
	}
	a.publish(ctx)

	reply := ""
	overflows := 0
	a.lastCall = false
	a.inTurn, a.stopTurn = true, false
	a.turnReplyTo = m.ReplyTo
	defer func() { a.inTurn, a.stopTurn, a.turnReplyTo = false, false, "" }()
	resumed, pending := false, []model.ToolCall(nil)
	var held []string
	if b := m.Blocked; b != nil {
		if b.Resume != nil {
			a.earlyResume = b.Resume
		}
		switch {
		case len(b.Held) > 0:
			// The held calls of its response are asked again; a plan's
			// wait handed over with them comes after them.
			held, a.approvalHanded = b.Held, b.Approval
		case b.Approval:
			if err := a.awaitHandedApproval(ctx, first); err != nil {
				return err
			}
		case b.Tools:
			// The response whose calls waited for approval is answered
			// first, with the verdicts its calls already had.
			pending, a.verdicts = a.lastCalls(ctx), b.Verdicts
		case b.Next:
			a.lastCall = b.LastCall
		default:
			resumed = true // on blocked steps: the last answer again
		}
	}
	// Each round has a response: the pending one, the last one again (a
	// resumed turn), or the model's next.
turn:
	for calls := first; ; calls++ {
		if a.stopTurn {
			reply = a.endInterrupted()
			break
		}
		var resp model.Response
		answered := false // resp's calls have their answers already
		switch {
		case held != nil:
			r := a.answerHeld(ctx, held)
			held = nil
			if len(a.heldHanded) == 0 && a.approvalHanded {
				a.approvalHanded = false
				if err := a.awaitHandedApproval(ctx, calls+1); err != nil {
					return err
				}
			}
			if r == nil {
				continue // the model is called again
			}
			resp, answered = *r, true
		case pending != nil:
			resp, pending = model.Response{ToolCalls: pending}, nil
		case resumed:
			resp, resumed = model.Response{Content: a.lastReply()}, false
		default:
			if calls > first && a.handOverDue(ctx) {
				// A busy turn (many calls, large results) hands over
				// between two steps, where all it knows is in the
				// transcript: it goes on at this model call.
				a.handedTurn = &Inbound{Blocked: &BlockedTurn{Calls: calls, Next: true, LastCall: a.lastCall}}
				return errHandOver
			}
			if calls >= a.cfg.maxTurns {
				reply = fmt.Sprintf("Stopped: this message used all %d model calls allowed per user message (max_turns). Send another message to continue.", a.cfg.maxTurns)
				a.append(model.Message{Role: model.RoleAssistant, Content: reply})
				todo.TurnEnded(&a.todo)
				break turn
			}
			if err := a.compactOnRequest(ctx); err != nil {
				return err
			}
			r, err := a.callModel(ctx)
			if errors.Is(err, errInterrupted) {
				reply = a.endInterrupted()
				break turn
			}
			if err != nil {
				err = a.recover(ctx, err, &overflows)
				if errors.Is(err, errInterrupted) {
					// Interrupted in the compaction an overflow asked for.
					reply = a.endInterrupted()
					break turn
				}
				var tf *turnFailure
				if errors.As(err, &tf) {
					reply = tf.reply
					a.append(model.Message{Role: model.RoleAssistant, Name: NameModelError, Content: reply})
					a.failedTurn = true
					todo.TurnEnded(&a.todo)
					break turn
				}
				if err == nil {
					continue // compacted: call again
				}
				return err
			}
			resp = r
			a.append(model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
			if a.lastCall {
				// The guard gave up (todo_blocked): this answer ends the
				// turn, and a tool it calls anyway is answered, never run.
				for _, c := range resp.ToolCalls {
					a.append(model.Message{Role: model.RoleTool, ToolCallID: c.ID, IsError: true,
						Content: "Not run: the turn has ended (todo_blocked). Tell the user what is unfinished and why."})
				}
				a.lastCall = false
				reply = resp.Content
				break turn
			}
		}
		if len(resp.ToolCalls) == 0 {
			r, end, err := a.answered(ctx, resp.Content, calls)
			if err != nil {
				return err
			}
			if end {
				reply = r
				break
			}
			continue
		}
		if !answered {
			a.runTools(ctx, resp.ToolCalls)
		}
		end, err := a.afterTools(ctx, resp, calls)
		if err != nil {
			return err
		}
		if end {
			reply = "Paused: " + a.todo.PauseReason
			break
		}
	}
	a.replied(m, reply)
	return nil
}

// afterTools follows the answers of the tool calls of a model response
// (the call-th of the turn): end reports a successful todo_pause, which
// ends the turn at once (no further model call, no reminder); errHandOver,
// a wait for approval handed over to the continuation (a.handedTurn).
func (a *agent) afterTools(ctx workflow.Context, resp model.Response, calls int) (end bool, err error) {
	switch {
	case a.toolsHanded:
		// A wait for a call's approval was handed over before any call
		// ran: the continuation answers the response, then calls the
		// model.
		a.toolsHanded = false
		a.handedTurn = &Inbound{Blocked: &BlockedTurn{Calls: calls, Tools: true, Verdicts: a.verdicts}}
		a.verdicts = nil
		return false, errHandOver
	case len(a.heldHanded) > 0:
		// Calls the worker held wait for approval in the continuation
		// (and then the plan's, when startPlan handed its wait over
		// too); the response's other calls have their answers.
		a.handedTurn = &Inbound{Blocked: &BlockedTurn{Calls: calls, Held: a.heldHanded, Approval: a.approvalHanded}}
		a.heldHanded, a.approvalHanded = nil, false
		return false, errHandOver
	case a.approvalHanded:
		// startPlan handed its wait over: the turn goes on in the
		// continuation, with the verdict, at its next model call.
		a.approvalHanded = false
		a.handedTurn = &Inbound{Blocked: &BlockedTurn{Calls: calls + 1, Approval: true}}
		return false, errHandOver
	case a.todo.Paused:
		return true, nil
	}
	names := make([]string, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		names[i] = c.Name
	}
	if inj := todo.AfterTools(&a.todo, a.cfg.todo, names); !inj.None() {
		a.inject(inj)
	}
	a.publish(ctx)
	return false, nil
}

// lastCalls are the tool calls of the transcript's last message, the
// response a handed-over turn answers first; none when the carry could not
// keep that message (an answer over its budget), and the model is then
// called again.
func (a *agent) lastCalls(ctx workflow.Context) []model.ToolCall {
	if n := len(a.msgs); n > 0 && a.msgs[n-1].Role == model.RoleAssistant && len(a.msgs[n-1].ToolCalls) > 0 {
		return a.msgs[n-1].ToolCalls
	}
	workflow.GetLogger(ctx).Warn("a handed-over turn's response is not in the carried transcript; the model is called again")
	return nil
}

// answered follows an answer without tool calls: while a plan step waits
// on a live agent, the turn waits (waitBlocked) and the model hears what
// unblocked it; then the guards decide whether the turn ends, with reply,
// or the model is prompted again. A wait that a handover interrupts
// (errHandOver) leaves the turn in a.handedTurn, to go on in the
// continuation.
func (a *agent) answered(ctx workflow.Context, content string, calls int) (reply string, end bool, err error) {
	a.settleUnknown(ctx, true)
	waited, err := a.waitBlocked(ctx)
	if errors.Is(err, errHandOver) {
		a.handedTurn = &Inbound{Blocked: &BlockedTurn{Calls: calls}}
	}
	if err != nil || waited {
		return "", false, err // waited: a step unblocked, the model goes on
	}
	inj := todo.EndOfTurn(&a.todo, a.cfg.todo, a.continuation, a.plans.UnfinishedSteps())
	if inj.None() {
		return content, true, nil
	}
	a.inject(inj)
	a.lastCall = inj.Name == todo.NameBlocked
	a.publish(ctx)
	return "", false, nil
}

// inject adds a guard's message to the transcript, where it stays: a reader
// of the run (or of a later window) sees why the model was prompted.
func (a *agent) inject(in todo.Inject) {
	a.append(model.Message{Role: model.RoleUser, Name: in.Name, Content: in.Text})
}

// window selects what the next model call receives: the model's view of
// the transcript (context.go) cut to context.max_messages. It first applies
// the context-loss rule: when no write_todos call and no todo_reminder is in
// view while the list is not empty, a todo_reminder with the list is added,
// so a windowed or compacted model never forgets its checklist.
func (a *agent) window() []activities.Span {
	isTool := func(i int) bool { return a.msgs[i].Role == model.RoleTool }
	start := func() int { return max(todo.Window(len(a.msgs), a.cfg.in.Context.MaxMessages, isTool), a.viewStart()) }
	from := start()
	wrote, reminded := false, false
	for _, sp := range a.view(from) {
		for _, m := range a.msgs[sp.Start:sp.End] {
			reminded = reminded || m.Name == todo.NameReminder
			for _, c := range m.ToolCalls {
				wrote = wrote || c.Name == todo.ToolWrite
			}
		}
	}
	if inj := todo.ContextReminder(&a.todo, a.cfg.todo, wrote, reminded); !inj.None() {
		a.inject(inj)
		from = start()
	}
	return a.view(from)
}

func (a *agent) append(m model.Message) {
	if m.ToolCalls == nil {
		m.ToolCalls = []model.ToolCall{}
	}
	a.msgs = append(a.msgs, m)
}

// lastReply is the content of the last assistant message without tool calls.
func (a *agent) lastReply() string {
	for i := len(a.msgs) - 1; i >= 0; i-- {
		if m := a.msgs[i]; m.Role == model.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}
