package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
)

// The tool calls that wait for a human's approval, whole: a human answers
// a call only after seeing all of it. The state shows a call's arguments
// only up to 2 KiB (state.pending_approval, as a string of their start
// beyond that) and a subagent's call only as a short reason (state.waiting),
// so the whole call is read where it is kept whole: in the transcript of
// the agent that made it (the model's answer that holds it), the agent's
// own workflow for a subagent (docs/protocol.md: `<parent workflow id>/<agent_id>`).

// WaitingCall is a tool call that waits for approval in a session's tree.
type WaitingCall struct {
	// AgentID is the agent of the tree whose call it is.
	AgentID string
	CallID  string
	// Tool is the tool called; "" for a subagent's call not read whole.
	Tool string
	// Arguments are the call's arguments as the model sent them, when
	// Whole; nil otherwise.
	Arguments json.RawMessage
	// Whole says Arguments are all of the call's. A call not read whole has
	// only Cut: what the state shows of it, cut.
	Whole bool
	Cut   string
	// Diff is what the call would change, worked out before it runs (a
	// write_file's diff, or why there is none): the wait's own
	// (state.pending_approval.diff); nil when the session shows none.
	Diff *api.CallDiff
}

// Answer is the answer to c: approve_tool names its call_id and its agent,
// so that it answers c or nothing (a call that no longer waits is refused).
func (c WaitingCall) Answer(feedback string, remember bool) Answer {
	return Answer{CallID: c.CallID, AgentID: c.AgentID, Feedback: feedback, Remember: remember}
}

// WaitingCalls are the tool calls that wait for approval in st's tree, in
// the state's order (the agent's own first), as the state shows them:
// whole when their arguments were short enough to be shown whole.
func WaitingCalls(st api.State) []WaitingCall {
	var out []WaitingCall
	for _, w := range st.Waiting {
		if w.Kind != api.WaitToolApproval {
			continue
		}
		if p := st.PendingApproval; p != nil && w.AgentID == st.AgentID && p.CallID == w.CallID {
			out = append(out, pendingCall(st.AgentID, *p))
			continue
		}
		out = append(out, WaitingCall{AgentID: w.AgentID, CallID: w.CallID, Cut: w.Reason})
	}
	if p := st.PendingApproval; p != nil && !slices.ContainsFunc(out, func(c WaitingCall) bool { return c.CallID == p.CallID }) {
		// A run that lists no waits shows its own call all the same.
		out = append([]WaitingCall{pendingCall(st.AgentID, *p)}, out...)
	}
	return out
}

// pendingCall is the call state.pending_approval shows: its arguments are
// the model's JSON object when they were at most 2 KiB, else a JSON string
// holding their start.
func pendingCall(agent string, p api.PendingApproval) WaitingCall {
	c := WaitingCall{AgentID: agent, CallID: p.CallID, Tool: p.Tool, Diff: p.Diff}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) > 0 && args[0] == '{' && json.Valid(args) {
		c.Arguments, c.Whole = p.Arguments, true
		return c
	}
	if json.Unmarshal(args, &c.Cut) != nil {
		c.Cut = string(args)
	}
	return c
}

// ReadWhole returns calls (WaitingCalls of st, the state of s) with each
// call's arguments read whole from the transcript of its agent, and a
// subagent's diff from its own state. A call that could not be read stays
// as it was, not whole, and the error says why.
func (s *Session) ReadWhole(ctx context.Context, st api.State, calls []WaitingCall) ([]WaitingCall, error) {
	out := slices.Clone(calls)
	var errs []error
	for i, c := range out {
		if c.Whole {
			continue
		}
		whole, err := s.readCall(ctx, st, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("read call %s of agent %s whole: %w", c.CallID, c.AgentID, err))
			continue
		}
		out[i] = whole
	}
	return out, errors.Join(errs...)
}

// readCall reads call c whole from the transcript of its agent.
func (s *Session) readCall(ctx context.Context, st api.State, c WaitingCall) (WaitingCall, error) {
	agent := s
	if c.AgentID != st.AgentID {
		var err error
		if agent, err = s.member(ctx, st, c.AgentID, 2); err != nil {
			return c, err
		}
		// The wait, with its diff, is in the subagent's own state; the
		// root's shows it as a line.
		if ast, err := agent.RunState(ctx); err == nil && ast.PendingApproval != nil && ast.PendingApproval.CallID == c.CallID {
			c.Diff = ast.PendingApproval.Diff
		}
	}
	msgs, err := agent.messagesFrom(ctx, 0)
	if err != nil {
		return c, err
	}
	tc, ok := callIn(msgs, c.CallID)
	if !ok {
		return c, fmt.Errorf("the transcript of %s has no call %s", agent.id, c.CallID)
	}
	c.Tool, c.Arguments, c.Whole, c.Cut = tc.Name, tc.Arguments, true, ""
	return c, nil
}

// member is the session of agent id in the tree under s (whose state is
// st), looked for at most depth levels down: a child's workflow id is its
// parent's and its agent id, and a grandchild is found in its parent's
// own state (the root's shows its children only).
func (s *Session) member(ctx context.Context, st api.State, id string, depth int) (*Session, error) {
	if _, ok := st.Subagents[id]; ok {
		return s.c.Session(s.id + "/" + id), nil
	}
	if depth > 1 {
		for _, child := range slices.Sorted(maps.Keys(st.Subagents)) {
			cs := s.c.Session(s.id + "/" + child)
			cst, err := cs.RunState(ctx)
			if err != nil {
				continue // an ended child's run may have no worker to answer
			}
			if m, err := cs.member(ctx, cst, id, depth-1); err == nil {
				return m, nil
			}
		}
	}
	return nil, fmt.Errorf("agent %s is not in the tree of %s", id, s.id)
}

// callIn is call id as the transcript msgs holds it: in the last model
// answer that has it.
func callIn(msgs []model.Message, id string) (model.ToolCall, bool) {
	for _, m := range slices.Backward(msgs) {
		if m.Role != model.RoleAssistant {
			continue
		}
		if i := slices.IndexFunc(m.ToolCalls, func(c model.ToolCall) bool { return c.ID == id }); i >= 0 {
			return m.ToolCalls[i], true
		}
	}
	return model.ToolCall{}, false
}
