package chat

import (
	"strings"
	"testing"
)

func TestPastes(t *testing.T) {
	long := strings.TrimSuffix(strings.Repeat("a log line\n", 200), "\n")
	short := "one\ntwo\nthree"
	var p pastes
	if got := p.add(short); got != short {
		t.Errorf("a short paste shows as %q, want itself", got)
	}
	first := p.add(long)
	if first != "[pasted 200 lines]" {
		t.Errorf("a 200-line paste shows as %q", first)
	}
	second := p.add(long + "\nmore")
	if second != "[pasted 201 lines]" {
		t.Errorf("another paste shows as %q", second)
	}
	third := p.add(long)
	if third != "[pasted 200 lines #2]" {
		t.Errorf("a paste of as many lines shows as %q, want a marker of its own", third)
	}
	prompt := "look at this: " + first + " and " + third
	if !p.collapsed(prompt) || p.collapsed("nothing pasted") {
		t.Error("collapsed does not tell a prompt with a marker from one without")
	}
	if got, want := p.expand(prompt), "look at this: "+long+" and "+long; got != want {
		t.Errorf("expand: %d bytes, want %d", len(got), len(want))
	}
	if got := p.expand("[pasted 200 lines"); got != "[pasted 200 lines" {
		t.Errorf("an edited marker became %q", got)
	}
	p.reset()
	if got := p.expand(first); got != first {
		t.Errorf("after reset a marker expands to %d bytes", len(got))
	}
}
