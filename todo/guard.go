package todo

import (
	"fmt"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// Names of the messages the guards inject (role user), fixed by the public
// contract; the transcript keeps them so that a reader sees why the model was
// prompted again.
const (
	NameReminder           = "todo_reminder"
	NameCompletionReminder = "todo_completion_reminder"
	NameStaleReminder      = "todo_stale_reminder"
	NameContinuation       = "todo_continuation"
	NameBlocked            = "todo_blocked"
)

// Keys of State.GuardRetries.
const (
	RetryFinalization = "finalization"
	RetryContinuation = "continuation"
)

// Inject is a message a guard wants added before the next model call. The
// zero value means: nothing to add (at the end of a turn: the turn ends).
type Inject struct {
	Name string
	Text string
}

// None reports whether the guard had nothing to say.
func (i Inject) None() bool { return i.Name == "" }

// NewUserMessage resets what counts per user message: the guards' caps,
// a blocked episode, the suppression and a pause all end when the user
// speaks again.
func NewUserMessage(st *State) {
	st.GuardRetries = map[string]int{}
	st.GuardBlocked = nil
	st.GuardSuppressed = false
	st.ContinuationDigest = ""
	st.Paused, st.PauseReason = false, ""
	st.FinalizationCorrection = nil // a new turn has had no correction yet
}

// TurnEnded records that the current turn is over: the completion reminder,
// if one was injected, belonged to it, so todo_finalization_correction goes
// back to null. EndOfTurn calls it when it lets the turn end and a successful
// todo_pause calls it too; the workflow calls it where a turn ends without
// either (the max_turns cap, a model call that failed for good).
func TurnEnded(st *State) {
	st.FinalizationCorrection = nil
}

// EndOfTurn judges a response without tool calls, after the caller has
// handled a pause and waited for blocked plan steps (the package doc): the
// finalization guard, then continuation, then the turn ends.
//
// pendingSteps are the descriptions of unfinished plan steps that count for
// the guard (a started, active plan's steps that are not blocked on a live
// dependency). continuation is the run-time setting (set_continuation).
//
// Every branch is capped per user message, so a model that never updates
// its list costs at most FinalizationMaxCorrections + 1 + ContinuationMax
// extra calls, never an endless loop.
//
// When it returns nothing the turn ends, and TurnEnded resets what belonged
// to the turn.
func EndOfTurn(st *State, s Settings, continuation bool, pendingSteps []string) Inject {
	in := endOfTurn(st, s, continuation, pendingSteps)
	if in.None() {
		TurnEnded(st)
	}
	return in
}

func endOfTurn(st *State, s Settings, continuation bool, pendingSteps []string) Inject {
	st.StaleIterations = 0 // a tool-free response resets the stale count
	if !s.Enabled || st.Paused || st.GuardSuppressed || st.GuardBlocked != nil {
		return Inject{}
	}
	if st.GuardRetries == nil {
		st.GuardRetries = map[string]int{}
	}
	unfinished := Unfinished(st.Todos)
	if len(unfinished) > 0 || len(pendingSteps) > 0 {
		n := st.GuardRetries[RetryFinalization]
		if n < s.FinalizationMaxCorrections {
			st.GuardRetries[RetryFinalization] = n + 1
			st.FinalizationCorrection = new(true)
			return Inject{Name: NameCompletionReminder, Text: completionReminder(unfinished, pendingSteps)}
		}
		if s.FinalizationEscalation {
			st.GuardBlocked = &GuardBlocked{
				Reason:     fmt.Sprintf("the checklist still had unfinished items after %d correction(s)", n),
				Unfinished: unfinished,
			}
			st.GuardSuppressed = true
			return Inject{Name: NameBlocked, Text: blockedMessage(unfinished, pendingSteps)}
		}
	}
	if !continuation {
		return Inject{}
	}
	next, ok := Next(st.Todos)
	if !ok {
		return Inject{}
	}
	n := st.GuardRetries[RetryContinuation]
	if n >= s.ContinuationMax {
		return Inject{}
	}
	firm := n > 0 && ListDigest(st.Todos) == st.ContinuationDigest
	st.GuardRetries[RetryContinuation] = n + 1
	st.ContinuationDigest = ListDigest(st.Todos)
	return Inject{Name: NameContinuation, Text: continuationMessage(next, firm)}
}

// AfterTools counts a response that called tools, for the stale reminder:
// any write_todos (even a refused one) resets the count; a response that
// used other tools (anything but the todo tools) adds one. The reminder is
// soft: it is added to the transcript before the next model call that
// happens anyway, never causing a call of its own.
func AfterTools(st *State, s Settings, names []string) Inject {
	wrote, other := false, false
	for _, n := range names {
		switch {
		case n == ToolWrite:
			wrote = true
		case !IsTool(n):
			other = true
		}
	}
	if wrote {
		st.StaleIterations = 0
		return Inject{}
	}
	if !other {
		return Inject{}
	}
	st.StaleIterations++
	n := st.StaleIterations
	if !s.Enabled || s.StaleThreshold == 0 || st.GuardSuppressed || st.Paused || AllFinished(st.Todos) {
		return Inject{}
	}
	if n < s.StaleThreshold || (n-s.StaleThreshold)%s.StaleInterval != 0 {
		return Inject{}
	}
	return Inject{Name: NameStaleReminder, Text: staleMessage(n, st.Todos)}
}

// ContextReminder is DeerFlow's context-loss rule: when the list is not
// empty and the messages the model will see hold neither a write_todos call
// nor an earlier todo_reminder, remind the model of the whole list.
func ContextReminder(st *State, s Settings, windowHasWrite, windowHasReminder bool) Inject {
	if !s.Enabled || len(st.Todos) == 0 || windowHasWrite || windowHasReminder {
		return Inject{}
	}
	return Inject{Name: NameReminder, Text: "<system_reminder>\nYour checklist, which is no longer in view, is still in effect:\n" +
		statusLines(st.Todos) + "\nKeep it up to date with write_todos as you work.\n</system_reminder>"}
}

func completionReminder(unfinished []Item, steps []string) string {
	return "You gave a final answer, but your checklist still has unfinished work:\n" + openWork(unfinished, steps) +
		"If you finished them, mark them completed with write_todos (or update the plan); if they no longer apply, mark them cancelled. " +
		"If there is work left, continue it. Then give your final answer."
}

func blockedMessage(unfinished []Item, steps []string) string {
	return "Stop calling tools. Your checklist still shows unfinished work after a reminder:\n" + openWork(unfinished, steps) +
		"In plain words, tell the user what is done, what is not, and why. This reply ends your turn."
}

// openWork lists the unfinished items and plan steps, a line each.
func openWork(unfinished []Item, steps []string) string {
	var b strings.Builder
	if len(unfinished) > 0 {
		b.WriteString(statusLines(unfinished) + "\n")
	}
	for _, s := range steps {
		fmt.Fprintf(&b, "- [plan step] %s\n", text.OneLine(s))
	}
	return b.String()
}

func continuationMessage(next Item, firm bool) string {
	if firm {
		return fmt.Sprintf("Your checklist has not changed since the last prompt and %q is still open. "+
			"Work on it now with your tools and update the list; if you cannot make progress, call todo_pause with the reason.", text.OneLine(next.Content))
	}
	return fmt.Sprintf("Continue with the task: %s", text.OneLine(next.Content))
}

func staleMessage(n int, items []Item) string {
	return fmt.Sprintf("<system_reminder>\nYou have used tools %d times in a row without updating your checklist. If your progress changed it, "+
		"send the updated list with write_todos now. Current list:\n%s\n</system_reminder>", n, statusLines(items))
}
