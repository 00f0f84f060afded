package chat

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
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

func styled(e entry) string {
	switch e.kind {
	case kindUser:
		return styleUser.Render(e.text)
	case kindReply:
		return "● " + e.text
	case kindTool:
		return styleTool.Render(e.text)
	case kindResult:
		return styleResult.Render(e.text)
	case kindError:
		return styleError.Render(e.text)
	case kindNote:
		return styleNote.Render(e.text)
	case kindEvent:
		return styleEvent.Render(e.text)
	case kindAttention:
		return styleAttention.Render(e.text)
	}
	return e.text
}

// Messages of the terminal view.
type (
	lookMsg struct{ v any } // a snapshot or an error from the watcher
	sentMsg struct{ err error }
	doneMsg struct {
		out string
		err error
	}
)

type ui struct {
	ctx      context.Context
	sess     *session
	looks    <-chan any
	tr       tracker
	input    textinput.Model
	expanded bool
	width    int
	height   int
	sending  int
	quitting bool
	intro    []string
}

func newUI(ctx context.Context, sess *session, looks <-chan any, intro []string) *ui {
	in := textinput.New()
	in.Prompt = "> "
	in.Placeholder = "a message, or /help"
	in.Focus()
	return &ui{ctx: ctx, sess: sess, looks: looks, input: in, width: 80, height: 24, intro: intro}
}

func (u *ui) next() tea.Cmd {
	return func() tea.Msg {
		select {
		case v := <-u.looks:
			return lookMsg{v}
		case <-u.ctx.Done():
			return tea.Quit()
		}
	}
}

func (u *ui) Init() tea.Cmd {
	cmds := []tea.Cmd{u.next()}
	for _, line := range u.intro {
		cmds = append(cmds, tea.Println(styleNote.Render(line)))
	}
	return tea.Sequence(cmds...)
}

func (u *ui) print(entries []entry) tea.Cmd {
	if len(entries) == 0 {
		return nil
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = styled(e)
	}
	return tea.Println(strings.Join(lines, "\n"))
}

func (u *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case lookMsg:
		if err, ok := msg.v.(error); ok {
			u.tr.fail(err)
			return u, u.next()
		}
		printed := u.print(u.tr.apply(msg.v.(Snapshot)))
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
		u.sending++
		ctx, sess := u.ctx, u.sess
		return u, func() tea.Msg { return sentMsg{sess.send(ctx, l.message)} }
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
		cmds = append(cmds, tea.Println(styleNote.Render(last)))
	}
	return u, tea.Sequence(append(cmds, tea.Quit)...)
}

func (u *ui) View() tea.View {
	if u.quitting {
		return tea.NewView("")
	}
	var parts []string
	if s := u.tr.stream; s != nil && s.Text != "" {
		parts = append(parts, "● "+streamText(s.Text, s.Cut, max(u.height/2, 3)))
	}
	for _, t := range u.tr.tools {
		parts = append(parts, styleTool.Render("⏳ running "+t))
	}
	for _, a := range attention(u.tr.st) {
		parts = append(parts, styleAttention.Render(a))
	}
	if u.expanded {
		parts = append(parts, styleChecklist.Render(checklist(u.tr.st)))
	}
	progress := progressLine(u.tr.st, u.tr.closed)
	if u.tr.err != nil {
		progress += " · " + clip(oneLine(u.tr.err.Error()), 80)
	}
	if !u.expanded {
		progress += " · Ctrl+T: checklist"
	}
	parts = append(parts, styleProgress.Render(progress), u.input.View())
	v := tea.NewView(strings.Join(parts, "\n"))
	return v
}
