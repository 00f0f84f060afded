package testsuite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/todoflow/todoflow/api"
	todoclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/telemetrytest"
	"github.com/todoflow/todoflow/todo"
)

// billable are the history events that Temporal Cloud bills as an action
// each, of those a chat turn makes (the activities' heartbeats, billed
// too, are not in history: the model here answers at once and sends none).
var billable = map[enumspb.EventType]string{
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:           "update",
	enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:                      "activity",
	enumspb.EVENT_TYPE_TIMER_STARTED:                                "timer",
	enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:            "upsert",
	enumspb.EVENT_TYPE_MARKER_RECORDED:                              "marker",
	enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:     "child",
	enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED: "signal",
}

// A chat turn of two model calls (write_todos, then the reply) costs at
// most 5 billable actions, by its history and by the server's counter: its message, its two model calls, and one upsert
// for the list it changed; no idle timer of its own, and no "running"
// sent for a turn that short (workflows/patches.go, patchLeanTurn).
func TestChatTurnCost(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	const turns = 3
	var answers []string
	for i := 1; i <= turns; i++ {
		answers = append(answers,
			fmt.Sprintf(`{"tool_calls": [{"name": "write_todos", "arguments": {"todos": [{"content": "step %d", "status": "in_progress"}]}}]}`, i),
			fmt.Sprintf(`{"content": "reply %d"}`, i))
	}
	sc := writeScenario(t, `{"model": [`+strings.Join(answers, ",")+`]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := todoclient.New(s.c, todoclient.Options{})
	// The list stays open between turns, as a chat's does: no guard asks
	// the model to finish it.
	zero, off := 0, false
	in := api.AgentInput{Model: sc.RunInput().Model, IdleTimeoutS: 600,
		Todo: todo.Config{FinalizationMaxCorrections: &zero, Continuation: &off}}
	sess, err := c.Start(ctx, in, todoclient.StartOptions{ID: "turn-cost"})
	if err != nil {
		t.Fatal(err)
	}
	var before map[string]float64
	for i := 1; i <= turns; i++ {
		if i == 2 {
			time.Sleep(1500 * time.Millisecond)
			before = actionsByType(t, s)
		}
		reply, err := sess.Send(ctx, fmt.Sprintf("message %d", i)).Reply(ctx)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if want := fmt.Sprintf("reply %d", i); reply != want {
			t.Fatalf("turn %d replied %q, want %q", i, reply, want)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	// The server's own counter agrees: what it bills for turns 2 and 3
	// is what their history shows, with no query among it (a Reply waits
	// on the update, not by polling the state).
	var counted float64
	for k, v := range actionsByType(t, s) {
		if d := v - before[k]; d != 0 {
			t.Logf("the server's action counter, turns 2 and 3: %s %v", k, d)
			counted += d
		}
	}
	if counted > 2*5 {
		t.Errorf("the server counted %v actions for turns 2 and 3, want at most 5 a turn", counted)
	}
	if err := sess.End(ctx); err != nil {
		t.Fatal(err)
	}
	perTurn := billableByTurn(historyOf(t, s.c, sess.ID()))
	if len(perTurn) != turns {
		t.Fatalf("%d turns in history, want %d: %v", len(perTurn), turns, perTurn)
	}
	for i, got := range perTurn {
		t.Logf("turn %d: %v", i+1, got)
		total := 0
		for _, n := range got {
			total += n
		}
		if got["activity"] != 2 {
			t.Errorf("turn %d scheduled %d activities, want its 2 model calls", i+1, got["activity"])
		}
		// The first turn's wait started the session's one idle timer.
		if i > 0 && got["timer"] != 0 {
			t.Errorf("turn %d started %d timers, want none: the idle timer moves", i+1, got["timer"])
		}
		if i > 0 && total > 5 {
			t.Errorf("turn %d cost %d billable actions (%v), want at most 5", i+1, total, got)
		}
	}
}

// billableByTurn counts the billable events of each turn: from a message's
// UpdateAccepted to the next one's (the last turn to the history's end).
func billableByTurn(evs []*historypb.HistoryEvent) []map[string]int {
	var out []map[string]int
	for _, ev := range evs {
		kind, ok := billable[ev.GetEventType()]
		if kind == "update" {
			out = append(out, map[string]int{})
		}
		if ok && len(out) > 0 {
			out[len(out)-1][kind]++
		}
	}
	return out
}

// actionsByType is the server's action counter by action_type.
func actionsByType(t *testing.T, s *server) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, sm := range telemetrytest.Get(t, "http://"+s.srv.MetricsAddress()+"/metrics") {
		if sm.Name == "action" || sm.Name == "action_total" {
			out[sm.Labels["action_type"]] += sm.Value
		}
	}
	return out
}
