package workflows

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// The two payloads a run ends with, its continuation's input and its
// result, are measured before they go: each could gather every bound at
// once. Each part of the carry is bounded where it is made (the caps of todo/limits.go and todo/plan_budget.go,
// the budgets of carry.go and state.go), but a session that is at every
// bound at once (a full list, plan, queue and tree, a long summary) could
// still pass MaxCarryBytes. Then the carry sheds, in this order, until it
// fits, each step costing the continuation less than the next:
//
//  1. the oldest messages of the transcript's tail (never its head, nor
//     the summary, which stands for what went before);
//  2. the details of the briefs of running agents (the next brief of each
//     brings them back; their waits stay, so state.waiting stays right);
//  3. the older plan events, but those dependency resolution reads, and
//     then the data of the oldest of those (todo.PlanState.Thin);
//  4. the guard's copy of the unfinished items (todo_guard_blocked);
//  5. the kept replies of handed-over turns, but their heads (replies.go);
//  6. the finished subagents: counted as pruned.
//
// A carry that still does not fit is handed over as it is (the server takes
// up to 2 MiB) and the log says by how much it passed the cap.

// carrySize is what the carry takes as the continuation's input.
func carrySize(in AgentInput) int {
	b, _ := json.Marshal(in)
	return len(b)
}

// fitCarry sheds from in.Carry until in fits MaxCarryBytes, and says what
// it shed; over is how many bytes in still passes the cap (0 when it fits).
func fitCarry(in *AgentInput) (shed []string, over int) {
	c := in.Carry
	fits := func() bool { return carrySize(*in) <= MaxCarryBytes }
	if fits() {
		return nil, 0
	}
	if shedTail(c, carrySize(*in)-MaxCarryBytes) > 0 {
		shed = append(shed, "older messages")
	}
	if !fits() && c.Tree != nil && len(c.Tree.Briefs) > 0 {
		// The briefs are of the tree's members (at the root) or of the
		// running children; the map is looked up, never ranged.
		var ids []string
		for _, m := range c.Tree.Broker.Members {
			ids = append(ids, m.AgentID)
		}
		for _, r := range c.Running {
			ids = append(ids, r.AgentID)
		}
		briefs := make(map[string]*Brief, len(c.Tree.Briefs))
		for _, id := range ids {
			if b := c.Tree.Briefs[id]; b != nil {
				briefs[id] = b.counters()
			}
		}
		c.Tree = &TreeCarry{Broker: c.Tree.Broker, Asked: c.Tree.Asked, Subs: c.Tree.Subs, Briefs: briefs, Handed: c.Tree.Handed}
		shed = append(shed, "details of the briefs")
	}
	if !fits() && c.Plans != nil {
		ps := *c.Plans
		ps.Events = append([]todo.Event(nil), ps.Events...)
		if n := ps.Prune(0, 0); n > 0 {
			c.EventsPruned += n
			shed = append(shed, "older plan events")
		}
		c.Plans = &ps
		if !fits() && ps.Thin(carryEventBytes) > 0 {
			shed = append(shed, "the data of old plan events")
		}
	}
	if !fits() && c.Todo.GuardBlocked != nil && len(c.Todo.GuardBlocked.Unfinished) > 0 {
		// Its items are in the list; the guard's copy only shows them.
		gb := *c.Todo.GuardBlocked
		gb.Unfinished = nil
		c.Todo.GuardBlocked = &gb
		shed = append(shed, "the guard's copy of the unfinished items")
	}
	if !fits() && len(c.Replies) > 0 {
		// A reply's head still answers its caller, and says where the
		// whole reply is.
		replies := slices.Clone(c.Replies)
		for i, r := range replies {
			replies[i].Reply = cutReply(r.Reply, shortReplyBytes)
		}
		c.Replies = replies
		shed = append(shed, "the kept replies but their heads")
	}
	if !fits() && len(c.Subagents) > 0 {
		c.SubagentsPruned += len(c.Subagents)
		c.Subagents = nil
		shed = append(shed, "finished subagents")
	}
	return shed, max(0, carrySize(*in)-MaxCarryBytes)
}

// shedTail drops the oldest messages after the head and the summary, at
// least over bytes of them; a tail never starts on a tool result. The last
// message stays when the handed-over turn answers its calls first, and the
// response from on when it asks for its held calls again.
// It returns how many it dropped.
func shedTail(c *Carry, over int) int {
	msgs := c.Messages
	keep := min(todo.Head, len(msgs))
	if keep < len(msgs) && msgs[keep].Name == NameContextSummary {
		keep++
	}
	end := len(msgs)
	if len(c.Inbox) > 0 && c.Inbox[0].Blocked != nil {
		switch b := c.Inbox[0].Blocked; {
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
	c.Messages = append(msgs[:keep:keep], msgs[i:]...)
	return i - keep
}

// counters is a brief without its texts: what a parent shows of a running
// agent until its next brief, and its waits.
func (b *Brief) counters() *Brief {
	out := *b
	out.Current, out.PauseReason, out.ModelError = "", "", nil
	return &out
}

// fitResult makes a run's result fit MaxResultBytes. The largest state and
// the longest answer together could pass the server's limit, and a result
// the server refuses is lost with the run. The state gives way first to its
// summary (what a parent keeps of a child), then the reply to its head, with
// a note: the whole answer stays in the transcript.
func fitResult(res *AgentResult) {
	fits := func() bool { b, _ := json.Marshal(res); return len(b) <= MaxResultBytes }
	if fits() {
		return
	}
	if res.State != nil {
		sum := res.State.summary()
		res.State = &sum
	}
	if b, _ := json.Marshal(res); len(b) > MaxResultBytes {
		keep := max(0, len(res.Reply)-(len(b)-MaxResultBytes)-256)
		res.Reply = cutUTF8(res.Reply, keep) + fmt.Sprintf("\n\n[The answer was %d bytes; its first %d are here, and the whole of it is in the transcript.]", len(res.Reply), keep)
	}
}
