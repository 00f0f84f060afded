package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/google/uuid"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// Options tune a play.
type Options struct {
	TaskQueue  string
	WorkflowID string    // default: todoflow-<uuid>
	Progress   io.Writer // live progress; nil for none
	Poll       time.Duration
}

// Output is `starter run --json`'s object (docs/testing.md, Scenarios).
type Output struct {
	WorkflowID string            `json:"workflow_id"`
	RunStatus  string            `json:"run_status"`
	Reply      string            `json:"reply"`
	State      json.RawMessage   `json:"state"`
	Messages   []json.RawMessage `json:"messages"`
	// Error says why the scenario could not be played to the end.
	Error string `json:"error,omitempty"`
}

// queryPatience bounds how long Collect waits for late answers.
const queryPatience = 3 * time.Minute

// Play starts the scenario's run and drives it to its end: it takes the
// user actions as the run's status asks for them, ends a session that has
// nothing more to say, and collects the final state and transcript. The
// returned error says where the run stood when playing failed; Output is
// filled as far as it could be either way. The run is driven through the
// client package, over c.
func Play(ctx context.Context, c sdkclient.Client, sc *Scenario, opts Options) (*Output, error) {
	if opts.TaskQueue == "" {
		opts.TaskQueue = api.TaskQueue
	}
	if opts.WorkflowID == "" {
		opts.WorkflowID = "todoflow-" + uuid.NewString()
	}
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	in := sc.RunInput()
	summary, details := describe(sc, in)
	s, err := client.New(c, client.Options{TaskQueue: opts.TaskQueue}).Start(ctx, in,
		client.StartOptions{ID: opts.WorkflowID, Summary: summary, Details: details})
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	out := &Output{WorkflowID: s.ID()}
	fmt.Fprintf(opts.Progress, "todoflow: run %s started\n", out.WorkflowID)

	done := make(chan error, 1)
	go func() { _, err := s.Wait(ctx); done <- err }()

	deadline := time.Now().Add(sc.TimeLimit())
	p := &player{s: s, progress: opts.Progress, actions: sc.User}
	followCtx, stopFollowing := context.WithCancel(ctx)
	p.followCtx = followCtx
	defer func() { stopFollowing(); p.following.Wait() }()
	var playErr, runErr error
	finished := false
	for !finished && playErr == nil {
		select {
		case runErr = <-done:
			finished = true
			continue
		case <-ctx.Done():
			playErr = ctx.Err()
			continue
		case <-time.After(opts.Poll):
		}
		if time.Now().After(deadline) {
			playErr = fmt.Errorf("the run did not finish within %s; it stood at %s", sc.TimeLimit(), p.where())
			break
		}
		playErr = p.step(ctx)
	}
	if !finished {
		// Give up on the run: say so in its history rather than leave it
		// waiting for a human who will not come.
		_ = s.Terminate(context.WithoutCancel(ctx), "scenario could not be played: "+errString(playErr))
		<-done
	}
	out.RunStatus = RunStatus(ctx, s, runErr)
	collectErr := Collect(ctx, s, out)
	switch {
	case playErr != nil:
		out.Error = playErr.Error()
	case runErr != nil:
		// The run's own failure is the news; a state that could not be
		// read after it is a footnote.
		out.Error = runErr.Error()
	case collectErr != nil:
		playErr = collectErr
		out.Error = collectErr.Error()
	}
	return out, playErr
}

// describe is the run's static summary and details (api.Describe), with the
// scenario's name: the summary when the run has no prompt, the last line of the details
// (a name may be a long description).
func describe(sc *Scenario, in api.AgentInput) (summary, details string) {
	summary, details = api.Describe(in)
	if sc.Name == "" {
		return summary, details
	}
	if strings.TrimSpace(in.Prompt) == "" {
		summary = "scenario " + sc.Name
	}
	return summary, fmt.Sprintf("%s\n- **Scenario:** %s", details, sc.Name)
}

func errString(err error) string {
	if err == nil {
		return "unknown reason"
	}
	return err.Error()
}

// player takes the scenario's user actions as the run asks for them.
type player struct {
	s        *client.Session
	progress io.Writer
	actions  []Action
	ended    bool

	// The turns the player started are followed to their replies, as every
	// client does: a turn handed over to a later run keeps its reply until
	// it is asked for, and a session that ends waits a while for that.
	followCtx context.Context
	following sync.WaitGroup

	last      api.State
	seen      bool
	afterMark string // the state an action was taken in; wait for a change
	retries   int    // times the next action was refused because its wait moved
}

func (p *player) where() string {
	if !p.seen {
		return "its start (no state could be read)"
	}
	return fmt.Sprintf("status %s, turn %d, %d model calls, %d todo items", p.last.Status, p.last.Turns, p.last.ModelCalls, len(p.last.Todos))
}

// mark identifies a state well enough to see that an action took effect.
func mark(s api.State) string {
	// The calls of one response wait for approval one after another with
	// the same counters: the waiting call tells them apart.
	call := ""
	if p := s.PendingApproval; p != nil {
		call = p.CallID
	}
	for _, w := range s.Waiting {
		call += "/" + w.AgentID + ":" + w.Reason
	}
	return fmt.Sprintf("%s/%d/%d/%v/%v/%s", s.Status, s.Turns, s.ModelCalls, s.Paused, s.Continuation, call)
}

func (p *player) step(ctx context.Context) error {
	// The run's own state: the player polls every 50 ms, and acts on
	// nothing that only the server's retries of a model call would add.
	st, err := p.s.RunState(ctx)
	if err != nil {
		return nil // not started yet, or between runs of continue-as-new
	}
	p.report(st)
	p.last, p.seen = st, true
	if p.afterMark != "" && mark(st) == p.afterMark {
		return nil // the last action has not been handled yet
	}
	p.afterMark = ""
	if !waits[st.Status] {
		return nil
	}
	if len(p.actions) > 0 && p.actions[0].When == st.Status {
		a := p.actions[0]
		p.actions = p.actions[1:]
		p.afterMark = mark(st)
		err := p.take(ctx, a, st)
		if moved(err) && p.retries < maxRetries {
			// The wait the state showed moved before the answer came (an
			// agent of the tree handed it over to its next run, which has
			// not asked again yet): answer the wait it shows next.
			if p.retries == 0 {
				fmt.Fprintf(p.progress, "todoflow: %s was refused (%v); sent again when the run shows its wait again\n", a.name(), err)
			}
			p.retries++
			p.actions = append([]Action{a}, p.actions...)
			p.afterMark = ""
			return nil
		}
		p.retries = 0
		return err
	}
	switch {
	case st.Status == api.StatusWaitingUser && len(p.actions) == 0:
		if !p.ended {
			p.ended = true
			p.afterMark = mark(st)
			fmt.Fprintln(p.progress, "todoflow: no user action left; ending the session")
			return p.s.End(ctx)
		}
		return nil
	case len(p.actions) == 0:
		return fmt.Errorf("the run is %s and the scenario has no action left for it (%s)", st.Status, p.where())
	case st.Status == api.StatusWaitingUser:
		return nil // a later action waits for another status; let the session idle
	default:
		return fmt.Errorf("the run is %s but the next user action waits for %s (%s)", st.Status, p.actions[0].When, p.where())
	}
}

// maxRetries bounds how often one action whose wait moved is sent again:
// at the player's poll of 50 ms, for about 5 s.
const maxRetries = 100

// moved reports whether err says the wait an answer is for was not where
// the state showed it: the session refused it because no agent (or not the
// one named) waits for it now, or the state shows no call to answer.
func moved(err error) bool {
	var r *client.RefusedError
	return errors.Is(err, errNoWaitingCall) ||
		errors.As(err, &r) && (strings.Contains(r.Message, "does not wait for this") || strings.Contains(r.Message, "no agent of this run tree waits for this"))
}

func (p *player) take(ctx context.Context, a Action, st api.State) error {
	fmt.Fprintf(p.progress, "todoflow: run is %s: sending %s\n", a.When, a.name())
	args := a.Args
	if a.Update == api.ApproveToolUpdate {
		var err error
		if args, err = withCallID(a.Args, st); err != nil {
			return err
		}
	}
	if a.Signal != "" {
		if err := p.s.Signal(ctx, a.Signal, args); err != nil {
			return fmt.Errorf("signal %s: %w", a.Signal, err)
		}
		return nil
	}
	// Wait only until the workflow accepted the update: the reply to a
	// send_message comes at the end of the turn, and the player must keep
	// watching the run meanwhile.
	sent := p.s.Update(ctx, a.Update, args)
	if err := sent.Accepted(ctx); err != nil {
		return fmt.Errorf("update %s: %w", a.Update, err)
	}
	if a.Update == api.SendMessageUpdate || a.Update == api.RetryTurnUpdate {
		p.following.Go(func() {
			if _, err := sent.Reply(p.followCtx); err != nil && p.followCtx.Err() == nil {
				fmt.Fprintf(p.progress, "todoflow: %s: its reply could not be read: %v\n", a.name(), err)
			}
		})
	}
	return nil
}

var errNoWaitingCall = errors.New("no tool call waits for approval in the state")

// withCallID is an approve_tool's arguments with the call_id of the call
// the state shows waiting, unless the scenario names one: the player, as
// every client, answers the call it was shown.
func withCallID(args json.RawMessage, st api.State) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return nil, fmt.Errorf("approve_tool's args: %w", err)
	}
	if _, ok := fields["call_id"]; ok {
		return args, nil
	}
	var agent string
	if raw, ok := fields["agent_id"]; ok {
		_ = json.Unmarshal(raw, &agent)
	}
	id, ok := st.WaitingCall(agent)
	if !ok {
		return nil, fmt.Errorf("approve_tool: %w (%s)", errNoWaitingCall, st.Status)
	}
	fields["call_id"], _ = json.Marshal(id)
	return json.Marshal(fields)
}

// report prints what changed since the last look: the status and the
// checklist, redrawn when it changes.
func (p *player) report(st api.State) {
	if !p.seen || st.Status != p.last.Status {
		fmt.Fprintf(p.progress, "todoflow: %s (turn %d, %d model calls)\n", st.Status, st.Turns, st.ModelCalls)
		if st.Paused {
			fmt.Fprintf(p.progress, "todoflow: paused: %s\n", st.PauseReason)
		}
	}
	if !p.seen || !todo.Equal(st.Todos, p.last.Todos) {
		if len(st.Todos) > 0 {
			fmt.Fprintln(p.progress, indent(todo.Checklist(st.Todos)))
		}
	}
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// RunStatus names how the run ended, following continue-as-new: a run that
// cannot be described is "failed" when waiting for it failed, else
// "unknown".
func RunStatus(ctx context.Context, s *client.Session, runErr error) string {
	st, err := s.RunStatus(ctx)
	switch {
	case err == nil:
		return st
	case runErr != nil:
		return "failed"
	}
	return "unknown"
}

// Collect reads the final state, the whole transcript (paged) and the reply
// of a run that ended into out. A query answered late is asked again, for
// queryPatience at most: an ended run's answers do not change, and without
// any worker there would be none.
func Collect(ctx context.Context, s *client.Session, out *Output) error {
	ctx, cancel := context.WithTimeout(ctx, queryPatience)
	defer cancel()
	rec, err := s.Record(ctx)
	out.State, out.Messages = rec.State, rec.Messages
	if out.Messages == nil {
		out.Messages = []json.RawMessage{}
	}
	if err != nil {
		return fmt.Errorf("read the final state and transcript: %w", err)
	}
	out.Reply = Reply(out.Messages)
	return nil
}

// Reply is the content of the last assistant message without tool calls.
func Reply(msgs []json.RawMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		var m model.Message
		if json.Unmarshal(msgs[i], &m) == nil && m.Role == model.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}
