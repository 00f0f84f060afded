// Package model is the boundary between todoflow and a language model.
//
// It holds the provider-neutral message, tool-spec and tool-call types that the
// workflow stores in its transcript, and the Client interface that the CallModel
// activity calls. Implementations live in sub-packages: model/openai speaks the
// OpenAI Chat Completions wire format to any compatible endpoint, model/script
// answers from a scenario file so that runs and tests need no network.
//
// The types are plain data with JSON tags: they travel through Temporal payloads
// and appear verbatim in the `messages` query, so their JSON shape is part of the
// public contract (docs/protocol.md).
package model

import (
	"context"
	"encoding/json"
	"time"
)

// Roles of a message in the transcript.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the transcript.
//
// Name is empty for ordinary messages; messages that the agent loop injects carry
// the reason they were injected (todo_reminder, todo_completion_reminder, ...).
// ToolCalls is never nil once a message has been normalised, so that the JSON
// output always holds an array.
type Message struct {
	Role       string     `json:"role"`
	Name       string     `json:"name"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
	IsError    bool       `json:"is_error"`
}

// ToolCall is a model's request to run one tool. Arguments is the JSON object
// the model sent; a model that sends something that is not a JSON object gets
// its text wrapped as a JSON string so that nothing is lost and the tool can
// report the problem.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool to the model. Parameters is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	// Model is the provider's model name (for openai) or the scenario reference
	// (for script); the "openai:" or "script:" prefix has been removed.
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// Call is the 1-based number of this model call among the agent's
	// turns' calls in the run (across continue-as-new). The scripted model
	// answers call N with its response N, so a retried or replayed call gets
	// the same answer. A summarising call is none of them: its Call is not
	// to be relied on.
	Call int
	// Summarize says this call writes a summary of the conversation to
	// compact the context, and is not one of the agent's turns. A real model
	// needs no telling (the messages ask for the summary); the scripted
	// model does, so that a scenario's numbered responses answer the
	// agent's calls alone, however often the context is compacted.
	Summarize bool
	// Stream, when not nil, receives the reply's text while the model writes
	// it, one piece at a time and in order, so that a watching client can
	// show it before the call ends. The Response still carries the whole
	// text: Stream is a preview, never the record. A client that cannot
	// stream may call it once with the whole text, or not at all.
	Stream func(delta string)
}

// Response is what the model answered: text, tool calls, or both.
type Response struct {
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls"`
	// Usage is informational; zero when the provider does not report it.
	Usage Usage `json:"usage"`
	// Model is the name of the model that answered, as the worker named it
	// in the request (the CallModel activity sets it): a run whose input
	// names no model learns from it which one the worker's default is, so
	// that its usage can be priced.
	Model string `json:"model,omitempty"`
}

// Usage counts tokens as reported by the provider.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Client calls a model. Implementations must not retry on their own: Temporal
// owns retries, so errors are returned at once and classified with Retryable
// or NonRetryable.
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Error is a classified model error. The CallModel activity turns it into a
// Temporal application error: retryable or not, with the delay the provider
// asked for (Retry-After) as the next retry delay.
type Error struct {
	Retryable  bool
	StatusCode int           // HTTP status, 0 when the request never got an answer
	RetryAfter time.Duration // 0 when the provider gave none
	// ContextOverflow reports that the request does not fit the model's
	// context window: waiting will not help, a shorter request will. It is
	// set apart from other non-retryable errors so that the agent can
	// shorten its transcript and call again instead of failing the run.
	// Retryable is false whenever it is set.
	ContextOverflow bool
	// Message is the whole account of the failure, one sentence naming the
	// model, the endpoint and what the server said; it is what users see.
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }
