package workflows

// What the run shows of itself: the search attributes of the run list and
// the details of its page in the Web UI.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// published remembers the search attributes last sent, so that an unchanged
// value adds no command to history.
type published struct {
	total, completed int64
	current, status  string
	set              bool // false before the first upsert, or the start's (or carried) attributes
	// at is when they were sent (see agent.publish).
	at time.Time
}

// publishEvery is how often, at most, a busy run (status running) of a lean
// run upserts its search attributes: the run list is for people, and every
// upsert is a command, an event and a write to the visibility store, the
// dearest thing a step does on the embedded server (BENCHMARKS.md).
const publishEvery = time.Second

// listBusyAfter is how long a run of patchLeanTurn is busy before the run
// list shows it running: most chat turns are shorter, and showing each one
// would cost two upserts a turn (running, then waiting again) for a status
// that a reader of the list would rarely catch. The run's page and the
// state query show it at once.
const listBusyAfter = 10 * time.Second

// publish makes the state visible: search attributes for the run list (only
// when they changed, so history does not grow idle), current details for the
// run's page in the Web UI. A busy run upserts at most every publishEvery,
// and a waiting or ended one at once, so the list never stays wrong while
// the run waits (docs/architecture.md, "One upsert of search attributes").
func (a *agent) publish(ctx workflow.Context) {
	items := a.todo.List()
	p := published{
		total:     int64(len(items)),
		completed: int64(todo.CountStatus(items, todo.Completed)),
		status:    a.shownStatus(),
		set:       true,
	}
	// The decision to upsert compares the real item, whatever the worker's
	// settings: an encrypted worker sends it blank (see Options.Encrypted),
	// and had it compared the blank, it would skip an upsert a plain worker
	// sends, and a session moved between them would not replay.
	if cur, ok := todo.Current(items); ok {
		p.current = text.Cut(cur.Content, 200)
	}
	a.sendBrief(ctx)
	now := workflow.Now(ctx)
	if p.status != api.StatusRunning {
		a.busySince = time.Time{}
	} else if a.busySince.IsZero() {
		a.busySince = now
	}
	switch {
	case p.same(a.published):
	case !a.published.set && startedWith(ctx).set:
		// The run's first publish. The list shows what the run started
		// with until the state it goes on in is published, before it
		// waits: a continued run does so in this same workflow task
		// (agent.loop), so the "running" of its start is never sent.
		a.published = startedWith(ctx)
		if p.same(a.published) {
			a.published.at = now
		}
	case a.published.set && p.status == api.StatusRunning && now.Sub(a.published.at) < publishEvery:
		// Busy: sent at a later step, or with the status the run waits in.
	case a.lean && a.published.set && p.status == api.StatusRunning && now.Sub(a.busySince) < listBusyAfter:
		// A short turn: the list goes from waiting to waiting, and a turn
		// that leaves the list as it was upserts nothing at all.
	default:
		current := p.current
		if a.opts.Encrypted {
			current = ""
		}
		err := workflow.UpsertTypedSearchAttributes(ctx,
			api.TodoTotalKey.ValueSet(p.total),
			api.TodoCompletedKey.ValueSet(p.completed),
			api.TodoCurrentKey.ValueSet(current),
			api.AgentStatusKey.ValueSet(p.status),
		)
		if err != nil {
			workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
		}
		a.published, a.published.at = p, now
	}
	workflow.SetCurrentDetails(ctx, a.details())
}

// title is the first line of the session's first user message, or "".
func (a *agent) title() string {
	for _, m := range a.window.msgs[:min(len(a.window.msgs), todo.Head)] {
		if m.Role == model.RoleUser && m.Name == "" {
			return text.Shorten(text.FirstLine(m.Content), api.SummaryMax)
		}
	}
	return ""
}

// same reports whether p and q hold the same search attributes.
func (p published) same(q published) bool {
	p.at, q.at = time.Time{}, time.Time{}
	return p == q
}

// detailsChildren is how many subagents the run's page lists.
const detailsChildren = 20

// details is the markdown the Web UI shows on the run's page.
func (a *agent) details() string {
	var b strings.Builder
	// The headline first (headline.go): what an operator needs at a
	// glance, whatever else the page holds.
	b.WriteString(a.headline() + "\n\n")
	// Then the session's first message: the static summary, set at the
	// start, is "waiting for its first message" for a chat session, and a
	// continued run has none (the SDK's continue-as-new carries no user
	// metadata); the first message is carried, so every run has it.
	if t := a.title(); t != "" {
		fmt.Fprintf(&b, "### %s\n\n", t)
	}
	fmt.Fprintf(&b, "**%s**: %s, turn %d, %d model calls\n\n", a.cfg.AgentID, a.status, a.turns, a.modelCalls)
	// Counts in words, never "3/3": the Web UI's font may draw a digit,
	// a slash and a digit as one fraction glyph.
	if items := a.todo.List(); len(items) == 0 {
		b.WriteString("(no todo items)")
	} else {
		fmt.Fprintf(&b, "%s\n%d of %d done", todo.ChecklistItems(items), todo.CountStatus(items, todo.Completed), len(items))
	}
	if a.todo.Paused {
		fmt.Fprintf(&b, "\n\nPaused: %s", a.todo.PauseReason)
	}
	if p := a.plans.Current(); p != nil {
		b.WriteString("\n\n```\n" + todo.PlanChecklist(p) + "\n```")
	}
	// The most recent children, so that the page stays short however many
	// a session spawned; the state query has the rest.
	subs := a.subagentStates()
	shown := 0
	for _, id := range slices.Backward(a.tree.childOrder) {
		st, ok := subs[id]
		if !ok || shown == detailsChildren {
			continue
		}
		shown++
		done, total := todo.CountStatus(st.Todos, todo.Completed), len(st.Todos)
		switch {
		case st.Live != nil:
			done, total = st.Live.TodosCompleted, st.Live.TodosTotal
		case st.Ended != nil:
			done, total = st.Ended.TodosCompleted, st.Ended.TodosTotal
		}
		fmt.Fprintf(&b, "\n\nsubagent **%s**: %s, %d of %d todos done", id, st.Status, done, total)
	}
	if more := len(a.tree.childOrder) + a.tree.pruned - shown; more > 0 {
		fmt.Fprintf(&b, "\n\nand %d earlier subagents (the state query lists them)", more)
	}
	// Every wait a human may answer has its line: the agent's own
	// approvals too (its pause has one above).
	for _, w := range a.waiting() {
		switch {
		case w.AgentID != a.cfg.AgentID:
			fmt.Fprintf(&b, "\n\n**waiting**: agent %s (%s): %s", w.AgentID, w.Kind, w.Reason)
		case w.Kind != api.WaitPaused:
			fmt.Fprintf(&b, "\n\n**waiting** (%s): %s", w.Kind, w.Reason)
		}
	}
	if h := a.host; h.queue != "" {
		fmt.Fprintf(&b, "\n\nworkspace host: `%s`", h.queue)
		if h.silent != nil {
			fmt.Fprintf(&b, ", **not answering** since %s: tool calls fail until it is back", h.silent.UTC().Format(time.RFC3339))
		}
	}
	return b.String() + api.FrameEnd
}

// startedWith is what the run's search attributes held when it started
// (read before its first upsert): the zero published, which no state
// matches, unless all four are set.
func startedWith(ctx workflow.Context) published {
	sa := workflow.GetTypedSearchAttributes(ctx)
	total, ok1 := sa.GetInt64(api.TodoTotalKey)
	completed, ok2 := sa.GetInt64(api.TodoCompletedKey)
	current, ok3 := sa.GetKeyword(api.TodoCurrentKey)
	status, ok4 := sa.GetKeyword(api.AgentStatusKey)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return published{}
	}
	return published{total: total, completed: completed, current: current, status: status, set: true}
}
