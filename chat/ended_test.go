package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/client"
)

// A failure's reason is its innermost message, without the wrappers' ids.
func TestReason(t *testing.T) {
	app := temporal.NewNonRetryableApplicationError(`model "gpt-4o": want openai:<model name> or script:<scenario file>`, "ModelConfig", nil)
	err := fmt.Errorf("workflow execution error (type: AgentWorkflow, workflowID: chat-1, runID: r1): %w",
		fmt.Errorf("activity error (type: CallModel, scheduledEventID: 5): %w", app))
	if got, want := client.Why(err), `model "gpt-4o": want openai:<model name> or script:<scenario file>`; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if got := client.Why(errors.New("terminated")); got != "terminated" {
		t.Errorf("reason of a bare error %q", got)
	}
}

// A session that ends failed ends the line mode with an *EndedError (the
// exit code of `starter chat`), after the line that says so; one that
// completes, with none.
func TestEndedFailedIsAnError(t *testing.T) {
	for _, status := range []string{client.RunFailed, client.RunCompleted} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		looks := make(chan client.Event, 3)
		looks <- client.StateChanged{State: api.State{AgentID: "main", Status: api.StatusFailed}, At: time.Now()}
		looks <- client.Closed{Status: status}
		looks <- client.Looked{}
		var out strings.Builder
		err := runPlain(ctx, &session{id: "chat-1"}, looks, strings.NewReader(""), &out, nil)
		cancel()
		if !strings.Contains(out.String(), "The session has ended ("+status+")") {
			t.Errorf("%s: the output does not say so:\n%s", status, out.String())
		}
		e, ok := errors.AsType[*EndedError](err)
		if status == client.RunCompleted {
			if err != nil {
				t.Errorf("completed: %v, want no error", err)
			}
			continue
		}
		if !ok || e.Status != status || e.ID != "chat-1" {
			t.Errorf("%s: error %v, want an *EndedError", status, err)
		}
	}
}
