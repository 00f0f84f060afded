package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/workflows"
)

// A line the user types is either a message for the model (send_message)
// or, when it starts with "/", a command for the client, which never
// reaches the model. "//" at the start sends the line with one "/".

// line is one typed line, parsed.
type line struct {
	message string // a message for the model; "" for a command
	cmd     string // the command's name, without the slash
	arg     string // the rest of the line, trimmed
}

// commands are the slash commands with their help, in the order /help
// lists them.
var commands = []struct{ name, args, help string }{
	{"plan", "", "show the plan checklist"},
	{"todos", "", "show the todo checklist"},
	{"approve", "", "approve the plan or tool call that waits for approval"},
	{"reject", "FEEDBACK", "reject it, telling the agent why"},
	{"resume", "[TEXT]", "resume a paused agent (TEXT: what changed)"},
	{"continuation", "on|off", "switch todo continuation (todo-continuation)"},
	{"agents", "", "show the agents of the session and their progress"},
	{"compact", "", "summarise the older messages now"},
	{"end", "", "end the session (it completes after its current turn)"},
	{"help", "", "show this help"},
	{"quit", "", "leave the client; the session goes on (also Ctrl+C, Ctrl+D)"},
}

func helpText() string {
	var b strings.Builder
	b.WriteString("Commands (never sent to the model):\n")
	for _, c := range commands {
		name := "/" + c.name
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(&b, "  %-22s %s\n", name, c.help)
	}
	b.WriteString("Ctrl+T shows or hides the whole checklist and plan. A line starting with // is sent with one /.")
	return b.String()
}

// parseLine reads a typed line; an unknown or malformed command is an
// error that says what would be right.
func parseLine(s string) (line, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "//") {
		return line{message: s[1:]}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return line{message: s}, nil
	}
	name, arg, _ := strings.Cut(s[1:], " ")
	l := line{cmd: strings.ToLower(name), arg: strings.TrimSpace(arg)}
	switch l.cmd {
	case "plan", "todos", "approve", "agents", "compact", "end", "help", "quit":
		if l.arg != "" {
			return line{}, fmt.Errorf("/%s takes no argument", l.cmd)
		}
	case "reject":
		if l.arg == "" {
			return line{}, errors.New("/reject needs a feedback: /reject what to do instead")
		}
	case "continuation":
		if a := strings.ToLower(l.arg); a != "on" && a != "off" {
			return line{}, errors.New("/continuation on, or /continuation off")
		}
	case "resume":
	case "exit":
		l.cmd = "quit"
	default:
		return line{}, fmt.Errorf("unknown command /%s (/help lists them; // sends a line that starts with /)", name)
	}
	return l, nil
}

// session carries out what the user asks of one session.
type session struct {
	c  client.Client
	id string
}

// send delivers a message with the send_message update and waits for the
// turn's reply (which the watcher shows from the transcript).
func (s *session) send(ctx context.Context, text string) error {
	var reply string
	if err := s.update(ctx, workflows.SendMessageUpdate, text, &reply); err != nil {
		return fmt.Errorf("message not sent: %w", err)
	}
	return nil
}

// run carries out a command and returns what to show. st is the latest
// state (nil when none could be read), for the commands that show it or
// must know what waits.
func (s *session) run(ctx context.Context, l line, st *workflows.State) (string, error) {
	switch l.cmd {
	case "help":
		return helpText(), nil
	case "todos":
		if st == nil {
			return "", errNoState
		}
		return todo.Checklist(st.Todos), nil
	case "plan":
		var text string
		v, err := s.c.QueryWorkflow(ctx, s.id, "", workflows.PlanQuery)
		if err == nil {
			err = v.Get(&text)
		}
		if err != nil {
			return "", fmt.Errorf("query the plan: %w", err)
		}
		return text, nil
	case "agents":
		if st == nil {
			return "", errNoState
		}
		return agentTree(s.id, *st), nil
	case "approve", "reject":
		return s.answer(ctx, l.cmd == "approve", l.arg, st)
	case "resume":
		if st != nil && !st.Paused && !hasWait(st, workflows.WaitPaused) {
			return "", fmt.Errorf("no agent is paused (status %s); nothing to resume", st.Status)
		}
		if err := s.c.SignalWorkflow(ctx, s.id, "", workflows.ResumeSignal, l.arg); err != nil {
			return "", fmt.Errorf("resume: %w", refusal(err))
		}
		return "resumed", nil
	case "continuation":
		on := strings.EqualFold(l.arg, "on")
		var now bool
		if err := s.update(ctx, workflows.SetContinuationUpdate, workflows.ContinuationArgs{Enabled: &on}, &now); err != nil {
			return "", fmt.Errorf("continuation: %w", err)
		}
		return "todo continuation " + map[bool]string{true: "on", false: "off"}[now], nil
	case "compact":
		var res workflows.CompactResult
		if err := s.update(ctx, workflows.CompactContextUpdate, nil, &res); err != nil {
			return "", fmt.Errorf("compact: %w", err)
		}
		return res.Message, nil
	case "end":
		if err := s.c.SignalWorkflow(ctx, s.id, "", workflows.EndSessionSignal, nil); err != nil {
			return "", fmt.Errorf("end: %w", refusal(err))
		}
		return "ending the session after its current turn", nil
	}
	return "", fmt.Errorf("/%s is not a command the session carries out", l.cmd)
}

var errNoState = errors.New("the session's state cannot be read yet (is a worker running?)")

// answer approves or rejects whatever waits for approval: a tool call
// (approve_tool) or a plan (approve_plan).
func (s *session) answer(ctx context.Context, approve bool, feedback string, st *workflows.State) (string, error) {
	var answer string
	var err error
	callID, tool := "", false
	if st != nil {
		callID, tool = st.WaitingCall("")
	}
	if tool {
		// The call shown is the call answered: if another took its place
		// meanwhile, the workflow refuses.
		err = s.update(ctx, workflows.ApproveToolUpdate, workflows.ToolApprovalArgs{Approved: &approve, Feedback: feedback, CallID: callID}, &answer)
	} else {
		err = s.update(ctx, workflows.ApprovePlanUpdate, workflows.ApprovalArgs{Approved: &approve, Feedback: feedback}, &answer)
	}
	if err != nil {
		return "", err
	}
	return answer, nil
}

func hasWait(st *workflows.State, kind string) bool {
	for _, w := range st.Waiting {
		if w.Kind == kind {
			return true
		}
	}
	return false
}

// update runs an update to its end. Each carries a fresh id, so that the
// SDK's retry of a lost answer is answered once.
func (s *session) update(ctx context.Context, name string, arg, out any) error {
	var args []any
	if arg != nil {
		args = []any{arg}
	}
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		UpdateID:     uuid.NewString(),
		WorkflowID:   s.id,
		UpdateName:   name,
		Args:         args,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return refusal(err)
	}
	if err := h.Get(ctx, out); err != nil {
		return refusal(err)
	}
	return nil
}

// refusal is the workflow's own message of a refused update or signal,
// without the SDK's "(type: …, retryable: …)".
func refusal(err error) error {
	if ae, ok := errors.AsType[*temporal.ApplicationError](err); ok && ae.Message() != "" {
		return errors.New(ae.Message())
	}
	return err
}
