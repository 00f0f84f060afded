package chat

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/termtext"
)

// The terminal view (bubbletea, inline like Gemini CLI's): what is final
// (the transcript, other agents' news, command output) is printed above the
// program with tea.Println and stays in the terminal's scrollback; what
// changes in place is the program's view at the bottom: the reply being
// written, the running tools, what waits for the user, the checklist when
// Ctrl+T has opened it, the progress line and the prompt.

var (
	styleUser      = lipgloss.NewStyle().Bold(true)
	styleTool      = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	styleResult    = lipgloss.NewStyle().Faint(true)
	styleError     = lipgloss.NewStyle().Foreground(lipgloss.Red)
	styleNote      = lipgloss.NewStyle().Faint(true).Italic(true)
	styleEvent     = lipgloss.NewStyle().Foreground(lipgloss.Magenta)
	styleAttention = lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true)
	styleProgress  = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack)
	styleChecklist = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.BrightBlack).Padding(0, 1)
)

// paint styles text that may hold what a model, a tool or a file wrote,
// cleaned of terminal controls first (package termtext), so that the only
// sequences that reach the terminal are the style's own.
func paint(s lipgloss.Style, text string) string {
	return s.Render(termtext.Clean(text))
}

func styled(e entry) string {
	switch e.kind {
	case kindUser:
		return paint(styleUser, e.text)
	case kindReply:
		return "● " + termtext.Clean(e.text)
	case kindTool:
		return paint(styleTool, e.text)
	case kindResult:
		return paint(styleResult, e.text)
	case kindError:
		return paint(styleError, e.text)
	case kindNote:
		return paint(styleNote, e.text)
	case kindEvent:
		return paint(styleEvent, e.text)
	case kindAttention:
		return paint(styleAttention, e.text)
	}
	return termtext.Clean(e.text)
}

// printed is the block that entries print above the program.
func printed(entries []entry) string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = styled(e)
	}
	return strings.Join(lines, "\n")
}

// Messages of the terminal view.
type (
	lookMsg struct{ ev client.Event } // what the watch saw
	sentMsg struct{ err error }
	doneMsg struct {
		out string
		err error
	}
)

type ui struct {
	ctx      context.Context
	sess     *session
	looks    <-chan client.Event
	tr       tracker
	pending  []entry // what the current look printed so far
	input    textinput.Model
	expanded bool
	width    int
	height   int
	sending  int
	quitting bool
	intro    []string
}

func newUI(ctx context.Context, sess *session, looks <-chan client.Event, intro []string) *ui {
	in := textinput.New()
	in.Prompt = "> "
	in.Placeholder = "a message, or /help"
	in.Focus()
	return &ui{ctx: ctx, sess: sess, looks: looks, input: in, width: 80, height: 24, intro: intro}
}

func (u *ui) next() tea.Cmd {
	return func() tea.Msg {
		select {
		case ev, ok := <-u.looks:
			if !ok {
				return nil // the watch is over; the session has ended
			}
			return lookMsg{ev}
		case <-u.ctx.Done():
			return tea.Quit()
		}
	}
}

func (u *ui) Init() tea.Cmd {
	cmds := []tea.Cmd{u.next()}
	for _, line := range u.intro {
		cmds = append(cmds, tea.Println(paint(styleNote, line)))
	}
	return tea.Sequence(cmds...)
}

func (u *ui) print(entries []entry) tea.Cmd {
	if len(entries) == 0 {
		return nil
	}
	return tea.Println(printed(entries))
}

func (u *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case lookMsg:
		// A look's blocks are printed together, once its events are all in:
		// one print at a time keeps them in order.
		u.pending = append(u.pending, u.tr.apply(msg.ev)...)
		if _, ok := msg.ev.(client.Looked); !ok {
			return u, u.next()
		}
		printed := u.print(u.pending)
		u.pending = nil
		if u.tr.closed != "" {
			return u.leave(printed, "")
		}
		return u, tea.Batch(printed, u.next())
	case sentMsg:
		u.sending--
		if msg.err != nil {
			return u, u.print([]entry{{kindError, msg.err.Error()}})
		}
		return u, nil
	case doneMsg:
		if msg.err != nil {
			return u, u.print([]entry{{kindError, msg.err.Error()}})
		}
		return u, u.print([]entry{{kindNote, msg.out}})
	case tea.WindowSizeMsg:
		u.width, u.height = msg.Width, msg.Height
		u.input.SetWidth(max(msg.Width-4, 10))
		return u, nil
	case tea.KeyPressMsg:
		switch msg.String() {
		case "ctrl+c", "ctrl+d":
			return u.leave(nil, fmt.Sprintf("Left session %s; it goes on. Come back with: starter chat --id %s", u.sess.id, u.sess.id))
		case "ctrl+t":
			u.expanded = !u.expanded
			return u, nil
		case "enter":
			return u.submit()
		}
	}
	var cmd tea.Cmd
	u.input, cmd = u.input.Update(msg)
	return u, cmd
}

// submit handles the typed line: a message for the model, or a command.
func (u *ui) submit() (tea.Model, tea.Cmd) {
	text := u.input.Value()
	u.input.Reset()
	if strings.TrimSpace(text) == "" {
		return u, nil
	}
	l, err := parseLine(text)
	if err != nil {
		return u, u.print([]entry{{kindError, err.Error()}})
	}
	switch {
	case l.message != "":
		// Queued here, in the order typed; only the wait for its answer
		// runs on its own.
		u.sending++
		ctx, sent := u.ctx, u.sess.send(u.ctx, l.message)
		return u, func() tea.Msg { return sentMsg{replied(ctx, sent)} }
	case l.cmd == "quit":
		return u.leave(nil, fmt.Sprintf("Left session %s; it goes on. Come back with: starter chat --id %s", u.sess.id, u.sess.id))
	}
	ctx, sess, st := u.ctx, u.sess, u.tr.st
	echo := u.print([]entry{{kindNote, strings.TrimSpace(text)}})
	return u, tea.Sequence(echo, func() tea.Msg {
		out, err := sess.run(ctx, l, st)
		return doneMsg{out, err}
	})
}

// leave ends the program (the session goes on), printing what is left to
// print and a last line.
func (u *ui) leave(printed tea.Cmd, last string) (tea.Model, tea.Cmd) {
	u.quitting = true
	cmds := []tea.Cmd{printed}
	if last != "" {
		cmds = append(cmds, tea.Println(paint(styleNote, last)))
	}
	return u, tea.Sequence(append(cmds, tea.Quit)...)
}

func (u *ui) View() tea.View {
	if u.quitting {
		return tea.NewView("")
	}
	var parts []string
	if s := u.tr.stream; s != nil && s.Text != "" {
		// Cleaned whole, before its last lines are taken: a cut could
		// leave half a sequence.
		parts = append(parts, "● "+streamText(termtext.Clean(s.Text), s.Cut, max(u.height/2, 3)))
	}
	for _, t := range u.tr.tools {
		parts = append(parts, paint(styleTool, "⏳ running "+t))
	}
	for _, a := range attention(u.tr.st) {
		parts = append(parts, paint(styleAttention, a))
	}
	if u.expanded {
		parts = append(parts, paint(styleChecklist, checklist(u.tr.st)))
	}
	progress := progressLine(u.tr.st, u.tr.closed)
	if u.tr.err != nil {
		progress += " · " + clip(oneLine(u.tr.err.Error()), 80)
	}
	if !u.expanded {
		progress += " · Ctrl+T: checklist"
	}
	parts = append(parts, paint(styleProgress, progress), u.input.View())
	v := tea.NewView(strings.Join(parts, "\n"))
	return v
}
