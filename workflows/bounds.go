package workflows

import "go.temporal.io/sdk/workflow"

// What crosses the workflow's boundary, and the cap on each. The server
// refuses a payload over 2 MiB and terminates a run whose history passes
// 50 MiB, with its list, plan and transcript; so each payload is bounded
// where it is made, and these caps say what each kind may take in all
// (TestBoundsHoldByConstruction, and TestCorpusPayloadsWithinCaps in
// testsuite).
const (
	// MaxActivityInputBytes caps an activity's input: a model call's new
	// messages (transcript.Budget, their large fields left out
	// as digests), its spans and the digests of a continued run's carried
	// messages; a tool call's input carries a reference, not its arguments.
	MaxActivityInputBytes = 1 << 20
	// MaxActivityResultBytes caps an activity's result: a tool's output is
	// at most activities.MaxToolOutputMax and its diff for the user
	// tools.MaxDiffBytes, a model's answer at most
	// activities.MaxAnswerBytes (a larger one fails the call).
	MaxActivityResultBytes = 3 << 19
	// MaxCarryBytes caps the continue-as-new input: at most carryBytes of
	// messages, the todo list (todo.MaxItems), the plan's events
	// (carryEvents) and at most maxChildren subagents' summaries.
	MaxCarryBytes = 3 << 19
	// MaxResultBytes caps a run's result: its final state gives way to
	// its summary, then its answer to the answer's head (fitResult).
	MaxResultBytes = 3 << 19
	// MaxSignalBytes caps a signal between the agents of a tree: a batch
	// of plan events (at most signalEventsBudget of them, split by send)
	// with the sender's counters, or an end with its final summary.
	MaxSignalBytes = 256 << 10
	// MaxQueryAnswerBytes caps an answer of the state, messages or
	// tool_diffs query (pages of transcript.PageBytes;
	// the state with stateEventBytes of events, fullChildrenBytes of
	// finished subagents' summaries and maxChildren in all, its list shown
	// twice by contract (todos, extra.todos); at most maxKeptDiffs diffs).
	// TestStateWithinItsCap builds the largest state: 1.42 MB.
	MaxQueryAnswerBytes = 3 << 19
)

// A run's history: the run hands over when the server suggests it, and, on
// a server whose suggestion is set high or off, before it reaches 80% of
// the server's default hard limits (51,200 events, 50 MiB), where it would
// be terminated with the session. The fifth left over is room for what
// a turn adds between two of its waits.
const (
	MaxHistoryEvents = 40 << 10
	MaxHistoryBytes  = 40 << 20
)

// historyFull reports whether the run's history, as of this workflow task,
// has reached a cap the server's suggestion may not have.
func historyFull(info *workflow.Info) bool {
	return info.GetCurrentHistoryLength() >= MaxHistoryEvents || info.GetCurrentHistorySize() >= MaxHistoryBytes
}

// signalEventsBudget is what the events of one tree message may take; the
// rest of MaxSignalBytes is for the counters and a binding.
const signalEventsBudget = MaxSignalBytes / 2
