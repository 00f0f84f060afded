package chat

import (
	"strings"
	"testing"
)

func TestMatching(t *testing.T) {
	names := func(ms []int) string {
		var out []string
		for _, i := range ms {
			out = append(out, commands[i].name)
		}
		return strings.Join(out, " ")
	}
	tests := []struct{ text, want string }{
		{"/", names(matching("/"))}, // every command, checked below
		{"/c", "continuation compact clear"},
		{"/RE", "reject resume retry rewind"},
		{"/ex", "exit"},
		{"/plan", "plan"},
		{"/plan x", ""},  // arguments begun: no menu
		{"//c", ""},      // a message that starts with /
		{"hello /c", ""}, // a message
		{"/zz", ""},
	}
	for _, tt := range tests {
		if got := names(matching(tt.text)); got != tt.want {
			t.Errorf("matching(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	if n := len(matching("/")); n != len(commands) {
		t.Errorf(`"/" matches %d commands, want all %d`, n, len(commands))
	}
}

// Tab puts the first match in the prompt, a space after a command that
// takes arguments; Tab again the next, round; a new text starts over.
func TestMenuTab(t *testing.T) {
	var m menu
	steps := []struct{ text, want string }{
		{"/c", "/continuation "},
		{"/continuation ", "/compact"},
		{"/compact", "/clear"},
		{"/clear", "/continuation "},
		{"/re", "/reject "}, // typed anew
		{"/reject x", "/reject x"},
	}
	for _, st := range steps {
		got, _ := m.tab(st.text)
		if got != st.want {
			t.Errorf("Tab on %q: %q, want %q", st.text, got, st.want)
		}
	}
	if _, ok := m.tab("hello"); ok {
		t.Error("Tab on a message completes something")
	}
}

// The menu lists the matches with their help, marks the one Tab chose,
// keeps to maxMenu lines, and is gone once a command is typed whole.
func TestMenuLines(t *testing.T) {
	var m menu
	lines := m.lines("/c", 80)
	if len(lines) != 3 || !strings.Contains(lines[0], "/continuation on|off") || !strings.Contains(lines[1], "summarise the older messages") {
		t.Errorf("menu of /c: %q", lines)
	}
	for _, l := range lines {
		if len([]rune(l)) > 80 {
			t.Errorf("line wider than 80: %q", l)
		}
	}
	put, _ := m.tab("/c")
	put, _ = m.tab(put)
	lines = m.lines(put, 80)
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "› /compact") || strings.HasPrefix(lines[0], "›") {
		t.Errorf("after two Tabs: %q, want /compact marked among the three", lines)
	}
	all := (&menu{}).lines("/", 80)
	if len(all) != maxMenu || !strings.Contains(all[maxMenu-1], "more (Tab goes through them)") {
		t.Errorf(`menu of "/": %d lines, want %d with the rest counted: %q`, len(all), maxMenu, all)
	}
	if got := (&menu{}).lines("/plan", 80); got != nil {
		t.Errorf("menu of a whole command: %q, want none", got)
	}
}
