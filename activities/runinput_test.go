package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc"

	"github.com/todoflow/todoflow/model"
)

// WorkflowService serves the history of the fake's one run as far as RunTool
// reads it: the started event with the run's input.
func (c *queryClient) WorkflowService() workflowservice.WorkflowServiceClient {
	return &historyService{c: c}
}

type historyService struct {
	workflowservice.WorkflowServiceClient // other methods are not called
	c                                     *queryClient
}

func (h *historyService) GetWorkflowExecutionHistory(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error) {
	h.c.historyReads++
	if ex := req.GetExecution(); ex.GetWorkflowId() != h.c.workflowID || ex.GetRunId() != h.c.runID {
		return nil, serviceerror.NewNotFound(fmt.Sprintf("workflow %s run %s not found", ex.GetWorkflowId(), ex.GetRunId()))
	}
	input, err := converter.GetDefaultDataConverter().ToPayloads(h.c.input)
	if err != nil {
		return nil, err
	}
	return &workflowservice.GetWorkflowExecutionHistoryResponse{History: &historypb.History{Events: []*historypb.HistoryEvent{{
		EventId:   1,
		EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{Input: input},
		},
	}}}}, nil
}

// A call by reference is checked against the "tools" of its run's input,
// which is read once per run.
func TestRunToolRunRestriction(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "go", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "list_files", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "write_file", Arguments: json.RawMessage(`{"path":"x.txt","content":"no"}`)},
			{ID: "c3", Name: "whoami", Arguments: json.RawMessage(`{}`)},
		}},
	}
	tests := []struct {
		name    string
		input   any
		call    int
		wantErr string // empty: the tool ran
	}{
		{"no restriction", map[string]any{"prompt": "go"}, 1, ""},
		{"named", map[string]any{"tools": []string{"list_files"}}, 0, ""},
		{"not named", map[string]any{"tools": []string{"list_files"}}, 1, `tool "write_file" is not allowed in this run; it may use list_files`},
		{"pattern", map[string]any{"tools": []string{"who*", "read_*"}}, 2, ""},
		{"pattern that does not match", map[string]any{"tools": []string{"read_*"}}, 1, "it may use read_*"},
		{"none", map[string]any{"tools": []string{}}, 0, "it may use none of the worker's tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &queryClient{workflowID: "default-test-workflow-id", runID: "default-test-run-id", msgs: msgs, input: tt.input}
			a := &Activities{Client: c, Tools: testTools(t)}
			call := msgs[1].ToolCalls[tt.call]
			for range 2 {
				res, err := executeRunTool(t, a, RunToolInput{
					Workspace: t.TempDir(),
					Call:      model.ToolCall{ID: call.ID, Name: call.Name},
					From:      &CallRef{Message: 1, Index: tt.call},
				})
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantErr == "" && res.IsError {
					t.Fatalf("RunTool = %+v, want the tool run", res)
				}
				if tt.wantErr != "" && (!res.IsError || !strings.Contains(res.Content, tt.wantErr)) {
					t.Fatalf("RunTool = %+v, want an error tool message containing %q", res, tt.wantErr)
				}
			}
			if c.historyReads != 1 {
				t.Errorf("the run's input was read %d times for two calls, want once", c.historyReads)
			}
		})
	}
}

func TestInputTools(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	payloads := func(v any) *commonpb.Payloads {
		p, err := dc.ToPayloads(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	encrypted := &commonpb.Payloads{Payloads: []*commonpb.Payload{{
		Metadata: map[string][]byte{"encoding": []byte("binary/encrypted")}, Data: []byte{1, 2, 3},
	}}}
	tests := []struct {
		name    string
		in      *commonpb.Payloads
		want    []string
		wantErr string
	}{
		{"no input", nil, nil, ""},
		{"nil input", payloads(nil), nil, ""},
		{"no tools", payloads(map[string]any{"prompt": "hi"}), nil, ""},
		{"tools", payloads(map[string]any{"tools": []string{"a", "mcp__x__*"}}), []string{"a", "mcp__x__*"}, ""},
		{"empty tools", payloads(map[string]any{"tools": []string{}}), []string{}, ""},
		{"not an object", payloads("a prompt"), nil, "decode tools"},
		{"encoded by another converter", encrypted, nil, "decode:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inputTools(dc, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("inputTools = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
				t.Fatalf("inputTools = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

// An input the worker cannot read fails the call for good: what the run
// allows is unknown, and another attempt would read the same history.
func TestRunToolUnreadableInput(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "go", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "list_files", Arguments: json.RawMessage(`{}`)}}},
	}
	c := &queryClient{workflowID: "default-test-workflow-id", runID: "default-test-run-id", msgs: msgs, input: []int{1}}
	_, err := executeRunTool(t, &Activities{Client: c}, RunToolInput{
		Workspace: t.TempDir(),
		Call:      model.ToolCall{ID: "c1", Name: "list_files"},
		From:      &CallRef{Message: 1, Index: 0},
	})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeRunInput || !app.NonRetryable() {
		t.Fatalf("RunTool error = %v, want a non-retryable %s", err, ErrTypeRunInput)
	}
}
