package chat

import (
	"context"
	"regexp"
	"testing"

	"github.com/todoflow/todoflow/client"
)

// sgr is the terminal view's own styling: colours and weights.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// The terminal view prints hostile text as text, inside its own styles.
func TestTerminalViewCleans(t *testing.T) {
	look := append(hostileLook(),
		client.StreamChanged{Running: true, Call: 1, Text: "Writing:\n" + hostile},
		client.ToolsChanged{Running: []string{hostile}}, client.Looked{})

	var tr tracker
	above := printed(tr.applyAll(look))
	// The reply, the result, the task event, the subagent's event and start.
	checkShown(t, sgr.ReplaceAllString(above, ""), 5)

	u := newUI(context.Background(), &session{id: "chat-1"}, nil, nil)
	u.expanded = true
	for _, ev := range look {
		u.Update(lookMsg{ev})
	}
	view := u.View().Content
	// The reply being written, the running tool, the pause, the checklist,
	// the progress line.
	checkShown(t, sgr.ReplaceAllString(view, ""), 5)
}
