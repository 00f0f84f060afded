package workflows

import (
	"encoding/json"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// What a run hands to its continuation of the transcript. Continue-as-new
// exists because history grew large; carrying the whole conversation would
// move the problem into the next run's first event (and past the payload
// limit of 2 MiB). The earlier messages stay readable in the previous run's
// history.
const (
	carryMessages = 60
	carryBytes    = 512 << 10
)

// compact returns the transcript to carry: the head (system prompt, first
// user message) and the longest tail of at most carryMessages messages and
// carryBytes bytes that does not start on a tool result. When the list's
// last write_todos falls out, the next model call gets a todo_reminder (the
// context-loss rule), so the model never loses its checklist.
func compact(msgs []model.Message) []model.Message {
	if len(msgs) <= todo.Head+carryMessages && size(msgs) <= carryBytes {
		return msgs
	}
	start, total := len(msgs), 0
	for start > todo.Head && len(msgs)-start < carryMessages {
		n := size(msgs[start-1 : start])
		if total+n > carryBytes {
			break
		}
		total += n
		start--
	}
	for start < len(msgs) && msgs[start].Role == model.RoleTool {
		start++ // a result without its call is refused by providers
	}
	out := append([]model.Message(nil), msgs[:todo.Head]...)
	return append(out, msgs[start:]...)
}

func size(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		n += len(b)
	}
	return n
}
