package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
)

func TestMayResend(t *testing.T) {
	once := tools.DefaultHints
	for _, tt := range []struct {
		name    string
		h       tools.Hints
		attempt int32
		last    *api.ToolProgress
		want    bool
	}{
		{"first attempt", once, 1, nil, true},
		{"idempotent, after anything", tools.Hints{Idempotent: true}, 3, nil, true},
		{"read-only, after anything", tools.Hints{ReadOnly: true}, 2, nil, true},
		{"no word from the attempt before", once, 2, nil, false},
		{"progress, no word of not sending", once, 2, &api.ToolProgress{Tool: "t", Progress: 3}, false},
		{"the attempt before did not send", once, 2, &api.ToolProgress{Tool: "t", Unsent: 1}, true},
		{"an older attempt did not send; the one before may have", once, 3, &api.ToolProgress{Tool: "t", Unsent: 1}, false},
	} {
		if got := mayResend(tt.h, tt.attempt, tt.last); got != tt.want {
			t.Errorf("%s: mayResend = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// resendTools are tools that fail their first call in each way a call can
// be interrupted, and count their calls.
type resendTools struct {
	calls map[string]*atomic.Int32
	reg   *tools.Registry
}

func newResendTools(t *testing.T) *resendTools {
	rt := &resendTools{calls: map[string]*atomic.Int32{}, reg: tools.NewRegistry()}
	add := func(name string, h *tools.Hints, first func(ctx context.Context) error) {
		n := &atomic.Int32{}
		rt.calls[name] = n
		var tool tools.Tool = tools.New(model.ToolSpec{Name: name}, func(ctx context.Context, _ tools.Env, _ json.RawMessage) (string, error) {
			if n.Add(1) == 1 {
				return "", first(ctx)
			}
			return "done", nil
		})
		if h != nil {
			tool = tools.WithHints(tool, *h)
		}
		if err := rt.reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	broke := func(context.Context) error {
		return tools.Retryable(errors.New("connection reset after the request was written"))
	}
	unsent := func(context.Context) error { return tools.Unsent(errors.New("connection refused")) }
	// hang waits until its attempt is interrupted (see runWithRetries).
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	once, idem := tools.DefaultHints, tools.Hints{Idempotent: true}
	add("once_broke", &once, broke)
	add("once_unsent", &once, unsent)
	add("once_hang", &once, hang)
	add("idem_broke", &idem, broke)
	add("idem_hang", &idem, hang)
	add("plain_broke", nil, broke)
	return rt
}

// runWithRetries runs RunTool for a call of tool in a workflow, under a
// retry policy, as the agent's workflow does.
func (rt *resendTools) runWithRetries(t *testing.T, tool string) (RunToolResult, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	a := &Activities{Tools: rt.reg, StateDir: t.TempDir()}
	// The first attempt is interrupted after 200 ms, as a worker that dies
	// or an attempt that times out would be: it ends with no word of its
	// own (the test environment retries a failure, not a timeout).
	runTool := func(ctx context.Context, in RunToolInput) (RunToolResult, error) {
		if activity.GetInfo(ctx).Attempt == 1 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
		}
		return a.RunTool(ctx, in)
	}
	env.RegisterActivityWithOptions(runTool, activity.RegisterOptions{Name: api.ToolActivity})
	wf := func(ctx workflow.Context) (RunToolResult, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 10 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Millisecond, MaximumAttempts: 3},
		})
		var res RunToolResult
		err := workflow.ExecuteActivity(ctx, api.ToolActivity, RunToolInput{WorkflowID: "wf", Call: toolCall(tool, `{}`)}).Get(ctx, &res)
		return res, err
	}
	env.RegisterWorkflow(wf)
	env.ExecuteWorkflow(wf)
	var res RunToolResult
	err := env.GetWorkflowError()
	if err == nil {
		err = env.GetWorkflowResult(&res)
	}
	return res, err
}

// A call interrupted after it may have reached a tool that is not sent a
// call twice is answered, not run again; one that certainly did not reach
// it, or of a tool that may be sent it twice, runs again.
func TestRunToolResend(t *testing.T) {
	rt := newResendTools(t)
	for _, tt := range []struct {
		tool      string
		calls     int32
		uncertain string // in the answer; "" for "done"
	}{
		{"once_broke", 1, "connection reset after the request was written"},
		{"once_unsent", 2, ""},
		{"once_hang", 1, "an earlier attempt of this call was interrupted"},
		{"idem_broke", 2, ""},
		{"idem_hang", 2, ""},
		{"plain_broke", 2, ""}, // no hints: the tool's Retryable is its word
	} {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := rt.runWithRetries(t, tt.tool)
			if err != nil {
				t.Fatal(err)
			}
			if n := rt.calls[tt.tool].Load(); n != tt.calls {
				t.Errorf("the tool ran %d times, want %d", n, tt.calls)
			}
			if tt.uncertain == "" {
				if res.IsError || res.Content != "done" {
					t.Errorf("answer %+v, want done", res)
				}
				return
			}
			if !res.IsError || !strings.Contains(res.Content, tt.uncertain) || !strings.Contains(res.Content, "may or may not have taken effect") ||
				!strings.Contains(res.Content, "Check whether it took effect") {
				t.Errorf("answer %+v, want an error saying the call may or may not have taken effect (%s)", res, tt.uncertain)
			}
		})
	}
}

// A run that holds destructive calls gets them back held, not run: those
// of tools whose hints say they may destroy, and of tools that say nothing
// of themselves (MCP's defaults; issue 36: a Go tool without hints ran
// unasked); tools that say they only read, or only add, run.
func TestRunToolHoldDestructive(t *testing.T) {
	var ran atomic.Int32
	run := func(context.Context, tools.Env, json.RawMessage) (string, error) { ran.Add(1); return "ran", nil }
	reg := tools.DefaultRegistry()
	for _, tool := range []tools.Tool{
		tools.WithHints(tools.New(model.ToolSpec{Name: "drop_table"}, run), tools.DefaultHints),
		tools.WithHints(tools.New(model.ToolSpec{Name: "count_rows"}, run), tools.Hints{ReadOnly: true}),
		tools.WithHints(tools.New(model.ToolSpec{Name: "add_row"}, run), tools.Hints{}),
		tools.New(model.ToolSpec{Name: "plain"}, run),
	} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	a := &Activities{Tools: reg, StateDir: t.TempDir()}
	for _, tt := range []struct {
		tool string
		held bool
	}{{"drop_table", true}, {"write_file", true}, {"count_rows", false}, {"add_row", false}, {"plain", true}, {"read_file", false}} {
		args := `{}`
		switch tt.tool {
		case "write_file":
			args = `{"path":"a.txt","content":"x"}`
		case "read_file":
			args = `{"path":"missing.txt"}`
		}
		before := ran.Load()
		res, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Call: toolCall(tt.tool, args), HoldDestructive: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Held != tt.held {
			t.Errorf("%s: held %v, want %v (%+v)", tt.tool, res.Held, tt.held, res)
		}
		if tt.held && (ran.Load() != before || !strings.Contains(res.Content, "may destroy")) {
			t.Errorf("%s: held, yet ran or not saying why: %+v", tt.tool, res)
		}
	}
	// Without HoldDestructive the destructive tool runs.
	if res, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Call: toolCall("drop_table", `{}`)}); err != nil || res.Held || res.Content != "ran" {
		t.Errorf("drop_table without hold = %+v, %v", res, err)
	}
}
