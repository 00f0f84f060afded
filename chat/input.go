package chat

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// The prompt of the terminal view: a text area that grows with what is
// typed (up to maxInputRows, then it scrolls), so that a message may hold
// several lines and a bracketed paste arrives whole, as one message.

const (
	// placeholder is what the empty prompt says (approval.go puts another
	// while it takes a refusal's feedback).
	placeholder  = "a message, or /help"
	maxInputRows = 10
	// quitWindow is how long after a Ctrl+C a second one leaves: the
	// first only clears the prompt, so that a half-typed message is not
	// lost to a key pressed to stop something.
	quitWindow = 2 * time.Second
)

func newInput() textarea.Model {
	in := textarea.New()
	in.ShowLineNumbers = false
	in.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "> "
		}
		return "  "
	})
	in.Placeholder = placeholder
	in.DynamicHeight = true
	in.MinHeight, in.MaxHeight = 1, maxInputRows
	// Rows past MaxHeight scroll; without a content limit of its own the
	// text area would refuse them (a long paste would be cut).
	in.MaxContentHeight = 100_000
	in.CharLimit = 0
	// Enter sends (the view handles it before the text area sees it).
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	// Up and Down at the first and last row recall the history (the view
	// handles those); Ctrl+T is the checklist, not a transpose.
	in.KeyMap.TransposeCharacterBackward = key.NewBinding(key.WithDisabled())
	// Plain: the text area's default shades the cursor's row, and the
	// terminal's own colours are the user's.
	st := textarea.DefaultDarkStyles()
	for _, s := range []*textarea.StyleState{&st.Focused, &st.Blurred} {
		*s = textarea.StyleState{Placeholder: lipgloss.NewStyle().Faint(true)}
	}
	in.SetStyles(st)
	in.Focus()
	return in
}

// atTop and atBottom say whether the cursor is on the first or the last
// row of the input, counting soft-wrapped rows: only there do Up and Down
// leave it for the history.
func atTop(in textarea.Model) bool {
	return in.Line() == 0 && in.LineInfo().RowOffset == 0
}

func atBottom(in textarea.Model) bool {
	li := in.LineInfo()
	return in.Line() == in.LineCount()-1 && li.RowOffset >= li.Height-1
}

// pasted is a bracketed paste's text with its line ends as the text area
// keeps them: terminals send CR, or CR LF, between the lines.
func pasted(msg tea.PasteMsg) tea.PasteMsg {
	msg.Content = strings.ReplaceAll(msg.Content, "\r\n", "\n")
	msg.Content = strings.ReplaceAll(msg.Content, "\r", "\n")
	return msg
}
