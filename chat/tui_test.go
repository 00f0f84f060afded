package chat

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/client"
)

// sgr is the terminal view's own styling: colours and weights.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// The terminal view prints hostile text as text, inside its own styles.
func TestTerminalViewCleans(t *testing.T) {
	look := append(hostileLook(),
		client.StreamChanged{Running: true, Call: 1, Text: "Writing:\n" + hostile},
		client.ToolsChanged{Running: []client.RunningTool{{Name: hostile}}}, client.Looked{})

	var tr tracker
	above := printed(tr.applyAll(look), &replyView{width: 80, colour: true})
	// The reply, the result, the task event, the subagent's event and start.
	checkShown(t, sgr.ReplaceAllString(above, ""), 5)

	u := newUI(context.Background(), &session{id: "chat-1"}, nil)
	u.expanded = true
	for _, ev := range look {
		u.Update(lookMsg{ev: ev})
	}
	view := u.View().Content
	// The reply being written, the running tool, the pause, the checklist,
	// the progress line.
	checkShown(t, sgr.ReplaceAllString(view, ""), 5)
}

// A running tool's progress shows beside it in the live part of the view.
func TestTerminalViewToolProgress(t *testing.T) {
	u := newUI(context.Background(), &session{id: "chat-1"}, nil)
	u.Update(lookMsg{ev: client.ToolsChanged{Running: []client.RunningTool{{Name: "mcp__orders__import", Progress: 2, Total: 3, Message: "rows\n 200-300"}}}})
	u.Update(lookMsg{ev: client.Looked{}})
	view := sgr.ReplaceAllString(u.View().Content, "")
	if want := "⏳ running mcp__orders__import · 2/3 (67%) · rows 200-300"; !strings.Contains(view, want) {
		t.Errorf("view:\n%s\nwant a line %q", view, want)
	}
}

func TestToolLine(t *testing.T) {
	for _, tt := range []struct {
		t    client.RunningTool
		want string
	}{
		{client.RunningTool{Name: "slow"}, "running slow"},
		{client.RunningTool{Name: "crawl", Progress: 12}, "running crawl · 12"},
		{client.RunningTool{Name: "copy", Progress: 0.5, Total: 1}, "running copy · 0.5/1 (50%)"},
		{client.RunningTool{Name: "copy", Progress: 7, Total: 4, Message: "past the total"}, "running copy · 7/4 (100%) · past the total"},
		{client.RunningTool{Name: "say", Message: strings.Repeat("x", 100)}, "running say · " + strings.Repeat("x", 79) + "…"},
	} {
		if got := toolLine(tt.t); got != tt.want {
			t.Errorf("toolLine(%+v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}
