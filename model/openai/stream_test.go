package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

// sse is a text/event-stream body of chunks, each a chat.completion.chunk's
// "choices" and "usage", ended by [DONE].
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(`data: {"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test",` + c + "}\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// streamInto returns a Stream callback and what it received so far.
func streamInto() (func(string), func() []string) {
	var mu sync.Mutex
	var got []string
	return func(d string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, d)
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}
}

func TestCompleteStream(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        string
		wantPieces  []string
		want        model.Response
	}{
		{
			name:        "text in pieces, usage last",
			contentType: "text/event-stream",
			body: sse(
				`"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]`,
				`"choices":[{"index":0,"delta":{"content":"The tests "}}]`,
				`"choices":[{"index":0,"delta":{"content":"pass."}}]`,
				`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]`,
				`"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}`,
			),
			wantPieces: []string{"The tests ", "pass."},
			want:       model.Response{Content: "The tests pass.", ToolCalls: []model.ToolCall{}, Usage: model.Usage{PromptTokens: 12, CompletionTokens: 3}},
		},
		{
			name:        "tool call arguments in pieces are not streamed",
			contentType: "text/event-stream; charset=utf-8",
			body: sse(
				`"choices":[{"index":0,"delta":{"role":"assistant","content":"Reading. "}}]`,
				`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]`,
				`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.go\"}"}}]}}]`,
				`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`,
			),
			wantPieces: []string{"Reading. "},
			want: model.Response{Content: "Reading. ", ToolCalls: []model.ToolCall{
				{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}}},
		},
		{
			name:        "a server that ignores stream answers with one completion",
			contentType: "application/json",
			body:        completion(`{"role":"assistant","content":"Whole answer."}`),
			wantPieces:  []string{"Whole answer."},
			want:        model.Response{Content: "Whole answer.", ToolCalls: []model.ToolCall{}, Usage: model.Usage{PromptTokens: 12, CompletionTokens: 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{header: map[string]string{"Content-Type": tt.contentType}, body: tt.body})
			stream, pieces := streamInto()
			got, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{
				Model: "gpt-test", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, Stream: stream})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if mustJSON(t, got) != mustJSON(t, tt.want) {
				t.Errorf("response = %s, want %s", mustJSON(t, got), mustJSON(t, tt.want))
			}
			if strings.Join(pieces(), "|") != strings.Join(tt.wantPieces, "|") {
				t.Errorf("pieces = %q, want %q", pieces(), tt.wantPieces)
			}
			body := srv.got(t)[0].body
			if body["stream"] != true {
				t.Errorf("request stream = %v, want true", body["stream"])
			}
			if opts, _ := body["stream_options"].(map[string]any); opts["include_usage"] != true {
				t.Errorf("request stream_options = %v, want include_usage", body["stream_options"])
			}
		})
	}
}

// A plain request (no Stream) does not ask for a stream.
func TestCompleteNoStreamAsked(t *testing.T) {
	srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":"ok"}`)})
	if _, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{Model: "gpt-test", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if body := srv.got(t)[0].body; body["stream"] != nil || body["stream_options"] != nil {
		t.Errorf("a plain request sent stream %v, stream_options %v", body["stream"], body["stream_options"])
	}
}

func TestCompleteStreamErrors(t *testing.T) {
	tests := []struct {
		name      string
		reply     reply
		retryable bool
		contains  string
	}{
		{"rate limited before the stream", reply{status: 429, body: `{"error":{"message":"slow down","type":"rate_limit"}}`}, true, "429 Too Many Requests: slow down"},
		{"bad key", reply{status: 401, body: `{"error":{"message":"bad key"}}`}, false, "check OPENAI_API_KEY"},
		{"error event in the stream", reply{header: map[string]string{"Content-Type": "text/event-stream"},
			body: "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}\n\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n"}, true, "broke off"},
		{"a stream without choices", reply{header: map[string]string{"Content-Type": "text/event-stream"}, body: "data: [DONE]\n\n"}, true, "no choices"},
		{"a JSON answer that is not JSON", reply{body: `{"choices": [`}, true, "not a chat completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			stream, _ := streamInto()
			_, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{
				Model: "gpt-test", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, Stream: stream})
			me, ok := err.(*model.Error)
			if !ok {
				t.Fatalf("err = %T %v, want *model.Error", err, err)
			}
			if me.Retryable != tt.retryable || !strings.Contains(me.Message, tt.contains) {
				t.Errorf("err = %q (retryable %v), want retryable %v and %q", me.Message, me.Retryable, tt.retryable, tt.contains)
			}
			if strings.Contains(me.Message, testKey) {
				t.Errorf("the key leaked into %q", me.Message)
			}
		})
	}
}

// Pieces reach the caller while the server is still writing, not at the end.
func TestCompleteStreamIsLive(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		_, _ = w.Write([]byte(`data: {"id":"s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"first "}}]}` + "\n\n"))
		f.Flush()
		<-release
		_, _ = w.Write([]byte(`data: {"id":"s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"second"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	t.Cleanup(srv.Close)
	stream, pieces := streamInto()
	done := make(chan model.Response, 1)
	go func() {
		resp, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{Model: "gpt-test", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, Stream: stream})
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(pieces()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := pieces(); len(got) != 1 || got[0] != "first " {
		t.Fatalf("before the rest was written: pieces %q, want [\"first \"]", got)
	}
	close(release)
	if resp := <-done; resp.Content != "first second" {
		t.Errorf("content = %q", resp.Content)
	}
}
