package chat

import "testing"

func TestHistory(t *testing.T) {
	var h history
	// The transcript of a session attached to, then lines typed here, whose
	// echoes in the transcript are not recalled twice.
	h.seen("first")
	h.seen("second")
	h.typed("/todos", "")
	h.typed("third", "third")
	h.typed("//etc/hosts", "/etc/hosts")
	h.seen("third")
	h.seen("/etc/hosts")
	h.typed("third", "third") // right after itself: once
	want := []string{"first", "second", "/todos", "third", "//etc/hosts", "third"}
	if len(h.lines) != len(want) {
		t.Fatalf("history %q, want %q", h.lines, want)
	}
	for i := range want {
		if h.lines[i] != want[i] {
			t.Fatalf("history %q, want %q", h.lines, want)
		}
	}

	// Up from a draft walks back to the oldest and stops there; Down walks
	// forward and ends on the draft.
	var got []string
	for {
		line, ok := h.prev("half typed")
		if !ok {
			break
		}
		got = append(got, line)
	}
	if len(got) != len(want) || got[0] != "third" || got[len(got)-1] != "first" {
		t.Errorf("Up recalled %q", got)
	}
	got = nil
	for {
		line, ok := h.next()
		if !ok {
			break
		}
		got = append(got, line)
	}
	if len(got) != len(want) || got[len(got)-1] != "half typed" || got[0] != "second" {
		t.Errorf("Down recalled %q", got)
	}

	// A message that shows while the user browses leaves the place.
	h.prev("")
	h.prev("")
	h.seen("from another client")
	if line, _ := h.next(); line != "third" {
		t.Errorf("after a new line, Down gave %q, want third", line)
	}
}
