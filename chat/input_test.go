package chat

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

var (
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyAltEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
	keyCtrlC    = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
)

func typeText(u *ui, s string) {
	for _, r := range s {
		u.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// testUI is a terminal view whose session takes what is sent at once
// (acceptor), and whose clock the test sets.
func testUI(t *testing.T) (*ui, *acceptor, *time.Time) {
	a := &acceptor{}
	u := viewOn(t, a)
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	u.now = func() time.Time { return now }
	return u, a, &now
}

// viewOn is a terminal view of session chat-1 on tc, until t ends.
func viewOn(t *testing.T, tc sdkclient.Client) *ui {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := client.New(tc, client.Options{}).Session("chat-1")
	return newUI(ctx, &session{s: s, id: s.ID()}, nil)
}

func (a *acceptor) waitFor(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(a.got()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return a.got()
}

// Ctrl+C clears a half-typed message and stays; a second one within
// quitWindow leaves; one after it only clears again.
func TestCtrlCClearsThenLeaves(t *testing.T) {
	u, _, now := testUI(t)
	typeText(u, "half a thou")
	u.Update(keyCtrlC)
	if u.quitting || u.input.Value() != "" {
		t.Fatalf("after one Ctrl+C: quitting %v, input %q; want the input cleared and the client there", u.quitting, u.input.Value())
	}
	if v := u.View().Content; !strings.Contains(v, "Ctrl+C again to leave") {
		t.Errorf("the view does not say how to leave:\n%s", v)
	}

	// Too late for the second: it clears (nothing) and arms again.
	*now = now.Add(quitWindow + time.Millisecond)
	u.Update(keyCtrlC)
	if u.quitting {
		t.Fatal("a Ctrl+C after the window left")
	}
	// A key in between disarms.
	*now = now.Add(time.Second)
	typeText(u, "x")
	u.Update(keyCtrlC)
	if u.quitting || u.input.Value() != "" {
		t.Fatalf("Ctrl+C after typing: quitting %v, input %q", u.quitting, u.input.Value())
	}
	// The window's end, as the tick reports it, takes the hint away.
	u.Update(disarmMsg{at: u.armed})
	if v := u.View().Content; strings.Contains(v, "Ctrl+C again") {
		t.Errorf("the hint outlives its window:\n%s", v)
	}
	*now = now.Add(time.Second)
	u.Update(keyCtrlC)
	*now = now.Add(time.Second)
	if _, cmd := u.Update(keyCtrlC); !u.quitting || cmd == nil {
		t.Fatal("a second Ctrl+C within the window did not leave")
	}
}

// A bracketed paste of several lines is one message, its lines kept;
// Alt+Enter adds a line; Enter sends.
func TestPasteIsOneMessage(t *testing.T) {
	u, a, _ := testUI(t)
	u.Update(tea.PasteMsg{Content: "line one\r\nline two\rline three"})
	u.Update(keyAltEnter)
	typeText(u, "typed")
	if got, want := u.input.Value(), "line one\nline two\nline three\ntyped"; got != want {
		t.Fatalf("input %q, want %q", got, want)
	}
	u.Update(keyEnter)
	if got := a.waitFor(t, 1); !slices.Equal(got, []string{"line one\nline two\nline three\ntyped"}) {
		t.Errorf("the session took %q, want the paste as one message", got)
	}
	if u.input.Value() != "" {
		t.Errorf("the input holds %q after sending", u.input.Value())
	}

	// A "\" before Enter is a new line too, for terminals without Alt+Enter.
	typeText(u, `first\`)
	u.Update(keyEnter)
	typeText(u, "second")
	if got := u.input.Value(); got != "first\nsecond" {
		t.Errorf(`"\" Enter: input %q, want "first\nsecond"`, got)
	}
}

// Up and Down recall the session's user messages and the lines typed
// here; within a message of several lines they move between its lines.
func TestUpRecallsHistory(t *testing.T) {
	u, a, _ := testUI(t)
	u.Update(lookMsg{ev: client.NewMessage{Message: model.Message{Role: model.RoleUser, Content: "from the transcript"}}})
	u.Update(lookMsg{ev: client.NewMessage{Message: model.Message{Role: model.RoleUser, Name: "todo_reminder", Content: "not the user's"}}})
	u.Update(tea.PasteMsg{Content: "two\nlines"})
	u.Update(keyEnter)
	a.waitFor(t, 1)
	typeText(u, "/todos")
	u.Update(keyEnter)

	typeText(u, "draft")
	steps := []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{keyUp, "/todos"},
		{keyUp, "two\nlines"},
		{keyUp, "two\nlines"}, // the cursor goes up to the first line
		{keyUp, "from the transcript"},
		{keyUp, "from the transcript"}, // the oldest
		{keyDown, "two\nlines"},
		{keyDown, "two\nlines"}, // down to its last line
		{keyDown, "/todos"},
		{keyDown, "draft"},
	}
	for i, s := range steps {
		u.Update(s.key)
		if got := u.input.Value(); got != s.want {
			t.Fatalf("step %d (%s): input %q, want %q", i, s.key, got, s.want)
		}
	}
}

// With NO_COLOR (the ASCII profile) what is printed above the view has no
// colour; its weights stay.
func TestToneHonoursNoColor(t *testing.T) {
	u, _, _ := testUI(t)
	block := printed([]entry{{kindUser, "> fix it"}, {kindTool, "⏺ read_file"}, {kindError, "failed"}, {kindEvent, "◆ s1"}}, &replyView{width: 80, colour: true})
	if !strings.Contains(block, "\x1b[3") && !strings.Contains(block, "\x1b[9") {
		t.Fatalf("the styles set no colour to begin with: %q", block)
	}
	u.profile = colorprofile.ASCII
	got := u.tone(block)
	for _, seq := range sgr.FindAllString(got, -1) {
		for _, p := range strings.FieldsFunc(seq[2:len(seq)-1], func(r rune) bool { return r == ';' || r == ':' }) {
			if len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') || p == "38" || p == "48" {
				t.Errorf("colour %q in %q", seq, got)
			}
		}
	}
	if !strings.Contains(got, "\x1b[1m") {
		t.Errorf("the user's line lost its weight: %q", got)
	}
	if plain := sgr.ReplaceAllString(got, ""); plain != sgr.ReplaceAllString(block, "") {
		t.Errorf("the text changed: %q", plain)
	}
}
