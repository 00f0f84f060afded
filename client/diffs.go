package client

import (
	"context"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// What a tool call changed, for the user: the diff a write_file call shows
// (the tool_diffs query), never part of the message the model reads.

// ToolDiffs reads the diffs the session keeps of the tool calls named by
// ids, by call id: the hunks of a unified diff, each at most 16 KiB. A call
// without one (its tool shows none, or it is older than the latest few the
// session keeps) is not in the answer.
func (s *Session) ToolDiffs(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	err := s.query(ctx, &out, api.ToolDiffsQuery, ids)
	return out, err
}

// diffsAsked is how many tool results of one look, the latest, Watch asks
// diffs for: the session keeps fewer.
const diffsAsked = 16

// diffs reads the diffs of the tool results among msgs, the messages of
// one look, in one query, asked only when a worker's tool answered (the
// workflow's own tools, the todo and plan tools, show none). A failed read
// leaves the results without their diffs: they are the user's extra, and
// the messages are reported all the same.
func (w *watcher) diffs(ctx context.Context, msgs []model.Message) map[string]string {
	var ids []string
	for _, m := range msgs {
		switch {
		case m.Role == model.RoleAssistant && len(m.ToolCalls) > 0:
			// A tool's result follows the answer that called it, in this
			// look or the one before.
			w.calls = map[string]string{}
			for _, c := range m.ToolCalls {
				w.calls[c.ID] = c.Name
			}
		case m.Role == model.RoleTool && !m.IsError && m.ToolCallID != "":
			// The tools the workflow answers itself (todo, plan,
			// subagents) change no file.
			if name, ok := w.calls[m.ToolCallID]; ok && todo.KindOf(name) == todo.KindNone {
				ids = append(ids, m.ToolCallID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	d, err := w.s.ToolDiffs(ctx, ids[max(len(ids)-diffsAsked, 0):])
	if err != nil {
		return nil
	}
	return d
}
