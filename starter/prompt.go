package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/termtext"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/todo"
)

// runOutput is `starter run --json`'s object (docs/testing.md, Scenarios): the scenario player's output,
// with the starter's ways of printing it.
type runOutput scenario.Output

// promptRun is one `starter run PROMPT`: a one-shot session.
type promptRun struct {
	c        *tfclient.Client
	id       string
	progress io.Writer // the progress view
	// server is the --address the hints for other commands need ("" for the default
	// server, which they reach without one).
	server string
}

// The progress view looks often while the run changes and less often while it does not
// (a model thinking, a human deciding): fast for a scripted run of a second, light on a
// session that waits for a day.
const (
	minPoll = 50 * time.Millisecond
	maxPoll = time.Second
)

// run starts the workflow with in and waits for its result. Meanwhile the progress view
// follows the state query: what the agents do, the checklist, and what a human wait needs
// (an approval or a resume, from another terminal). Once the first turn is answered
// (status waiting_user) the session is ended (end_session), as a one-shot run should be:
// the run winds down (its subagents finish) and completes. Interrupting leaves the run as
// it is, on its server.
func (p *promptRun) run(ctx context.Context, in api.AgentInput) (*runOutput, error) {
	s, err := p.c.Start(ctx, in, tfclient.StartOptions{ID: p.id})
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	out := &runOutput{WorkflowID: s.ID()}
	fmt.Fprintf(p.progress, "todoflow: run %s started\n", out.WorkflowID)

	done := make(chan error, 1)
	go func() {
		_, err := s.Wait(ctx) // follows continue-as-new to the last run
		done <- err
	}()

	view := &progressView{w: p.progress, id: out.WorkflowID, server: p.server}
	ended := false
	poll := minPoll
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return p.finish(ctx, s, out, err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
		st, raw, err := queryState(ctx, s)
		if err != nil {
			continue // not started yet, or between runs of continue-as-new
		}
		poll = min(2*poll, maxPoll)
		if view.show(st, raw) {
			poll = minPoll
		}
		if st.Status == api.StatusWaitingUser && !ended {
			if err := s.End(ctx); err != nil {
				return nil, fmt.Errorf("end the session of %s: %w", out.WorkflowID, err)
			}
			ended = true
		}
	}
}

// finish fills the output of a run that ended: its status, reply, final state and whole
// transcript.
func (p *promptRun) finish(ctx context.Context, s *tfclient.Session, out *runOutput, runErr error) (*runOutput, error) {
	out.RunStatus = scenario.RunStatus(ctx, s, runErr)
	if runErr != nil {
		out.Error = runErr.Error()
	}
	return out, scenario.Collect(ctx, s, (*scenario.Output)(out))
}

// print writes the output: the reply, or the whole object as JSON.
func (o *runOutput) print(w io.Writer, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprintln(w, termtext.Clean(o.Reply))
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(o); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// outcome is the error `starter run` exits with for a run that ended: nil only when it
// completed with an answer.
func (o *runOutput) outcome() error {
	if o.RunStatus != api.StatusCompleted {
		return fmt.Errorf("run %s ended %s: %s", o.WorkflowID, o.RunStatus, o.Error)
	}
	// A one-shot run whose turn failed on the model completed (the session survives
	// such a turn), but the user asked for an answer and got none.
	var st api.State
	if json.Unmarshal(o.State, &st) == nil && st.ModelError != nil && !st.ModelError.Retryable {
		return fmt.Errorf("run %s: the model call failed: %s", o.WorkflowID, st.ModelError.Message)
	}
	return nil
}

// progressView prints what changed in a run since it last looked: the agent tree (one
// line per agent, see agentTree), the checklist, and how to answer a human wait.
type progressView struct {
	w      io.Writer
	id     string
	server string
	last   struct {
		state              string
		tree, todos, waits string
	}
}

// show prints what changed, cleaned (print.go), and reports whether anything in the
// state (raw) did.
func (v *progressView) show(st api.State, raw json.RawMessage) bool {
	w := cleanWriter{v.w}
	changed := string(raw) != v.last.state
	v.last.state = string(raw)
	if t := agentTree(v.id, st); t != v.last.tree {
		fmt.Fprint(w, prefixLines("todoflow: ", t))
		v.last.tree = t
	}
	if c := todo.Checklist(st.Todos); len(st.Todos) > 0 && c != v.last.todos {
		fmt.Fprintln(w, "  "+strings.ReplaceAll(c, "\n", "\n  "))
		v.last.todos = c
	}
	paused := fmt.Sprintf(`Paused: %s (run "starter resume %s [TEXT]" to go on)`, text.OneLine(st.PauseReason), v.id)
	waits := strings.Join(humanNotes(v.id, st, paused), "\n")
	if waits != v.last.waits && waits != "" {
		fmt.Fprintln(w, prefixLines("todoflow: ", waits))
		if v.server != "" {
			fmt.Fprintf(w, "todoflow: (from another terminal, add --address %s: this run's server)\n", v.server)
		}
	}
	v.last.waits = waits
	return changed
}

func prefixLines(prefix, s string) string {
	s = strings.TrimRight(s, "\n")
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}
