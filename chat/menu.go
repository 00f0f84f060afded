package chat

import (
	"fmt"
	"strings"
)

// The command menu: while the prompt holds the start of a command, the
// commands it may become are listed above the prompt and Tab goes through
// them, as a shell does, so that a user who does not know the commands
// finds them by typing "/".

// maxMenu is how many commands the menu lists at most; the rest is
// counted in a last line.
const maxMenu = 8

// menu is the Tab completion in progress: the text it completes and the
// match it put in the prompt last.
type menu struct {
	typed string // what was typed before the first Tab; "" when not completing
	at    int
	put   string // what the last Tab put in the prompt
}

// matching are the commands whose name starts with what text names, in
// /help's order; none when text is not the start of a command (a message,
// a "//" line, a command with its arguments begun).
func matching(text string) []int {
	name, ok := strings.CutPrefix(text, "/")
	if !ok || strings.HasPrefix(name, "/") || strings.ContainsAny(name, " \n") {
		return nil
	}
	name = strings.ToLower(name)
	var out []int
	for i, c := range commands {
		if strings.HasPrefix(c.name, name) {
			out = append(out, i)
		}
	}
	return out
}

// tab is what the prompt holds after a Tab on text: the next command of
// the menu, with a space after it when it takes arguments; ok is false
// when text is no command's start.
func (m *menu) tab(text string) (string, bool) {
	if m.typed == "" || text != m.put {
		m.typed, m.at = text, 0
	} else {
		m.at++
	}
	ms := matching(m.typed)
	if len(ms) == 0 {
		m.typed = ""
		return text, false
	}
	c := commands[ms[m.at%len(ms)]]
	m.put = "/" + c.name
	if c.args != "" {
		m.put += " "
	}
	return m.put, true
}

// lines is the menu for what the prompt holds, each command with its
// arguments and help cut at width, the one Tab put there marked.
func (m *menu) lines(text string, width int) []string {
	typed := text
	if m.typed != "" && text == m.put {
		typed = m.typed
	}
	ms := matching(typed)
	if len(ms) == 0 || (len(ms) == 1 && "/"+commands[ms[0]].name == strings.TrimSpace(text) && m.typed == "") {
		return nil // nothing to offer, or typed whole already
	}
	var out []string
	for n, i := range ms {
		if n == maxMenu-1 && len(ms) > maxMenu {
			out = append(out, fmt.Sprintf("  … %d more (Tab goes through them)", len(ms)-n))
			break
		}
		c := commands[i]
		mark := "  "
		if m.typed != "" && text == m.put && "/"+c.name == strings.TrimSpace(m.put) {
			mark = "› "
		}
		out = append(out, clip(fmt.Sprintf("%s%-22s %s", mark, c.usage(), c.help), max(width, 20)))
	}
	return out
}
