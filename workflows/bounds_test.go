package workflows

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// The budgets that bound each payload fit the caps of bounds.go, in the
// worst cases they allow.
func TestBoundsHoldByConstruction(t *testing.T) {
	// A model call after the largest turn: an answer of the most tool calls,
	// each writing the most a call may write, each answered with the most
	// a tool may return, in a continued run whose carried messages are named
	// by digest.
	big := strings.Repeat("x", activities.MaxToolOutputMax)
	var msgs []model.Message
	for range carryMessages + todo.Head {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: "carried", ToolCalls: []model.ToolCall{}})
	}
	from := len(msgs)
	calls := make([]model.ToolCall, todo.MaxToolCallsPerResponse)
	for i := range calls {
		args, _ := json.Marshal(map[string]string{"path": "f", "content": big})
		calls[i] = model.ToolCall{ID: "call", Name: "write_file", Arguments: args}
	}
	msgs = append(msgs, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
	for range calls {
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: "call", Content: big})
	}
	for range 10 { // the guards' reminders, a task event per subagent
		msgs = append(msgs, model.Message{Role: model.RoleUser, Name: todo.NameReminder, Content: strings.Repeat("r", transcript.HeldOver)})
	}
	nm := transcript.NewMessagesOf(msgs, from, 0)
	nm.Carried = transcript.MessageDigests(msgs[:from])
	in := activities.CallModelInput{WorkflowID: strings.Repeat("w", 1000), RunID: "run", AgentID: "root", Model: "openai:gpt",
		Spans: []transcript.Span{{Start: 0, End: 2}, {Start: 2, End: len(msgs)}}, New: nm, WorkerTools: []string{}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxActivityInputBytes {
		t.Errorf("the largest model call input is %d bytes, over MaxActivityInputBytes (%d)", len(b), MaxActivityInputBytes)
	}
	t.Logf("the largest model call input: %d bytes (cap %d)", len(b), MaxActivityInputBytes)

	// A tool's result and a model's answer.
	for name, n := range map[string]int{"tool output and its diff": activities.MaxToolOutputMax + tools.MaxDiffBytes, "model answer": activities.MaxAnswerBytes} {
		if n+64<<10 > MaxActivityResultBytes {
			t.Errorf("%s: %d bytes and its envelope pass MaxActivityResultBytes (%d)", name, n, MaxActivityResultBytes)
		}
	}
	// A query's page, and the carry's messages.
	if transcript.PageBytes+64<<10 > MaxQueryAnswerBytes {
		t.Errorf("a messages page of %d bytes passes MaxQueryAnswerBytes (%d)", transcript.PageBytes, MaxQueryAnswerBytes)
	}
	// The todo list, carried with the transcript's tail, in every state.
	list := make([]todo.Item, todo.MaxItems)
	for i := range list {
		list[i] = todo.Item{ID: strings.Repeat("i", todo.MaxItemIDBytes), Content: strings.Repeat("c", todo.MaxItemBytes), Status: todo.Pending}
	}
	if b, _ := json.Marshal(list); len(b)+carryBytes > MaxCarryBytes {
		t.Errorf("the largest todo list (%d bytes) and the carried messages pass MaxCarryBytes (%d)", len(b), MaxCarryBytes)
	}
	// A tree message: events of a plan of many large steps, split by send.
	var events []todo.Event
	for i := range 1000 {
		events = append(events, todo.Event{EventID: i, Type: todo.EventStepAdded, AgentID: "a", PlanID: "plan_1",
			Data: json.RawMessage(strconv.Quote(strings.Repeat("d", 2<<10)))})
	}
	brief := api.Brief{Status: api.StatusRunning, Current: strings.Repeat("c", 1<<10), PauseReason: strings.Repeat("p", 4<<10)}
	parts := todo.Batches(events, signalEventsBudget)
	for _, p := range parts {
		b, _ := json.Marshal(Events{Of: "a", Events: p, Brief: &brief})
		if len(b) > MaxSignalBytes {
			t.Errorf("a tree message of %d events is %d bytes, over MaxSignalBytes (%d)", len(p), len(b), MaxSignalBytes)
		}
	}
	if len(parts) < 2 {
		t.Errorf("%d events of 2 KiB went in %d message", len(events), len(parts))
	}
	var long []model.Message
	for range 500 {
		long = append(long, model.Message{Role: model.RoleTool, Content: strings.Repeat("y", 60<<10)})
	}
	if n := size(carriedMessages(long)); n > carryBytes+size(long[:todo.Head]) || n > MaxCarryBytes {
		t.Errorf("the carried messages of a long transcript take %d bytes, over carryBytes (%d) or MaxCarryBytes (%d)", n, carryBytes, MaxCarryBytes)
	}
}
