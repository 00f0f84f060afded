package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
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
var commands = []command{
	{"plan", "", "show the plan checklist"},
	{"todos", "", "show the todo checklist"},
	{"approve", "[--remember]", "approve the tool call shown waiting (y), or the plan that waits (--remember: that tool from now on, a)"},
	{"reject", "FEEDBACK", "reject it, telling the agent why (n)"},
	{"resume", "[TEXT]", "resume a paused agent (TEXT: what changed)"},
	{"continuation", "on|off", "switch todo continuation (todo-continuation)"},
	{"agents", "", "show the agents of the session and their progress"},
	{"stop", "", "stop the running turn, keeping what it did (also Esc)"},
	{"retry", "", "run again the turn that failed on the model"},
	{"compact", "", "summarise the older messages now"},
	{"clear", "", "start a new session here (this one goes on; starter chat --id comes back to it)"},
	{"model", "[NAME]", "show the models in use; with NAME, the model of the sessions /clear starts"},
	{"rewind", "N", "take the session back to just before its turn N (what came after is gone from it)"},
	{"end", "", "end the session (it completes after its current turn)"},
	{"help", "", "show this help"},
	{"quit", "", "leave the client; the session goes on (also Ctrl+C twice, Ctrl+D)"},
	{"exit", "", "the same as /quit"},
}

type command struct{ name, args, help string }

// usage is the command as typed, with its arguments.
func (c command) usage() string {
	if c.args == "" {
		return "/" + c.name
	}
	return "/" + c.name + " " + c.args
}

func helpText() string {
	var b strings.Builder
	b.WriteString("Commands (never sent to the model):\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-22s %s\n", c.usage(), c.help)
	}
	b.WriteString("Keys (in a terminal):\n" +
		"  Enter                  send the message\n" +
		"  Alt+Enter, Ctrl+J      start a new line (so does a \\ before Enter); a paste stays one message,\n" +
		"                         shown as [pasted N lines] past 10 lines\n" +
		"  Up, Down               earlier lines: sent from here, and the session's messages\n" +
		"  Ctrl+R                 search the earlier lines (Ctrl+R again: older; Enter takes the line)\n" +
		"  Tab                    complete a command (typing / lists them); open a collapsed paste\n" +
		"  Ctrl+T                 show or hide the whole checklist and plan\n" +
		"  Ctrl+O                 print the latest tool result whole (the tool call waiting, when one does)\n" +
		"  Esc                    stop the running turn, refusing what waits for approval (the list and plan stay)\n" +
		"While a tool call waits for approval, on an empty prompt:\n" +
		"  y, a, n                yes; always (its tool for the rest of the session); no, then a line saying why\n" +
		"  PgDn, PgUp             scroll a call too long for the window\n" +
		"  Ctrl+C                 clear the line; twice within 2 s, leave (the session goes on)\n" +
		"A line starting with // is sent with one /.")
	return b.String()
}

// parseLine reads a typed line; an unknown or malformed command is an
// error that says what would be right. A command takes an argument when
// commands lists one.
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
	if l.cmd == "exit" {
		l.cmd = "quit" // one command under two names, refusing alike
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == l.cmd })
	if i < 0 {
		return line{}, fmt.Errorf("unknown command /%s (/help lists them; // sends a line that starts with /)", name)
	}
	switch a := strings.ToLower(l.arg); {
	case commands[i].args == "" && l.arg != "":
		return line{}, fmt.Errorf("/%s takes no argument", l.cmd)
	case l.cmd == "approve" && l.arg != "" && l.arg != "--remember":
		return line{}, errors.New("/approve, or /approve --remember to approve this tool for the rest of the session")
	case l.cmd == "reject" && l.arg == "":
		return line{}, errors.New("/reject needs a feedback: /reject what to do instead")
	case l.cmd == "continuation" && a != "on" && a != "off":
		return line{}, errors.New("/continuation on, or /continuation off")
	case l.cmd == "rewind":
		if n, err := strconv.Atoi(l.arg); err != nil || n < 1 {
			return line{}, errors.New("/rewind N: the turn to go back before, counted from 1")
		}
	}
	return l, nil
}

// session carries out what the user asks of one session, through the
// session's queue (package client): messages and commands reach it in the
// order they were typed.
type session struct {
	s  *client.Session
	id string
	// pending starts the session while it does not exist yet (s is nil
	// then): a new chat session starts with its first message.
	pending *newSession
	// stops: the server stops when the client leaves (Options.ServerStops).
	stops bool
}

// replied waits until the turn of a message sent has ended (the watch shows
// its reply from the transcript) and says what went wrong, if anything: a
// message never delivered, a message refused, or a message taken whose
// answer could not be had.
func replied(ctx context.Context, m *client.Sent) error {
	if err := m.Accepted(ctx); err != nil {
		if _, ok := errors.AsType[*client.RefusedError](err); ok {
			return fmt.Errorf("message refused: %w", err)
		}
		return fmt.Errorf("message not sent: %w", err)
	}
	if _, err := m.Reply(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("message sent, but its turn did not answer: %w", err)
	}
	return nil
}

// run carries out a command and returns what to show. sn is what the user
// was shown: the latest state (nil when none could be read), for the
// commands that show it or must know what waits, and the tool call shown
// waiting, which approve and reject answer.
func (s *session) run(ctx context.Context, l line, sn seen) (string, error) {
	st := sn.st
	switch l.cmd {
	case "help":
		return helpText(), nil
	case "todos":
		if st == nil {
			return "", errNoState
		}
		return todo.Checklist(st.Todos), nil
	case "plan":
		text, err := s.s.Plan(ctx)
		if err != nil {
			return "", fmt.Errorf("query the plan: %w", err)
		}
		return text, nil
	case "agents":
		if st == nil {
			return "", errNoState
		}
		return agentTree(s.id, *st), nil
	case "approve":
		return s.answer(ctx, true, "", l.arg == "--remember", sn)
	case "reject":
		return s.answer(ctx, false, l.arg, false, sn)
	case "resume":
		if st != nil && !st.Paused && !hasWait(st, api.WaitPaused) {
			return "", fmt.Errorf("no agent is paused (status %s); nothing to resume", st.Status)
		}
		if err := s.s.Resume(ctx, l.arg, ""); err != nil {
			return "", fmt.Errorf("resume: %w", err)
		}
		return "resumed", nil
	case "continuation":
		now, err := s.s.SetContinuation(ctx, strings.EqualFold(l.arg, "on"))
		if err != nil {
			return "", fmt.Errorf("continuation: %w", err)
		}
		return "todo continuation " + map[bool]string{true: "on", false: "off"}[now], nil
	case "rewind":
		n, _ := strconv.Atoi(l.arg) // parseLine checked it
		if _, err := s.s.Rewind(ctx, n); err != nil {
			return "", err
		}
		return fmt.Sprintf("the session is back before turn %d: what is shown after that point is gone from it (it stays in the old run's history)", n), nil
	case "stop":
		if _, err := s.s.Interrupt(ctx); err != nil {
			return "", fmt.Errorf("stop: %w", err)
		}
		return "stopped the turn", nil
	case "retry":
		if _, err := s.s.Retry(ctx); err != nil {
			return "", fmt.Errorf("retry: %w", err)
		}
		return "the turn ran again", nil
	case "compact":
		res, err := s.s.Compact(ctx)
		if err != nil {
			return "", fmt.Errorf("compact: %w", err)
		}
		return res.Message, nil
	case "end":
		if err := s.s.End(ctx); err != nil {
			return "", fmt.Errorf("end: %w", err)
		}
		return "ending the session after its current turn", nil
	}
	if l.cmd == "clear" || l.cmd == "model" {
		return "", fmt.Errorf("/%s works in the terminal view, not in line mode (start another session with starter chat)", l.cmd)
	}
	return "", fmt.Errorf("/%s is not a command the session carries out", l.cmd)
}

var errNoState = errors.New("the session's state cannot be read yet (is a worker running?)")

// answer approves or rejects what the user was shown waiting for
// approval: the tool call shown (approve_tool with its call_id: if another
// took its place meanwhile, the session refuses), else the plan
// (approve_plan). A tool call that waits unshown is not answered.
func (s *session) answer(ctx context.Context, approve bool, feedback string, remember bool, sn seen) (string, error) {
	a := client.Answer{Feedback: feedback}
	switch c, st := sn.call, sn.st; {
	case c != nil && approve && !c.Whole:
		return "", fmt.Errorf("call %s is not shown whole (only its start is known), so it is not approved; /reject refuses it", c.CallID)
	case c != nil:
		a = c.Answer(feedback, remember)
	case st != nil && len(client.WaitingCalls(*st)) > 0:
		return "", errors.New("a tool call waits that was not shown yet: read it, then answer")
	case st != nil && !st.AwaitingApproval && !hasWait(st, api.WaitPlanApproval):
		return "", fmt.Errorf("nothing waits for approval (the session is %s)", statusText(st.Status, ""))
	case remember:
		return "", errors.New("--remember approves a tool; what waits is a plan (use /approve)")
	}
	if approve {
		return s.s.Approve(ctx, a)
	}
	return s.s.Reject(ctx, a)
}

func hasWait(st *api.State, kind string) bool {
	return slices.ContainsFunc(st.Waiting, func(w api.Wait) bool { return w.Kind == kind })
}
