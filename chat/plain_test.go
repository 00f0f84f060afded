package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/workflows"
)

// hostile is what a reply, a tool's result or a file read back may hold to
// take over the terminal: it sets the clipboard (OSC 52), makes a link to
// another place than it shows (OSC 8) and erases the line above (CSI). What
// it shows is hostileShown.
const (
	hostile      = "hello \x1b]52;c;aGk=\x07wor\x1b]8;;https://evil.example/\x07ld\x1b]8;;\x07\x1b[2K\x1b[1A!"
	hostileShown = "hello world!"
)

// hostileSnapshot is a session whose every part that the client shows
// holds hostile: the transcript, the checklist, a pause, the subagents and
// their events, the running tool and the reply being written.
func hostileSnapshot() Snapshot {
	st := &workflows.State{
		AgentID: "main", Status: workflows.StatusPaused, Paused: true, PauseReason: hostile,
		Waiting:   []workflows.Wait{{AgentID: "main", Kind: workflows.WaitPaused, Reason: hostile}},
		Todos:     []todo.Item{{ID: "1", Content: hostile, Status: todo.InProgress}},
		Events:    []todo.Event{{EventID: 1, AgentID: hostile, Type: "step_completed"}},
		Subagents: map[string]workflows.State{hostile: {Status: workflows.StatusRunning}},
	}
	return Snapshot{State: st, StateAt: time.Now(), NewMessages: []model.Message{
		{Role: model.RoleUser, Content: "read notes.txt"},
		{Role: model.RoleAssistant, Content: hostile},
		{Role: model.RoleTool, Content: hostile + "\nsecond line"},
		{Role: model.RoleUser, Name: "todo_reminder", Content: hostile},
	}}
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
	looks := make(chan any)
	go func() {
		closed := hostileSnapshot()
		closed.Closed, closed.CloseStatus = true, "completed"
		for _, v := range []any{errors.New(hostile), closed} {
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
	// The intro, the error, the reply, the result, the reminder, the
	// subagent's event and its start, the pause.
	checkShown(t, out.String(), 8)
}
