package main

import (
	"context"
	"fmt"
	"strings"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/workflows"
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

// approval answers whichever kind of approval waits: a tool call (the
// input's approval, answered with approve_tool) or a plan (startPlan with
// plan_approval "required", answered with approve_plan).
func approval(c *cmdline, approve bool) action {
	shape := "starter approve ID [--feedback TEXT] [--agent AGENT]"
	help := "a note (`TEXT`) for the agent with the approval"
	if !approve {
		shape = "starter reject ID --feedback TEXT [--agent AGENT]"
		help = "`TEXT` telling the agent why the plan is rejected (required)"
	}
	feedback := c.fs.String("feedback", "", help)
	agent := c.fs.String("agent", "", "the `AGENT` of the tree whose plan or tool call is answered, when several wait")
	remember := c.fs.Bool("remember", false, "approve the waiting call's tool for the rest of the session")
	check := func(rest []string) error {
		if len(rest) > 0 {
			return c.usageErr("unexpected argument %q: %s (quote a feedback of several words)", rest[0], shape)
		}
		if !approve && strings.TrimSpace(*feedback) == "" {
			return c.usageErr("missing the feedback: %s", shape)
		}
		return nil
	}
	return c.forRun(check, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		id := s.ID()
		st, err := s.State(ctx)
		if err != nil {
			return err
		}
		// The call just read is the call answered: if another took its place
		// meanwhile, the workflow refuses.
		a := tfclient.AnswerTo(st, *agent)
		a.Feedback, a.Remember = *feedback, *remember
		if a.CallID == "" && *remember {
			return fmt.Errorf("%s: --remember approves a tool for the session, but no tool call waits", id)
		}
		var answer string
		if approve {
			answer, err = s.Approve(ctx, a)
		} else {
			answer, err = s.Reject(ctx, a)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		printText(answer)
		return nil
	})
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
func pausedAgent(st workflows.State, agent string) (string, error) {
	var paused []string
	for _, w := range st.Waiting {
		if w.Kind == workflows.WaitPaused && (agent == "" || w.AgentID == agent) {
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
	return c.forRun(c.noMoreArgs, func(ctx context.Context, s *tfclient.Session, _ []string) error {
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
	return c.forRun(c.noMoreArgs, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		reply, err := s.Retry(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		printText(reply)
		return nil
	})
}

// cmdStop stops the session's running turn (interrupt) and prints the
// turn's reply once it has ended.
func cmdStop(c *cmdline) action {
	return c.forRun(c.noMoreArgs, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		reply, err := s.Interrupt(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		printText(reply)
		return nil
	})
}

// cmdRewind takes a session back to just before a turn (Temporal's reset).
func cmdRewind(c *cmdline) action {
	turn := c.fs.Int("to-turn", 0, "the `N`th turn (as `state` counts them) to go back to just before")
	check := func(rest []string) error {
		if err := c.noMoreArgs(rest); err != nil {
			return err
		}
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
	return c.forRun(c.noMoreArgs, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		res, err := s.Compact(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID(), err)
		}
		printText(res.Message)
		return nil
	})
}

// onOff reads continuation's on|off argument.
func (c *cmdline) onOff(rest []string) (bool, error) {
	const shape = "starter continuation ID on|off"
	switch {
	case len(rest) == 0:
		return false, c.usageErr("missing on or off: %s", shape)
	case len(rest) > 1:
		return false, c.usageErr("unexpected argument %q: %s", rest[1], shape)
	}
	switch strings.ToLower(rest[0]) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, c.usageErr("continuation is on or off, not %q: %s", rest[0], shape)
}
