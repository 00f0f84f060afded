package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model"
)

// TestCompleteContextOverflow pins which error answers mean "the request is
// too long for the model": the OpenAI code, and the wording of compatible
// servers that send no such code. Everything else keeps its ordinary
// classification, so that a plain bad request is not mistaken for one that a
// shorter transcript would fix.
func TestCompleteContextOverflow(t *testing.T) {
	tests := []struct {
		name          string
		reply         reply
		wantOverflow  bool
		wantRetryable bool
		wantIn        string // part of the server's message that must be shown
	}{
		{
			name: "OpenAI code and message",
			reply: reply{status: 400, body: `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
				"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
			wantOverflow: true, wantIn: "maximum context length is 8192",
		},
		{
			name: "code alone decides",
			reply: reply{status: 400, body: `{"error":{"message":"Please reduce the length of the messages or completion.",
				"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
			wantOverflow: true, wantIn: "reduce the length",
		},
		{
			name:         "code in a body the SDK does not decode",
			reply:        reply{status: 400, body: `{"message":"request rejected","code":"context_length_exceeded"}`},
			wantOverflow: true, wantIn: "request rejected",
		},
		{
			name: "vLLM top-level shape",
			reply: reply{status: 400, body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
				"type":"BadRequestError","param":null,"code":400}`},
			wantOverflow: true, wantIn: "maximum context length is 4096",
		},
		{
			name: "vLLM longer than the context length",
			reply: reply{status: 400, body: `{"error":{"message":"The prompt (total length 5000) is longer than the model's context length (4096).",
				"type":"BadRequestError","param":null,"code":400}}`},
			wantOverflow: true, wantIn: "total length 5000",
		},
		{
			name: "vLLM longer than the maximum model length",
			reply: reply{status: 400, body: `{"object":"error","message":"The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that max_model_len is no smaller than the number of text tokens.",
				"type":"BadRequestError","param":null,"code":400}`},
			wantOverflow: true, wantIn: "length 5000",
		},
		{
			name: "llama.cpp server",
			reply: reply{status: 400, body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",
				"type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`},
			wantOverflow: true, wantIn: "available context size",
		},
		{
			name:         "Ollama native error string",
			reply:        reply{status: 400, body: `{"error":"prompt too long; exceeded max context length by 12 tokens"}`},
			wantOverflow: true, wantIn: "by 12 tokens",
		},
		{
			name:         "Ollama OpenAI-compatible",
			reply:        reply{status: 400, body: `{"error":{"message":"input length exceeds maximum context length","type":"api_error","param":null,"code":null}}`},
			wantOverflow: true, wantIn: "input length",
		},
		{
			name:         "Anthropic-compatible",
			reply:        reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`},
			wantOverflow: true, wantIn: "210000 tokens",
		},
		{
			name:         "too many tokens",
			reply:        reply{status: 400, body: `{"error":{"message":"Too many tokens in the request.","type":"invalid_request_error"}}`},
			wantOverflow: true, wantIn: "Too many tokens",
		},
		{
			name:         "413 with the code",
			reply:        reply{status: 413, body: `{"error":{"message":"Request too large for the model.","code":"context_length_exceeded"}}`},
			wantOverflow: true, wantIn: "Request too large",
		},
		{
			name:   "413 from a proxy says nothing about the model",
			reply:  reply{status: 413, header: map[string]string{"Content-Type": "text/html"}, body: "<html>413 Request Entity Too Large</html>"},
			wantIn: "Request Entity Too Large",
		},
		{
			name:   "400 with another message stays a plain bad request",
			reply:  reply{status: 400, body: `{"error":{"message":"Invalid value for 'temperature': must be at most 2.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`},
			wantIn: "Invalid value for 'temperature'",
		},
		{
			name: "429 about tokens is a reason to wait",
			reply: reply{status: 429, body: `{"error":{"message":"Too many tokens per minute: limit 10000, used 9000, requested 2000.",
				"type":"tokens","code":"rate_limit_exceeded"}}`},
			wantRetryable: true, wantIn: "limit 10000",
		},
		{
			name:          "500 is retried whatever it says",
			reply:         reply{status: 500, body: `{"error":{"message":"maximum context length computation failed"}}`},
			wantRetryable: true, wantIn: "computation failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			_, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{
				Model:    "gpt-test",
				Call:     1,
				Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
			})
			var me *model.Error
			if !errors.As(err, &me) {
				t.Fatalf("error = %#v, want *model.Error", err)
			}
			if me.ContextOverflow != tt.wantOverflow {
				t.Errorf("ContextOverflow = %v, want %v (%s)", me.ContextOverflow, tt.wantOverflow, me.Message)
			}
			if me.Retryable != tt.wantRetryable {
				t.Errorf("Retryable = %v, want %v (%s)", me.Retryable, tt.wantRetryable, me.Message)
			}
			if me.StatusCode != tt.reply.status {
				t.Errorf("StatusCode = %d, want %d", me.StatusCode, tt.reply.status)
			}
			if !strings.Contains(me.Message, tt.wantIn) {
				t.Errorf("message %q does not quote the server's %q", me.Message, tt.wantIn)
			}
			if says := strings.Contains(me.Message, "context window"); says != tt.wantOverflow {
				t.Errorf("message %q: mentions the context window = %v, want %v", me.Message, says, tt.wantOverflow)
			}
		})
	}
}
