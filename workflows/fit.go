package workflows

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// The two payloads a run ends with, its continuation's input and its
// result, are measured before they go. Each part of the carry is bounded
// where it is made, but a session at every bound at once could still pass
// MaxCarryBytes. Then the carry sheds, component by component, each step
// (fitCarry's list; docs/protocol.md, "The carry") costing the continuation
// less than the next, until it fits. A carry that still does not fit is handed over as it is (the server
// takes up to 2 MiB) and the log says by how much it passed the cap.

// carrySize is what the carry takes as the continuation's input.
func carrySize(h handover) int {
	in, _ := h.input()
	b, _ := json.Marshal(in)
	return len(b)
}

// A shedding step of fitCarry: what it sheds, for the log, and the step,
// which sheds at least over bytes of its component's part where it can
// and reports whether it shed anything.
type shedding struct {
	what string
	shed func(c *Carry, over int) bool
}

// fitCarry sheds from in.Carry until in fits MaxCarryBytes, and says what
// it shed; over is how many bytes in still passes the cap (0 when it fits).
func fitCarry(in *handover) (shed []string, over int) {
	steps := []shedding{
		{"the tool calls' diffs", shedDiffs},
		{"older messages", func(c *Carry, over int) bool { return shedTail(c, over) > 0 }},
		{"details of the briefs", shedBriefs},
		{"older plan events", shedPlanEvents},
		{"the data of old plan events", thinPlanEvents},
		{"the guard's copy of the unfinished items", shedGuardCopy},
		{"the kept replies but their heads", shedReplies},
		{"finished subagents", shedSubagents},
	}
	for _, st := range steps {
		over := carrySize(*in) - MaxCarryBytes
		if over <= 0 {
			break
		}
		if st.shed(in.Carry, over) {
			shed = append(shed, st.what)
		}
	}
	return shed, max(0, carrySize(*in)-MaxCarryBytes)
}

// shedDiffs drops the diffs: a client attaching to the continuation shows
// the carried results without them.
func shedDiffs(c *Carry, _ int) bool {
	shed := len(c.Diffs) > 0
	c.Diffs = nil
	return shed
}

// shedBriefs keeps of the briefs of the tree's members (at the root) or of
// the running children their counters and waits; the next brief of each
// brings the rest back. The map is looked up, never ranged.
func shedBriefs(c *Carry, _ int) bool {
	t := c.Tree
	if t == nil || len(t.Briefs) == 0 {
		return false
	}
	var ids []string
	for _, m := range t.Broker.Members {
		ids = append(ids, m.AgentID)
	}
	for _, r := range t.Running {
		ids = append(ids, r.AgentID)
	}
	briefs := make(map[string]*api.Brief, len(t.Briefs))
	for _, id := range ids {
		if b := t.Briefs[id]; b != nil {
			briefs[id] = counters(b)
		}
	}
	tc := *t
	tc.Briefs = briefs
	c.Tree = &tc
	return true
}

// shedPlanEvents keeps of the plan's log the events dependency resolution
// reads. The run's own PlanState is not touched: the carry gets a copy.
func shedPlanEvents(c *Carry, _ int) bool {
	if c.Plans == nil {
		return false
	}
	ps := *c.Plans
	ps.Events = slices.Clone(ps.Events)
	c.Plans = &ps
	return ps.Prune(0, 0) > 0
}

// thinPlanEvents cuts the data of the oldest events left.
func thinPlanEvents(c *Carry, _ int) bool {
	if c.Plans == nil {
		return false
	}
	ps := *c.Plans
	ps.Events = slices.Clone(ps.Events)
	c.Plans = &ps
	return ps.Thin(carryEventBytes) > 0
}

// shedGuardCopy drops the guard's copy of the unfinished items: they are in
// the list; the copy only shows them.
func shedGuardCopy(c *Carry, _ int) bool {
	if c.Todo.GuardBlocked == nil || len(c.Todo.GuardBlocked.Unfinished) == 0 {
		return false
	}
	gb := *c.Todo.GuardBlocked
	gb.Unfinished = nil
	c.Todo.GuardBlocked = &gb
	return true
}

// shedReplies cuts the kept replies to their heads: a reply's head still
// answers its caller, and says where the whole reply is.
func shedReplies(c *Carry, _ int) bool {
	if len(c.Inbox.Replies) == 0 {
		return false
	}
	replies := slices.Clone(c.Inbox.Replies)
	for i, r := range replies {
		replies[i].Reply = cutReply(r.Reply, shortReplyBytes)
	}
	c.Inbox.Replies = replies
	return true
}

// shedSubagents leaves the finished subagents out, counted as pruned.
func shedSubagents(c *Carry, _ int) bool {
	if c.Tree == nil || len(c.Tree.Subagents) == 0 {
		return false
	}
	tc := *c.Tree
	tc.SubagentsPruned += len(tc.Subagents)
	tc.Subagents = nil
	c.Tree = &tc
	return true
}

// shedTail drops the oldest messages after the head and the summary, at
// least over bytes of them; a tail never starts on a tool result. The last
// message stays when the handed-over turn answers its calls first, and the
// response from on when it asks for its held calls again.
// It returns how many it dropped.
func shedTail(c *Carry, over int) int {
	msgs := c.Window.Messages
	keep := min(todo.Head, len(msgs))
	if keep < len(msgs) && msgs[keep].Name == api.NameContextSummary {
		keep++
	}
	end := len(msgs)
	if q := c.Inbox.Queue; len(q) > 0 && q[0].Blocked != nil {
		switch b := q[0].Blocked; {
		case b.Tools:
			end--
		case len(b.Held) > 0:
			// The response and its answers so far stay.
			if i := responseWith(msgs, b.Held[0]); i >= 0 {
				end = i
			}
		case b.Next:
			// The turn's next model call answers its last response.
			if i := lastResponse(msgs); i >= keep {
				end = i
			}
		}
	}
	i := keep
	for over > 0 && i < end {
		over -= size(msgs[i:i+1]) + 1 // and its comma
		i++
	}
	for i < end && msgs[i].Role == model.RoleTool {
		i++ // a result without its call is refused by providers
	}
	if i == keep {
		return 0
	}
	c.Window.Messages = append(msgs[:keep:keep], msgs[i:]...)
	return i - keep
}

// counters is a brief without its texts: what a parent shows of a running
// agent until its next brief, and its waits.
func counters(b *api.Brief) *api.Brief {
	out := *b
	out.Current, out.PauseReason, out.ModelError = "", "", nil
	return &out
}

// fitResult makes a run's result fit MaxResultBytes. The largest state and
// the longest answer together could pass the server's limit, and a result
// the server refuses is lost with the run. The state gives way first to its
// summary (what a parent keeps of a child), then the reply to its head, with
// a note: the whole answer stays in the transcript.
func fitResult(res *api.AgentResult) {
	fits := func() bool { b, _ := json.Marshal(res); return len(b) <= MaxResultBytes }
	if fits() {
		return
	}
	if res.State != nil {
		sum := summary(*res.State)
		res.State = &sum
	}
	if b, _ := json.Marshal(res); len(b) > MaxResultBytes {
		keep := max(0, len(res.Reply)-(len(b)-MaxResultBytes)-256)
		res.Reply = text.Cut(res.Reply, keep) + fmt.Sprintf("\n\n[The answer was %d bytes; its first %d are here, and the whole of it is in the transcript.]", len(res.Reply), keep)
	}
}
