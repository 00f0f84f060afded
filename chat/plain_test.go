package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// hostile is what a reply, a tool's result or a file read back may hold to
// take over the terminal: it sets the clipboard (OSC 52), makes a link to
// another place than it shows (OSC 8) and erases the line above (CSI). What
// it shows is hostileShown.
const (
	hostile      = "hello \x1b]52;c;aGk=\x07wor\x1b]8;;https://evil.example/\x07ld\x1b]8;;\x07\x1b[2K\x1b[1A!"
	hostileShown = "hello world!"
)

// hostileLook is one look at a session whose every part that the client
// shows holds hostile: the transcript, the checklist, a pause, the
// subagents and their events.
func hostileLook() []client.Event {
	st := &api.State{
		AgentID: "main", Status: api.StatusPaused, Paused: true, PauseReason: hostile,
		Waiting:   []api.Wait{{AgentID: "main", Kind: api.WaitPaused, Reason: hostile}},
		Todos:     []todo.Item{{ID: "1", Content: hostile, Status: todo.InProgress}},
		Events:    []todo.Event{{EventID: 1, AgentID: hostile, Type: "step_completed"}},
		Subagents: map[string]api.State{hostile: {Status: api.StatusRunning}},
	}
	return []client.Event{
		client.StateChanged{State: *st, At: time.Now()},
		client.NewMessage{Message: model.Message{Role: model.RoleUser, Content: "read notes.txt"}},
		client.NewMessage{Message: model.Message{Role: model.RoleAssistant, Content: hostile}},
		client.NewMessage{Message: model.Message{Role: model.RoleTool, Content: hostile + "\nsecond line"}},
		client.NewMessage{Message: model.Message{Role: model.RoleUser, Name: api.NameTaskEvent, Content: hostile}},
	}
}

// applied is what the tracker prints of evs.
func (t *tracker) applyAll(evs []client.Event) []entry {
	var out []entry
	for _, ev := range evs {
		out = append(out, t.apply(ev)...)
	}
	return out
}

// checkShown fails t unless out holds no control from hostile and shows
// its text where the view printed it, at least min times.
func checkShown(t *testing.T, out string, min int) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "]52;", "aGk=", "evil.example"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q:\n%q", bad, out)
		}
	}
	if n := strings.Count(out, hostileShown); n < min {
		t.Errorf("output shows %q %d times, want %d at least:\n%q", hostileShown, n, min, out)
	}
}

func TestLineModeCleans(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	looks := make(chan client.Event)
	go func() {
		evs := append([]client.Event{client.Problem{Err: errors.New(hostile)}}, hostileLook()...)
		for _, v := range append(evs, client.Closed{Status: client.RunCompleted}, client.Looked{}) {
			select {
			case looks <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	var out strings.Builder
	if err := runPlain(ctx, &session{id: "chat-1"}, looks, strings.NewReader(""), &out, []string{hostile}); err != nil {
		t.Fatal(err)
	}
	// The intro, the error, the reply, the result, the task event, the
	// subagent's event and its start, the pause.
	checkShown(t, out.String(), 8)
}
