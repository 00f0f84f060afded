package chat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/callview"
	"github.com/todoflow/todoflow/internal/termtext"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
)

// The terminal view (bubbletea, inline like Gemini CLI's): what is final is
// printed above the program with tea.Println and stays in the terminal's
// scrollback; what changes in place is the program's view at the bottom.

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

// kindStyles are the styles of the kinds printed as they are written;
// a reply is markdown, a diff's line coloured by its first character, a
// call's line (kindCall) the model's text, unstyled.
var kindStyles = map[kind]lipgloss.Style{
	kindUser: styleUser, kindTool: styleTool, kindResult: styleResult, kindError: styleError,
	kindNote: styleNote, kindEvent: styleEvent, kindAttention: styleAttention,
}

func styled(e entry, replies *replyView) string {
	switch style, ok := kindStyles[e.kind]; {
	case ok:
		return paint(style, e.text)
	case e.kind == kindReply:
		return strings.Join(replies.lines(e.text), "\n")
	case e.kind == kindDiff:
		return paint(diffStyle(e.text), e.text)
	}
	return termtext.Clean(e.text)
}

// printed is the block that entries print above the program, replies
// rendered as markdown by replies.
func printed(entries []entry, replies *replyView) string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = styled(e, replies)
	}
	return strings.Join(lines, "\n")
}

// Messages of the terminal view.
type (
	// lookMsg is what the watch of session generation gen saw (a /clear
	// starts the next generation; what the previous watch still sends is
	// dropped).
	lookMsg struct {
		ev  client.Event
		gen int
	}
	// startedMsg is the new session its first message started, or why it
	// did not start.
	startedMsg struct {
		s      *client.Session
		prompt string
		err    error
	}
	sentMsg struct {
		text string
		err  error
	}
	doneMsg struct {
		out string
		err error
	}
	endedMsg struct {
		line string
		err  error
	}
	disarmMsg struct{ at time.Time } // the window of a Ctrl+C is over
	// printMsg is what a command read to print (a subagent's answer).
	printMsg struct{ entries []entry }
)

type ui struct {
	ctx      context.Context
	sess     *session
	looks    <-chan client.Event
	tr       tracker
	prices   Prices
	pending  []entry // what the current look printed so far
	input    textarea.Model
	hist     history
	menu     menu      // the commands "/" offers, Tab completing them (menu.go)
	search   search    // Ctrl+R (search.go)
	pastes   pastes    // long pastes, shown collapsed (paste.go)
	rv       replyView // the replies' markdown, the latest kept
	expanded bool
	width    int
	height   int
	// queued are the messages sent that the transcript does not show yet,
	// in the order typed: a turn takes them one after the other.
	queued []string
	// starting says a new session's first message is starting it; early
	// are the messages typed meanwhile, sent in order once it has.
	starting bool
	early    []string
	quitting bool
	intro    []string
	// profile is the terminal's colours: the program downsamples its view
	// to it, but not what it prints above (tea.Println), so print does.
	profile colorprofile.Profile
	// armed is when Ctrl+C last cleared the prompt: another one within
	// quitWindow leaves.
	armed time.Time
	now   func() time.Time
	err   error // Run's error: the session ended other than completed

	// ask is the tool call shown waiting for approval (approval.go), nil
	// when none waits. answered is the call last answered, which a state
	// read before the session took the answer still shows waiting;
	// answering says the answer is on its way. reading are the calls of
	// subagents being read whole. lineCall is the call shown when the line
	// being typed was begun: a /approve typed while one call showed
	// answers no other.
	ask       *asking
	answered  string
	answering bool
	reading   map[string]bool
	lineCall  string

	// A /clear makes a new session, started by its first message with
	// client and model (a /model changes it), and watched every poll in
	// place of the session of the previous generation, whose watch
	// stopWatch ends.
	client    *client.Client
	model     string
	poll      time.Duration
	gen       int
	stopWatch context.CancelFunc
}

func newUI(ctx context.Context, sess *session, intro []string) *ui {
	return &ui{ctx: ctx, sess: sess, input: newInput(), width: 80, height: 24, intro: intro,
		profile: colorprofile.TrueColor, now: time.Now}
}

func (u *ui) next() tea.Cmd {
	looks, gen := u.looks, u.gen
	if looks == nil {
		return nil // a session not started yet: nothing to watch
	}
	return func() tea.Msg {
		select {
		case ev, ok := <-looks:
			if !ok {
				return nil // the watch is over; the session has ended
			}
			return lookMsg{ev: ev, gen: gen}
		case <-u.ctx.Done():
			return tea.Quit()
		}
	}
}

func (u *ui) Init() tea.Cmd {
	cmds := []tea.Cmd{u.next()}
	for _, line := range u.intro {
		cmds = append(cmds, tea.Println(u.tone(paint(styleNote, line))))
	}
	return tea.Sequence(cmds...)
}

func (u *ui) print(entries []entry) tea.Cmd {
	if len(entries) == 0 {
		return nil
	}
	return tea.Println(u.tone(printed(entries, u.replies())))
}

// tone is s in the terminal's colours: none with NO_COLOR (the text's
// weights stay), fewer on a terminal of 16 or 256.
func (u *ui) tone(s string) string {
	if u.profile == colorprofile.TrueColor || u.profile == colorprofile.Unknown {
		return s
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: u.profile}
	_, _ = w.WriteString(s)
	return b.String()
}

func (u *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	empty := u.input.Value() == ""
	m, cmd := u.update(msg)
	if empty && u.input.Value() != "" {
		u.lineCall = u.shownID()
	}
	return m, cmd
}

func (u *ui) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case lookMsg:
		if msg.gen != u.gen {
			return u, nil // the session before a /clear
		}
		if m, ok := msg.ev.(client.NewMessage); ok && m.Message.Role == model.RoleUser && m.Message.Name == "" {
			u.hist.seen(m.Message.Content)
			u.dequeue(m.Message.Content)
		}
		// A look's blocks are printed together, once its events are all in:
		// one print at a time keeps them in order.
		u.pending = append(u.pending, u.tr.apply(msg.ev)...)
		if _, ok := msg.ev.(client.Looked); !ok {
			return u, u.next()
		}
		printed := tea.Batch(u.print(u.pending), u.syncAsk(), u.subagentAnswers())
		u.pending = nil
		if u.tr.closed != "" {
			ctx, sess, status := u.ctx, u.sess, u.tr.closed
			return u, tea.Sequence(printed, func() tea.Msg {
				line, err := sess.ending(ctx, status)
				return endedMsg{line, err}
			})
		}
		return u, tea.Batch(printed, u.next())
	case startedMsg:
		return u, u.started(msg)
	case readMsg:
		return u, u.readLine(msg)
	case answeredMsg:
		return u, u.answeredLine(msg)
	case endedMsg:
		u.err = msg.err
		return u.leave(msg.line)
	case sentMsg:
		if msg.err != nil {
			u.dequeue(msg.text)
			return u, u.print([]entry{{kindError, msg.err.Error()}})
		}
		return u, nil
	case doneMsg:
		if msg.err != nil {
			return u, u.print([]entry{{kindError, msg.err.Error()}})
		}
		return u, u.print([]entry{{kindNote, msg.out}})
	case printMsg:
		return u, u.print(msg.entries)
	case disarmMsg:
		if msg.at.Equal(u.armed) {
			u.armed = time.Time{}
		}
		return u, nil
	case tea.ColorProfileMsg:
		u.profile = msg.Profile
		return u, nil
	case tea.WindowSizeMsg:
		u.width, u.height = msg.Width, msg.Height
		u.input.SetWidth(max(msg.Width-1, 10))
		return u, nil
	case tea.PasteMsg:
		u.armed = time.Time{}
		msg = pasted(msg)
		if u.search.on {
			return u, u.searched(u.search.typed(msg.Content, u.hist.lines))
		}
		u.input.InsertString(u.pastes.add(msg.Content))
		return u, nil
	case tea.KeyPressMsg:
		key := msg.String()
		if key != "ctrl+c" {
			u.armed = time.Time{}
		}
		if u.search.on {
			if cmd, ok := u.searchKey(msg); ok {
				return u, cmd
			}
		}
		if u.ask != nil {
			if cmd, ok := u.askKey(key); ok {
				return u, cmd
			}
		}
		switch key {
		case "ctrl+c":
			return u.interrupt()
		case "ctrl+d":
			if u.input.Value() == "" {
				return u.leave(u.leftLine())
			}
		case "ctrl+t":
			u.expanded = !u.expanded
			return u, nil
		case "ctrl+r":
			u.search.start(u.input.Value(), u.hist.lines)
			return u, nil
		case "tab":
			// A command's start: complete it; a collapsed paste: open it.
			if put, ok := u.menu.tab(u.input.Value()); ok {
				u.input.SetValue(put)
				return u, nil
			}
			if v := u.input.Value(); u.pastes.collapsed(v) {
				u.input.SetValue(u.pastes.expand(v))
				u.pastes.reset()
				return u, nil
			}
		case "ctrl+o":
			if u.ask != nil {
				return u, u.print(callEntries(u.ask.call))
			}
			return u, u.print(append(resultEntries(u.tr.result, u.tr.resultOf), latestDiffEntries(&u.tr)...))
		case "esc":
			// A turn running, or waiting for an approval (a tool call's, a
			// plan's): the interrupt stops it, refusing what waits.
			if st := u.tr.st; st == nil || (st.Status != api.StatusRunning && st.Status != api.StatusAwaitingApproval) {
				break // nothing to stop: the input takes the key
			}
			return u, u.run(line{cmd: "stop"})
		case "enter":
			if v := u.input.Value(); strings.HasSuffix(v, "\\") {
				u.input.SetValue(strings.TrimSuffix(v, "\\") + "\n")
				return u, nil
			}
			return u.submit()
		case "up", "ctrl+p":
			if atTop(u.input) {
				if text, ok := u.hist.prev(u.input.Value()); ok {
					u.input.SetValue(text)
				}
				return u, nil
			}
		case "down", "ctrl+n":
			if atBottom(u.input) {
				if text, ok := u.hist.next(); ok {
					u.input.SetValue(text)
					if u.hist.browsing() {
						// As zsh does: on the first line, so that the next
						// Down walks through the lines of this one.
						u.input.MoveToBegin()
					}
				}
				return u, nil
			}
		}
	}
	var cmd tea.Cmd
	u.input, cmd = u.input.Update(msg)
	return u, cmd
}

// interrupt is Ctrl+C: the first clears the prompt, a second within
// quitWindow leaves (the session goes on either way).
func (u *ui) interrupt() (tea.Model, tea.Cmd) {
	now := u.now()
	if !u.armed.IsZero() && now.Sub(u.armed) < quitWindow {
		return u.leave(u.leftLine())
	}
	u.input.Reset()
	u.pastes.reset()
	u.hist.stop()
	u.armed = now
	return u, tea.Tick(quitWindow, func(time.Time) tea.Msg { return disarmMsg{now} })
}

func (u *ui) leftLine() string {
	if u.starting {
		return fmt.Sprintf("Left while session %s was starting; if it started, it goes on (starter chat --id %s).", u.sess.id, u.sess.id)
	}
	return left(u.sess)
}

// submit handles the typed line: a message for the model, or a command.
func (u *ui) submit() (tea.Model, tea.Cmd) {
	text := u.pastes.expand(u.input.Value())
	u.input.Reset()
	u.pastes.reset()
	if strings.TrimSpace(text) == "" {
		return u, nil
	}
	// Kept even when refused: Up brings a mistyped command back to fix.
	l, err := parseLine(text)
	u.hist.typed(strings.TrimSpace(text), l.message)
	if err != nil {
		return u, u.print([]entry{{kindError, err.Error()}})
	}
	switch {
	case l.message != "":
		u.queued = append(u.queued, l.message)
		if u.sess.pending != nil {
			return u, u.begin(l.message)
		}
		return u, u.send(l.message)
	case l.cmd == "quit":
		return u.leave(u.leftLine())
	case l.cmd == "clear":
		switch {
		case u.starting:
			return u, u.print([]entry{{kindError, "/clear: the session is starting; /clear once it has"}})
		case u.sess.pending != nil:
			return u, u.print([]entry{{kindNote, "This session is new already: it starts with your first message."}})
		case u.client == nil:
			return u, u.print([]entry{{kindError, "/clear needs a client to start the new session with"}})
		}
		return u, u.clear()
	case l.cmd == "model":
		if err := api.CheckModel(l.arg); err != nil {
			return u, u.print([]entry{{kindError, "/model: " + err.Error()}})
		}
		return u, u.print([]entry{{kindNote, u.modelText(l.arg)}})
	case u.sess.pending != nil && needs(l.cmd):
		why := errNotStarted.Error()
		if u.starting {
			why = "the session is starting; try again once it has"
		}
		return u, u.print([]entry{{kindError, fmt.Sprintf("/%s: %s", l.cmd, why)}})
	case (l.cmd == "approve" || l.cmd == "reject") && u.lineCall != u.shownID():
		return u, u.print([]entry{{kindError, fmt.Sprintf("/%s: %s; nothing was answered", l.cmd, changed(u.lineCall, u.ask))}})
	}
	echo := u.print([]entry{{kindNote, strings.TrimSpace(text)}})
	switch {
	case u.ask != nil && l.cmd == "approve":
		return u, tea.Sequence(echo, u.answer(true, l.arg == "--remember", ""))
	case u.ask != nil && l.cmd == "reject":
		return u, tea.Sequence(echo, u.answer(false, false, l.arg))
	}
	return u, tea.Sequence(echo, u.run(l))
}

// run carries out command l on the session, on its own.
func (u *ui) run(l line) tea.Cmd {
	ctx, sess, sn := u.ctx, u.sess, seen{st: u.tr.st}
	return func() tea.Msg {
		out, err := sess.run(ctx, l, sn)
		return doneMsg{out, err}
	}
}

// changed says how the call shown changed while a line was typed: shown
// is the call shown when it was begun, now what shows now.
func changed(shown string, now *asking) string {
	switch {
	case shown == "":
		return fmt.Sprintf("a tool call came to wait while you typed (%s): read it above, then answer", callview.Header(now.call))
	case now == nil:
		return fmt.Sprintf("call %s, shown when you began typing, no longer waits", shown)
	}
	return fmt.Sprintf("call %s, shown when you began typing, no longer waits; another does (%s): read it above, then answer", shown, callview.Header(now.call))
}

// modelText answers /model: with a name, it sets the model of the sessions
// /clear starts (a session keeps the model it started with); without, it
// says which models are in use.
func (u *ui) modelText(name string) string {
	if name != "" {
		u.model = name
		if u.sess.pending != nil && !u.starting {
			u.sess.pending.model = name
			return fmt.Sprintf("this session (it starts with your first message) and those /clear starts will use %s", name)
		}
		return fmt.Sprintf("sessions that /clear starts will use %s; this one keeps its model", name)
	}
	current := "the worker's default"
	switch {
	case u.sess.pending != nil && u.sess.pending.model != "":
		current = u.sess.pending.model
	case u.tr.st != nil && u.tr.st.Model != "":
		current = u.tr.st.Model
	}
	next := "the worker's default"
	if u.model != "" {
		next = u.model
	}
	return fmt.Sprintf("this session: %s; sessions that /clear starts: %s (/model NAME changes it)", current, next)
}

// clipLines keeps at most n of lines: the first n-1 and a line that says
// how many more there are.
func clipLines(lines []string, n int) []string {
	switch {
	case len(lines) <= n:
		return lines
	case n <= 0:
		return nil
	}
	return append(lines[:n-1:n-1], fmt.Sprintf("… %d more lines (/todos and /plan show them all)", len(lines)-n+1))
}

// leave ends the program (the session goes on), printing a last line.
func (u *ui) leave(last string) (tea.Model, tea.Cmd) {
	u.quitting = true
	return u, tea.Sequence(tea.Println(u.tone(paint(styleNote, last))), tea.Quit)
}

func (u *ui) View() tea.View {
	if u.quitting {
		return tea.NewView("")
	}
	var parts []string
	if s := u.tr.stream; s != nil && s.Text != "" {
		// Rendered (and cleaned) whole, before its last lines are taken:
		// a cut could leave half a sequence or half a code block.
		parts = append(parts, streamText(u.replies().lines(s.Text), s.Cut, max(u.height/2, 3)))
		if u.tr.streamCut() {
			parts = append(parts, paint(styleNote, cutNote+"; its next attempt writes the reply anew"))
		}
	}
	for _, q := range u.queued {
		parts = append(parts, paint(styleNote, "⋯ queued: "+clip(text.OneLine(q), 70)))
	}
	for _, t := range u.tr.tools {
		parts = append(parts, paint(styleTool, "⏳ "+toolLine(t)))
	}
	for _, a := range attention(u.tr.st, u.tr.retry) {
		parts = append(parts, paint(styleAttention, a))
	}
	if u.search.on {
		parts = append(parts, paint(styleNote, u.search.line()))
	} else if m := u.menu.lines(u.input.Value(), u.width); len(m) > 0 {
		parts = append(parts, paint(styleNote, strings.Join(m, "\n")))
	}
	// The tool call waiting comes last above the prompt, and fits the
	// room whatever else there is: the lines above it give way first.
	room := max(u.height-2-u.input.Height(), 1)
	if u.ask != nil {
		parts = append(parts, u.ask.view(max(u.width, 20), room)...)
	}
	var list []string
	if u.expanded {
		list = strings.Split(checklist(u.tr.st), "\n")
	}
	// The view must fit the window: a taller one scrolls the terminal at
	// each redraw, pushing the transcript out of its scrollback with
	// copies of the view. The checklist gives way first, then what is
	// above it, from the top.
	above := strings.Split(strings.Join(parts, "\n"), "\n")
	if len(parts) == 0 {
		above = nil
	}
	const border = 2 // the checklist's box, above and below it
	list = clipLines(list, room-len(above)-border)
	boxed := 0
	if len(list) > 0 {
		boxed = len(list) + border
	}
	if over := len(above) + boxed - room; over > 0 {
		above = above[min(over, len(above)):]
	}
	parts = above
	if len(list) > 0 {
		parts = append(parts, paint(styleChecklist, strings.Join(list, "\n")))
	}
	parts = append(parts, paint(styleProgress, fit(u.progress(), u.width)), u.input.View())
	return tea.NewView(strings.Join(parts, "\n"))
}

// progress is the line above the prompt: progressLine, with what this
// view knows (a session not started yet, the tokens, the keys that do
// something now).
func (u *ui) progress() string {
	stall := u.tr.stall()
	progress := progressLine(u.tr.st, u.tr.closed, stall)
	switch {
	case u.starting:
		progress = "starting the session…"
	case u.sess.pending != nil:
		progress = "new session · type your first message to start it"
	}
	if used := u.prices.usageLine(u.tr.st); used != "" {
		progress += " · " + used
	}
	if u.tr.err != nil && stall == "" {
		progress += " · " + clip(text.OneLine(u.tr.err.Error()), 80)
	}
	switch {
	case !u.armed.IsZero():
		progress += " · Ctrl+C again to leave (the session goes on)"
	case u.tr.st != nil && u.tr.st.Status == api.StatusRunning:
		progress += " · Esc: stop the turn"
	case u.tr.st != nil && u.tr.st.Status == api.StatusAwaitingApproval && u.ask == nil:
		progress += " · Esc: refuse the wait (stops the turn)"
	case !u.expanded:
		progress += " · Ctrl+T: checklist"
	}
	return progress
}

// subagentAnswers reads the answers of the subagents that just finished,
// each printed when it comes.
func (u *ui) subagentAnswers() tea.Cmd {
	ids := u.tr.takeEnded()
	if len(ids) == 0 || u.sess.s == nil || u.tr.st == nil {
		return nil
	}
	ctx, s, st := u.ctx, u.sess.s, *u.tr.st
	var cmds []tea.Cmd
	for _, id := range ids {
		cmds = append(cmds, func() tea.Msg {
			reply, err := s.SubagentReply(ctx, st, id)
			return printMsg{subagentEntries(id, reply, err)}
		})
	}
	return tea.Batch(cmds...)
}
