package chat

import (
	"context"
	"regexp"
	"testing"

	"github.com/todoflow/todoflow/activities"
)

// sgr is the terminal view's own styling: colours and weights.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// The terminal view prints hostile text as text, inside its own styles.
func TestTerminalViewCleans(t *testing.T) {
	snap := hostileSnapshot()
	snap.Stream = &activities.ReplyStream{Call: 1, Text: "Writing:\n" + hostile}
	snap.Tools = []string{hostile}

	var tr tracker
	above := printed(tr.apply(snap))
	// The reply, the result, the reminder, the subagent's event and start.
	checkShown(t, sgr.ReplaceAllString(above, ""), 5)

	u := newUI(context.Background(), &session{id: "chat-1"}, nil, nil)
	u.expanded = true
	u.Update(lookMsg{snap})
	view := u.View().Content
	// The reply being written, the running tool, the pause, the checklist,
	// the progress line.
	checkShown(t, sgr.ReplaceAllString(view, ""), 5)
}
