package chat

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Ctrl+R searches the lines Up recalls, newest first, as a shell's reverse
// search does.

// search is a reverse search under way; the zero value is none.
type search struct {
	on    bool
	query string
	at    int    // the index of the line found in the history; -1 none
	found bool   // the latest find found the query
	draft string // what the prompt held when the search began
}

// start begins a search over lines, the prompt holding draft.
func (s *search) start(draft string, lines []string) {
	*s = search{on: true, at: len(lines), draft: draft}
}

// find looks for the newest line before index from that holds the query
// (case-insensitive), and keeps it; ok is false when none does, and then
// the line found before stays.
func (s *search) find(lines []string, from int) (string, bool) {
	q := strings.ToLower(s.query)
	for i := min(from, len(lines)) - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(lines[i]), q) {
			s.at, s.found = i, true
			return lines[i], true
		}
	}
	s.found = false
	return "", false
}

// typed narrows the search with text (a key's or a paste's), from the
// line found on: a longer query matches no newer line.
func (s *search) typed(text string, lines []string) (string, bool) {
	s.query += text
	return s.find(lines, s.at+1)
}

// erase takes the query's last character back, and searches again from
// the newest line.
func (s *search) erase(lines []string) (string, bool) {
	if r := []rune(s.query); len(r) > 0 {
		s.query = string(r[:len(r)-1])
	}
	return s.find(lines, len(lines))
}

// older finds the next older line that holds the query.
func (s *search) older(lines []string) (string, bool) {
	return s.find(lines, s.at)
}

// line is what the view shows of the search, above the prompt.
func (s *search) line() string {
	state := "search earlier lines"
	if !s.found && s.query != "" {
		state = "no earlier line holds"
	}
	return fmt.Sprintf("↶ %s: %q · Ctrl+R: older · Enter: take it · Esc: cancel", state, s.query)
}

// searchKey is a key pressed while a Ctrl+R search is under way; ok is
// false for a key that ends the search and then does what it does (an
// arrow, Ctrl+T).
func (u *ui) searchKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	lines := u.hist.lines
	switch key := msg.String(); {
	case key == "ctrl+r":
		return u.searched(u.search.older(lines)), true
	case key == "backspace":
		return u.searched(u.search.erase(lines)), true
	case key == "enter":
		u.search.on = false // the line found stays in the prompt
		return nil, true
	case key == "esc" || key == "ctrl+g" || key == "ctrl+c":
		u.input.SetValue(u.search.draft)
		u.search.on = false
		return nil, true
	case msg.Text != "":
		return u.searched(u.search.typed(msg.Text, lines)), true
	}
	u.search.on = false
	return nil, false
}

// searched shows the line a search found in the prompt.
func (u *ui) searched(line string, ok bool) tea.Cmd {
	if ok {
		u.input.SetValue(line)
	}
	return nil
}
