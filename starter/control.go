package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/callview"
)

// The commands that steer a running agent: approve and reject (the
// approve_plan or approve_tool update), resume (the resume signal),
// continuation (the set_continuation update), end, retry and compact; each
// through the run's session (package client).

func cmdApprove(c *cmdline) action {
	return approval(c, true)
}

func cmdReject(c *cmdline) action {
	return approval(c, false)
}

// approval answers what waits for approval. A tool call (the input's
// approval, answered with approve_tool) is answered only once seen: the
// command shows every call waiting whole (read from its agent's
// transcript; the state has only the start of long arguments) and answers
// the one --call names, or, with -y, the only one it showed. A call_id
// that no longer waits is refused, so that running the command twice never
// answers a second call nobody saw. With no tool call waiting it answers
// the plan that waits (startPlan with plan_approval "required", answered
// with approve_plan), as before.
func approval(c *cmdline, approve bool) action {
	shape := "starter approve ID [--call CALL_ID | -y] [--remember] [--feedback TEXT] [--agent AGENT]"
	help := "a note (`TEXT`) for the agent with the approval; with --reject, why"
	if !approve {
		shape = "starter reject ID --feedback TEXT [--call CALL_ID | -y] [--agent AGENT]"
		help = "`TEXT` telling the agent why the plan or call is rejected (required)"
	}
	feedback := c.fs.String("feedback", "", help)
	agent := c.fs.String("agent", "", "the `AGENT` of the tree whose plan or tool call is answered, when several wait")
	call := c.fs.String("call", "", "the `CALL_ID` of the tool call answered, as this command shows it")
	yes := c.fs.BoolP("yes", "y", false, "answer the tool call this command shows, when it is the only one waiting")
	remember, reject := new(bool), new(bool)
	if approve {
		remember = c.fs.Bool("remember", false, "approve the call's tool for the rest of the session")
		reject = c.fs.Bool("reject", false, "reject the call or plan instead, saying why with --feedback TEXT")
	}
	check := func([]string) error {
		switch {
		case *call != "" && *yes:
			return c.usageErr("--call and -y both say which call to answer; give one: %s", shape)
		case *reject && *remember:
			return c.usageErr("--remember approves a tool; it does not go with --reject")
		case !approve && strings.TrimSpace(*feedback) == "":
			return c.usageErr("missing the feedback: %s", shape)
		case *reject && strings.TrimSpace(*feedback) == "":
			return c.usageErr("missing the feedback: starter approve ID --reject --feedback TEXT [--call CALL_ID | -y]")
		}
		return nil
	}
	return c.forRun(check, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		id := s.ID()
		st, err := s.State(ctx)
		if err != nil {
			return err
		}
		approve := approve && !*reject
		calls := slices.DeleteFunc(tfclient.WaitingCalls(st), func(w tfclient.WaitingCall) bool {
			return *agent != "" && w.AgentID != *agent
		})
		if len(calls) == 0 {
			if *call != "" || *yes {
				return fmt.Errorf("%s: no tool call waits for approval (status %s)%s", id, st.Status, callNamed(*call))
			}
			if *remember {
				return fmt.Errorf("%s: --remember approves a tool for the session, but no tool call waits", id)
			}
			return answer(ctx, s, approve, tfclient.Answer{AgentID: *agent, Feedback: *feedback})
		}
		calls, err = s.ReadWhole(ctx, st, calls)
		if err != nil {
			fmt.Fprintf(os.Stderr, "starter: %v\n", err)
		}
		printText(callsText(calls))
		target, err := chosen(id, calls, *call, *yes, approve)
		if err != nil {
			return err
		}
		return answer(ctx, s, approve, target.Answer(*feedback, *remember))
	})
}

// chosen is the call of calls (those shown) that --call or -y names.
func chosen(id string, calls []tfclient.WaitingCall, call string, yes, approve bool) (tfclient.WaitingCall, error) {
	verb := map[bool]string{true: "approve", false: "reject"}[approve]
	var target tfclient.WaitingCall
	switch {
	case call != "":
		i := slices.IndexFunc(calls, func(w tfclient.WaitingCall) bool { return w.CallID == call })
		if i < 0 {
			return target, fmt.Errorf("%s: call %s no longer waits for approval (or never did); nothing was answered. Waiting now, shown above: %s",
				id, call, callIDs(calls))
		}
		target = calls[i]
	case yes && len(calls) == 1:
		target = calls[0]
	case yes:
		return target, badInput(fmt.Errorf("%s: %d tool calls wait (%s); -y answers only the one shown when one waits: name it with --call CALL_ID",
			id, len(calls), callIDs(calls)))
	default:
		return target, badInput(fmt.Errorf("%s: nothing was answered: read the call above, then run \"starter %s %s --call %s\" (or -y to answer the one shown when only one waits)",
			id, verb, id, calls[0].CallID))
	}
	if approve && !target.Whole {
		return target, fmt.Errorf("%s: call %s could not be read whole (above is only its start), so it is not approved; reject it, or try again", id, target.CallID)
	}
	return target, nil
}

// answer sends the answer and prints the session's word on it.
func answer(ctx context.Context, s *tfclient.Session, approve bool, a tfclient.Answer) error {
	var out string
	var err error
	if approve {
		out, err = s.Approve(ctx, a)
	} else {
		out, err = s.Reject(ctx, a)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.ID(), err)
	}
	printText(out)
	return nil
}

// callsText is the tool calls waiting, each whole, as the command shows them.
func callsText(calls []tfclient.WaitingCall) string {
	var b strings.Builder
	for i, w := range calls {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Waiting for approval: %s\n", callview.Header(w))
		for _, l := range callview.Text(w) {
			b.WriteString(l + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// callIDs names calls by id and tool.
func callIDs(calls []tfclient.WaitingCall) string {
	ids := make([]string, len(calls))
	for i, w := range calls {
		ids[i] = fmt.Sprintf("%s (%s, agent %s)", w.CallID, cmp.Or(w.Tool, "a tool"), w.AgentID)
	}
	return strings.Join(ids, ", ")
}

func callNamed(call string) string {
	if call == "" {
		return ""
	}
	return "; call " + call + " is not one"
}

func cmdResume(c *cmdline) action {
	agent := c.fs.String("agent", "", "the paused `AGENT` of the tree to resume, when several are")
	return c.forRun(nil, func(ctx context.Context, s *tfclient.Session, rest []string) error {
		st, err := s.State(ctx)
		if err != nil {
			return err
		}
		// The workflow would ignore a resume that nothing waits for: say
		// so instead of sending it.
		who, err := pausedAgent(st, *agent)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		if err := s.Resume(ctx, strings.TrimSpace(strings.Join(rest, " ")), *agent); err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		printText("resumed " + who)
		return nil
	})
}

// pausedAgent is the agent a resume is for: the one named, or the only
// paused agent of the tree (state.waiting; a run of an older version lists
// none and answers for itself).
func pausedAgent(st api.State, agent string) (string, error) {
	var paused []string
	for _, w := range st.Waiting {
		if w.Kind == api.WaitPaused && (agent == "" || w.AgentID == agent) {
			paused = append(paused, w.AgentID)
		}
	}
	if len(st.Waiting) == 0 && st.Paused && (agent == "" || agent == st.AgentID) {
		paused = append(paused, st.AgentID)
	}
	switch {
	case len(paused) == 1:
		return paused[0], nil
	case len(paused) > 1:
		return "", fmt.Errorf("agents %s are paused; name one with --agent", strings.Join(paused, ", "))
	case agent != "":
		return "", fmt.Errorf("agent %s is not paused (status %s); nothing to resume", agent, st.Status)
	}
	return "", fmt.Errorf("no agent of the run is paused (status %s); nothing to resume", st.Status)
}

func cmdContinuation(c *cmdline) action {
	check := func(rest []string) error { _, err := c.onOff(rest); return err }
	return c.forRun(check, func(ctx context.Context, s *tfclient.Session, rest []string) error {
		enabled, _ := c.onOff(rest)
		now, err := s.SetContinuation(ctx, enabled)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		fmt.Printf("continuation %s\n", map[bool]string{true: "on", false: "off"}[now])
		return nil
	})
}

// cmdEnd sends end_session: the session finishes its current turn, waits
// for its subagents and completes.
func cmdEnd(c *cmdline) action {
	return c.forRun(nil, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		if err := s.End(ctx); err != nil {
			return err
		}
		fmt.Println("ending")
		return nil
	})
}

// cmdRetry runs again a turn that failed on the model (retry_turn), once the
// cause (a key, a model name, an outage longer than the retry window) is
// fixed, and prints the turn's reply.
func cmdRetry(c *cmdline) action {
	return c.printReply((*tfclient.Session).Retry)
}

// cmdStop stops the session's running turn (interrupt) and prints the
// turn's reply once it has ended.
func cmdStop(c *cmdline) action {
	return c.printReply((*tfclient.Session).Interrupt)
}

// cmdRewind takes a session back to just before a turn (Temporal's reset).
func cmdRewind(c *cmdline) action {
	turn := c.fs.Int("to-turn", 0, "the `N`th turn (as `state` counts them) to go back to just before")
	check := func([]string) error {
		if *turn < 1 {
			return c.usageErr("give the turn to go back before: starter rewind ID --to-turn N")
		}
		return nil
	}
	return c.forRun(check, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		run, err := s.Rewind(ctx, *turn)
		if err != nil {
			return err
		}
		printText(fmt.Sprintf("%s is back before turn %d (run %s); the turns after stay in the reset run's history", s.ID(), *turn, run))
		return nil
	})
}

// cmdCompact asks a session to summarise its older messages now
// (compact_context) and prints what was done.
func cmdCompact(c *cmdline) action {
	return c.printReply(func(s *tfclient.Session, ctx context.Context) (string, error) {
		res, err := s.Compact(ctx)
		return res.Message, err
	})
}

// printReply is a command that asks the run one thing and prints its answer; ask has the
// shape of a method expression, as (*tfclient.Session).Retry.
func (c *cmdline) printReply(ask func(*tfclient.Session, context.Context) (string, error)) action {
	return c.forRun(nil, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		out, err := ask(s, ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		printText(out)
		return nil
	})
}

// onOff reads continuation's on|off argument (idArgs has counted one).
func (c *cmdline) onOff(rest []string) (bool, error) {
	switch strings.ToLower(rest[0]) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, c.usageErr("continuation is on or off, not %q: starter %s", rest[0], c.cmd.use)
}
