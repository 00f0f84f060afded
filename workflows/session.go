package workflows

import (
	"errors"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/workflow"
)

// loop is the session. Its promise: every wait has a way out, and every
// message sent is answered or refused, never accepted and forgotten. A
// message that comes while the run winds down is taken into a new turn;
// before the run completes or continues as new, the main coroutine drains
// the signal channels itself and checks, without yielding, that nothing
// waits (settled), so no signal of the last workflow task is dropped.
func (a *agent) loop(ctx workflow.Context) (api.AgentResult, error) {
	// Each wait below also ends when a handover is due: what grows a
	// waiting run's history is its children's news, and a tree that works
	// for days must not take its root past the server's limits.
	woken := func() bool { return a.interrupted() || a.ended || a.handOverDue(ctx) }
	for {
		// A cancel request (or a root gone, tree.leave) ends the session in
		// this run: a wait woken by something else at the same time must
		// not hand the session to a continuation that would never know it
		// was cancelled.
		if err := ctx.Err(); err != nil {
			return api.AgentResult{}, err
		}
		a.drainSignals(ctx)
		if err := a.compactOnRequest(ctx); err != nil {
			return a.fail(ctx, err)
		}
		// Queued messages cross in the carry, but each run takes one turn
		// first: a server that suggests a handover at once (a low
		// suggestion, a large carry) cannot pass the session from run to
		// run without progress.
		if a.handOverDue(ctx) && (a.inbox.empty() || a.turnsHere > 0) {
			if err := a.handOver(ctx); err != nil {
				return api.AgentResult{}, err
			}
		}
		if a.inbox.empty() && a.todo.Paused && !a.ended {
			// A pause waits as long as it takes: the human may need a day
			// to fix what blocked the agent, so no idle timeout applies.
			a.status = api.StatusPaused
			a.publish(ctx)
			if err := workflow.Await(ctx, woken); err != nil {
				return api.AgentResult{}, err
			}
			continue
		}
		if a.inbox.empty() {
			if !a.cfg.Subagent && !a.ended {
				a.status = api.StatusWaitingUser
				a.publish(ctx)
				woke, err := a.awaitUser(ctx, a.cfg.IdleTimeout, woken)
				if err != nil {
					return api.AgentResult{}, err
				}
				if woke {
					continue
				}
				if len(a.waiting()) > 0 {
					// An agent of the tree waits for a human: like a pause,
					// that wait takes as long as it takes, and the session
					// stays open for the messages that may follow.
					if err := workflow.Await(ctx, func() bool { return woken() || len(a.waiting()) == 0 }); err != nil {
						return api.AgentResult{}, err
					}
					continue
				}
			}
			res, done, err := a.windDown(ctx)
			if err != nil || done {
				return res, err
			}
			continue
		}
		next := a.inbox.take()
		a.turnsHere++
		cur, err := a.turn(ctx, next)
		if errors.Is(err, errHandOver) {
			// The turn goes first in the carry, where it stood, with whom
			// it answers (replies.go) and a resume that came before the
			// pause it may answer. Should the handover not happen, it
			// goes on in this run.
			a.inbox.putBack(cur.carried())
			if err := a.handOver(ctx); err != nil {
				return api.AgentResult{}, err
			}
			continue
		} else if err != nil {
			return a.fail(ctx, err)
		}
		if r := cur.at.Resume; r != nil {
			if a.todo.Paused {
				a.onResume(ctx, api.ResumeArgs{Text: *r})
			} else {
				workflow.GetLogger(ctx).Warn("ignoring a resume signal: the turn ended without a pause")
			}
		}
	}
}

// errHandOver ends a turn whose wait is handed over (a.handedTurn).
var errHandOver = errors.New("handed over to the continuation")

// handOverDue reports whether the run should continue as new now: the
// server suggests it, or the history reached its caps (bounds.go). Queued
// messages and running children cross in the carry; only a compaction
// request (answered by this loop) and a run winding down after end_session
// (bounded by subagent_grace_s) hold it.
func (a *agent) handOverDue(ctx workflow.Context) bool {
	if a.window.compactAsked || a.ended {
		return false
	}
	info := workflow.GetInfo(ctx)
	if n := info.GetCurrentHistoryLength(); n > 0 && n < a.startEvents+minRunEvents {
		// A server whose suggestion a fresh run already meets (one set
		// below the size of a carry) would otherwise pass the session
		// from run to run, each handing over in its first wait.
		return false
	}
	return info.GetContinueAsNewSuggested() || historyFull(info)
}

// minRunEvents is how much a run's history grows before it hands over:
// more than its first workflow task, so that a run cannot hand over
// before anything reached it.
const minRunEvents = 6

func (a *agent) fail(ctx workflow.Context, err error) (api.AgentResult, error) {
	a.status = api.StatusFailed
	a.publish(ctx)
	return api.AgentResult{}, err
}

// interrupted reports whether something waits for the loop: a message (or
// retry) in the inbox or a compaction request.
func (a *agent) interrupted() bool { return !a.inbox.empty() || a.window.compactAsked }

// awaitOrTimeout waits until cond holds or d has passed, and reports which.
// Unlike workflow.AwaitWithTimeout (whose SDK flag that cancels the timer is
// off by default) it cancels its timer when cond comes first, and starts
// none when cond already holds.
func (a *agent) awaitOrTimeout(ctx workflow.Context, d time.Duration, summary string, cond func() bool) (bool, error) {
	if cond() {
		return true, nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	timer := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: summary})
	if err := workflow.Await(ctx, func() bool { return cond() || timer.IsReady() }); err != nil {
		cancel()
		return false, err
	}
	if cond() {
		if !timer.IsReady() {
			cancel()
		}
		return true, nil
	}
	return false, nil
}

// windDown finishes the run: it waits for running subagents and records
// their final states, lets the reporters catch up (for a bounded time),
// delivers its own last signals, and completes. A message, retry or
// compaction request that comes meanwhile sends it back to the loop (done
// false): the run goes on, and winds down again later.
func (a *agent) windDown(ctx workflow.Context) (api.AgentResult, bool, error) {
	if a.runningChildren() > 0 {
		a.status = api.StatusBlocked
		a.publish(ctx)
		if a.ended {
			// end_session: the children get subagent_grace_s to finish,
			// then are cancelled, so that a child waiting on this agent
			// cannot hold the tree for ever.
			if err := a.finishChildren(ctx); err != nil {
				return api.AgentResult{}, false, err
			}
		}
		if err := workflow.Await(ctx, func() bool { return a.runningChildren() == 0 || a.interrupted() || a.handOverDue(ctx) }); err != nil {
			return api.AgentResult{}, false, err
		}
		if a.interrupted() || a.runningChildren() > 0 {
			return api.AgentResult{}, false, nil
		}
	}
	if !a.reporters.idle() {
		idle, err := a.awaitOrTimeout(ctx, drainTimeout, "reporters drain", func() bool { return a.reporters.idle() || a.interrupted() })
		if err != nil {
			return api.AgentResult{}, false, err
		}
		if a.interrupted() {
			return api.AgentResult{}, false, nil
		}
		if !idle {
			a.reporters.abandon()
		}
	}
	if a.inbox.untaken() {
		// A caller told that its turn went on may not have asked for the
		// reply yet: it gets as long as the reporters do, then the reply
		// stays in the result and the transcript.
		if _, err := a.awaitOrTimeout(ctx, drainTimeout, "replies drain", func() bool { return !a.inbox.untaken() || a.interrupted() }); err != nil {
			return api.AgentResult{}, false, err
		}
		if a.interrupted() {
			return api.AgentResult{}, false, nil
		}
	}
	a.status = api.StatusCompleted
	a.publish(ctx)
	// A parent records a child's last events from its signals and its final
	// state from its result: the signals must be delivered first.
	a.awaitSent(ctx)
	if !a.settled(ctx, false) {
		return api.AgentResult{}, false, nil
	}
	a.sayEnded(ctx)
	// The state query's answer is already bounded (see State).
	return a.result(a.state()), true, nil
}

// handOver continues the run as new once it is at rest: every handler
// finished and every signal of the tree delivered. Only a compaction
// request, which waits for this loop, sends the run back to it; the
// handover is tried again at the loop's next step.
func (a *agent) handOver(ctx workflow.Context) error {
	if err := a.summariseForCarry(ctx); err != nil {
		return err
	}
	// Should the handover not happen, the turns go on here, and their
	// replies are kept for the callers told so.
	a.inbox.handing = true
	defer func() { a.inbox.handing = false }()
	err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) || a.window.compactAsked })
	if err != nil || a.window.compactAsked {
		return err
	}
	a.awaitSent(ctx)
	if !a.settled(ctx, true) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err // cancelled meanwhile: the session ends here (loop)
	}
	// The run list shows this run as what it is now, not as the running
	// or waiting it last said: its continuation takes the session on
	// (and starts with these attributes, until it publishes its own).
	a.status = api.StatusContinued
	a.publish(ctx)
	// A session pinned to the build that started it (worker versioning)
	// moves to the current build here, at a point where its state is all
	// in the carry: a new build need not replay the old one's history.
	opts := workflow.ContinueAsNewErrorOptions{InitialVersioningBehavior: workflow.ContinueAsNewVersioningBehaviorAutoUpgrade}
	h := a.carry()
	if shed, over := fitCarry(&h); len(shed) > 0 {
		workflow.GetLogger(ctx).Warn("the carry shed parts to fit its cap", "shed", shed, "bytes", carrySize(h), "cap", MaxCarryBytes, "over", over)
	}
	in, err := h.input()
	if err != nil {
		return err
	}
	return workflow.NewContinueAsNewErrorWithOptions(ctx, opts, api.WorkflowName, in)
}

// settled is the last check before the run ends, made without yielding so
// that nothing can arrive between it and the return: it drains the signal
// channels and reports whether nothing waits (no signal in flight, no
// handler running, and, unless the inbox is carried, no message).
func (a *agent) settled(ctx workflow.Context, carried bool) bool {
	a.drainSignals(ctx)
	waits := func() bool { return a.window.compactAsked || !carried && !a.inbox.empty() }
	if waits() || a.tree.unsent > 0 || a.approvals.waiting() {
		return false
	}
	if !workflow.AllHandlersFinished(ctx) {
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) || waits() })
		return false
	}
	return true
}

// drainSignals takes in every signal already delivered to the run, in the
// main coroutine. The tree's news come first: a resume is judged against the
// waits they bring (a subagent's pause is a brief), and one that shares its
// workflow task with the brief of the pause it answers (a task lost and run
// again) would otherwise find no wait and be dropped.
func (a *agent) drainSignals(ctx workflow.Context) {
	a.drainTree(ctx)
	for {
		var text string
		var resume api.ResumeArgs
		switch {
		case a.userCh.ReceiveAsync(&text):
			a.window.heard.Text(text) // as the signal holds it, before any cut
			a.onUserMessage(ctx, text)
		case a.resumeCh.ReceiveAsync(&resume):
			a.window.heard.Text(resume.Text)
			a.onResume(ctx, resume)
		case a.endCh.ReceiveAsync(nil):
			a.ended = true
		default:
			return
		}
	}
}

func (a *agent) onUserMessage(ctx workflow.Context, text string) {
	if strings.TrimSpace(text) == "" {
		workflow.GetLogger(ctx).Warn("ignoring an empty user_message signal")
		return
	}
	if room := min(todo.MaxMessageBytes, todo.MaxQueuedBytes-a.inbox.queuedBytes()); len(text) > room {
		workflow.GetLogger(ctx).Warn("a user_message signal was cut to fit the inbox", "bytes", len(text), "room", room)
		text = todo.CutMessage(text, room)
	}
	a.inbox.push(Inbound{Text: text})
}

func (a *agent) onResume(ctx workflow.Context, args api.ResumeArgs) {
	if err := args.UnknownField(); err != nil {
		// A signal has no answer to refuse it in; the worker's log and
		// the unchanged status say it was not taken.
		workflow.GetLogger(ctx).Warn("resume refused", "error", err)
		return
	}
	// A resume text may be handed on in a signal, or queued.
	text := todo.CutMessage(args.Text, min(todo.MaxMessageBytes, todo.MaxQueuedBytes-a.inbox.queuedBytes()))
	if (args.AgentID != "" && args.AgentID != a.cfg.AgentID) || !a.todo.Paused {
		w, err := a.waitFor(api.WaitPaused, args.AgentID)
		switch {
		case err == nil && w.AgentID != a.cfg.AgentID:
			if err := a.handOn(ctx, w.AgentID, Handed{Resume: &text}); err != nil {
				workflow.GetLogger(ctx).Warn("resume not handed on", "agent", w.AgentID, "error", err)
			} else {
				a.tree.handed = append(a.tree.handed, w)
			}
			return
		case err != nil && !a.todo.Paused && a.cur != nil && args.AgentID == "":
			// A turn is running: the pause it is about to record may be
			// what this resume answers. Keep it for the end of the turn.
			a.cur.at.Resume = &text
			return
		case err != nil && !a.todo.Paused:
			workflow.GetLogger(ctx).Warn("ignoring a resume signal", "reason", err.Error())
			return
		}
	}
	if !a.todo.Paused {
		workflow.GetLogger(ctx).Warn("ignoring a resume signal: the run is not paused")
		return
	}
	if strings.TrimSpace(text) == "" {
		text = "Go on: the blocker you reported is resolved."
	}
	a.inbox.push(Inbound{Text: text})
}

func (a *agent) validateRetry() error {
	switch {
	case a.cfg.Subagent:
		return errors.New("a subagent takes no retries; its parent sees its failure")
	case a.ended:
		return errors.New("the session has ended")
	case a.inbox.retryWaits():
		return errors.New("a retry of the failed turn is already waiting")
	case !a.failedTurn:
		return errors.New("no turn failed on the model; there is nothing to retry (send a message instead)")
	}
	return nil
}

func (a *agent) onRetry(ctx workflow.Context) (string, error) {
	return a.inbox.enqueue(ctx, Inbound{Retry: true})
}
