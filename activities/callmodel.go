package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// MessagesQuery is the name of the workflow query that returns the stored
// transcript; it takes an offset and a limit for paging. It is declared here,
// beside its reader, and re-exported by the workflows package.
const MessagesQuery = "messages"

// messagesPage bounds one query answer. A query result is capped at 2 MiB by
// the server, and a message can hold a whole file, so pages stay small.
const messagesPage = 64

// Span selects the transcript messages [Start, End).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// CallModelInput names the model call. It does not carry the conversation:
// the activity reads the selected messages from the calling workflow with the
// messages query, so each message enters workflow history once (when it was
// added) instead of once per turn, and history grows linearly with the
// conversation rather than with its square.
type CallModelInput struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	AgentID    string `json:"agent_id"`
	Model      string `json:"model"`
	Turn       int    `json:"turn"`
	Call       int    `json:"call"`
	// Spans select the messages the model receives (the context window).
	Spans []Span `json:"spans"`
	// Messages, when set, are sent as they are and Spans are ignored; for
	// callers that have no workflow to read from.
	Messages []model.Message `json:"messages,omitempty"`
	// TodoTools asks for the workflow's own tools (todo, plan, subagents).
	// The activity builds their specs from the same pure definitions the
	// workflow uses, so kilobytes of schema do not enter history per call.
	TodoTools *TodoTools `json:"todo_tools,omitempty"`
	// Tools are further tool specs to offer, sent as they are.
	Tools []model.ToolSpec `json:"tools,omitempty"`
	// WorkerTools names the worker's tools the model may use; nil means all
	// of them, an empty list none.
	WorkerTools []string `json:"worker_tools"`
}

// TodoTools selects the todo tools of a model call.
type TodoTools struct {
	// WriteDescription replaces write_todos' description when set
	// (input.todo.tool_description).
	WriteDescription string `json:"write_description,omitempty"`
}

// specs returns the tool specs t stands for.
func (t *TodoTools) specs() []model.ToolSpec {
	if t == nil {
		return nil
	}
	defs := todo.Tools(todo.Settings{Enabled: true, ToolDescription: t.WriteDescription})
	defs = append(defs, todo.PlanTools(true)...)
	out := make([]model.ToolSpec, len(defs))
	for i, d := range defs {
		out[i] = model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
	}
	return out
}

// CallModel sends the selected transcript to the model and returns its answer.
// Errors are classified: a model.Error decides retryable or not (and the
// provider's Retry-After becomes the next retry delay); a bad model reference
// is not retryable.
func (a *Activities) CallModel(ctx context.Context, in CallModelInput) (model.Response, error) {
	if a.Models == nil {
		return model.Response{}, temporal.NewNonRetryableApplicationError("worker has no model resolver", "ModelConfig", nil)
	}
	client, name, err := a.Models(in.Model)
	if err != nil {
		return model.Response{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("model %q: %v", in.Model, err), "ModelConfig", err)
	}
	msgs := in.Messages
	if msgs == nil {
		msgs, err = a.readTranscript(ctx, in.WorkflowID, in.RunID, in.Spans)
		if err != nil {
			return model.Response{}, err
		}
	}
	tools := append(in.TodoTools.specs(), in.Tools...)
	tools = append(tools, a.registry().Specs(in.WorkerTools)...)

	defer keepAlive(ctx)()

	resp, err := client.Complete(ctx, model.Request{Model: name, Messages: msgs, Tools: tools, Call: in.Call})
	if err != nil {
		return model.Response{}, classify(err)
	}
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].ID == "" {
			// Tool messages answer calls by id; a server that sends none
			// still gets unique, replay-stable ids.
			resp.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", in.Call, i+1)
		}
	}
	return resp, nil
}

// readTranscript pages the selected messages out of the calling workflow.
func (a *Activities) readTranscript(ctx context.Context, workflowID, runID string, spans []Span) ([]model.Message, error) {
	if a.Client == nil {
		return nil, temporal.NewNonRetryableApplicationError("worker has no Temporal client to read the transcript with", "ModelConfig", nil)
	}
	var out []model.Message
	for _, sp := range spans {
		for off := sp.Start; off < sp.End; {
			limit := min(messagesPage, sp.End-off)
			v, err := a.Client.QueryWorkflow(ctx, workflowID, runID, MessagesQuery, off, limit)
			if err != nil {
				return nil, fmt.Errorf("read transcript of %s [%d,%d): %w", workflowID, off, off+limit, err)
			}
			var page []model.Message
			if err := v.Get(&page); err != nil {
				return nil, fmt.Errorf("decode transcript of %s: %w", workflowID, err)
			}
			if len(page) == 0 {
				return nil, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("transcript of %s has no message at %d (wanted up to %d)", workflowID, off, sp.End), "TranscriptMismatch", nil)
			}
			out = append(out, page...)
			off += len(page)
		}
	}
	return out, nil
}

func (a *Activities) registry() *Registry {
	if a.Tools == nil {
		return DefaultRegistry()
	}
	return a.Tools
}

// classify turns a model error into the Temporal error that makes the
// server retry it, or not, as the provider's answer deserves.
func classify(err error) error {
	var me *model.Error
	if errors.As(err, &me) {
		return temporal.NewApplicationErrorWithOptions(me.Message, "ModelError", temporal.ApplicationErrorOptions{
			NonRetryable:   !me.Retryable,
			NextRetryDelay: me.RetryAfter,
			Cause:          me.Err,
		})
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return temporal.NewApplicationError(err.Error(), "ModelError")
}
