package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

const testKey = "sk-test-secret-0123456789"

// fakeServer is an OpenAI-compatible endpoint on loopback that records what
// it was sent and answers with a canned status, headers and body.
type fakeServer struct {
	*httptest.Server

	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   map[string]any
}

type reply struct {
	status int
	header map[string]string
	body   string
}

func newFakeServer(t *testing.T, r reply) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		data, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("reading request body: %v", err)
		}
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, data)
		}
		f.mu.Lock()
		f.requests = append(f.requests, recorded{path: req.URL.Path, header: req.Header.Clone(), body: body})
		f.mu.Unlock()

		for k, v := range r.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		status := r.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, r.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) got(t *testing.T) []recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func newTestClient(t *testing.T, baseURL string) *Client {
	t.Helper()
	c, err := New(Options{APIKey: testKey, BaseURL: baseURL + "/v1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// completion builds a real chat.completion body with one choice.
func completion(message string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test",
	"choices":[{"index":0,"message":` + message + `,"logprobs":null,"finish_reason":"stop"}],
	"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`
}

// jsonEqual compares two JSON texts structurally.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v: %s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCompleteText(t *testing.T) {
	srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":"Hello there.","refusal":null}`)})
	c := newTestClient(t, srv.URL)

	resp, err := c.Complete(context.Background(), model.Request{
		Model: "gpt-test",
		Call:  1,
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are helpful."},
			{Role: model.RoleUser, Content: "Hi"},
			{Role: model.RoleUser, Name: "todo_reminder", Content: "Your list: ..."},
		},
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := model.Response{
		Content:   "Hello there.",
		ToolCalls: []model.ToolCall{},
		Usage:     model.Usage{PromptTokens: 12, CompletionTokens: 3},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}

	reqs := srv.got(t)
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.path != "/v1/chat/completions" {
		t.Errorf("path = %q", r.path)
	}
	if got := r.header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if r.body["model"] != "gpt-test" {
		t.Errorf("model = %v", r.body["model"])
	}
	if _, ok := r.body["tools"]; ok {
		t.Errorf("tools sent although none were given: %v", r.body["tools"])
	}
	// The injected user message goes out as plain user content, no name.
	wantMsgs := `[
		{"role":"system","content":"You are helpful."},
		{"role":"user","content":"Hi"},
		{"role":"user","content":"Your list: ..."}]`
	if got := mustJSON(t, r.body["messages"]); !jsonEqual(t, got, wantMsgs) {
		t.Errorf("messages = %s\nwant %s", got, wantMsgs)
	}
}

func TestCompleteToolCallRoundTrip(t *testing.T) {
	srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":null,"refusal":null,
		"tool_calls":[
		  {"id":"call_abc","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"main.go\"}"}},
		  {"id":"call_def","type":"function","function":{"name":"todo_read","arguments":""}}]}`)})
	c := newTestClient(t, srv.URL)

	schema := `{"type":"object","properties":{"path":{"type":"string","maxLength":12345678901234567890}},"required":["path"]}`
	req := model.Request{
		Model: "gpt-test",
		Call:  3,
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "Read it"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "list_files", Arguments: json.RawMessage(`{"dir":"."}`)},
				{ID: "call_2", Name: "write_todos", Arguments: json.RawMessage(`"{broken"`)},
			}},
			{Role: model.RoleTool, ToolCallID: "call_1", Content: "main.go"},
			{Role: model.RoleTool, ToolCallID: "call_2", Content: "arguments are not a JSON object", IsError: true},
			{Role: model.RoleAssistant, Content: "Let me look."},
		},
		Tools: []model.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(schema)},
			{Name: "todo_read"},
		},
	}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := []model.ToolCall{
		{ID: "call_abc", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)},
		{ID: "call_def", Name: "todo_read", Arguments: json.RawMessage(`{}`)},
	}
	if resp.Content != "" || !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("response = %+v, want tool calls %+v", resp, want)
	}

	reqs := srv.got(t)
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	// Arguments travel as strings; the wrapped malformed ones are unwrapped
	// so the model sees exactly what it sent.
	wantMsgs := `[
		{"role":"user","content":"Read it"},
		{"role":"assistant","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"list_files","arguments":"{\"dir\":\".\"}"}},
			{"id":"call_2","type":"function","function":{"name":"write_todos","arguments":"{broken"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"main.go"},
		{"role":"tool","tool_call_id":"call_2","content":"arguments are not a JSON object"},
		{"role":"assistant","content":"Let me look."}]`
	if got := mustJSON(t, reqs[0].body["messages"]); !jsonEqual(t, got, wantMsgs) {
		t.Errorf("messages = %s\nwant %s", got, wantMsgs)
	}
	wantTools := `[
		{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":` + schema + `}},
		{"type":"function","function":{"name":"todo_read","parameters":{"type":"object","properties":{}}}}]`
	if got := mustJSON(t, reqs[0].body["tools"]); !jsonEqual(t, got, wantTools) {
		t.Errorf("tools = %s\nwant %s", got, wantTools)
	}
}

func TestCompleteArguments(t *testing.T) {
	tests := []struct {
		name     string
		toolCall string // one element of the wire tool_calls array
		want     model.ToolCall
	}{
		{
			name:     "object",
			toolCall: `{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\": [1, 2]}"}}`,
			want:     model.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a": [1, 2]}`)},
		},
		{
			name:     "empty becomes {}",
			toolCall: `{"id":"c1","type":"function","function":{"name":"f","arguments":""}}`,
			want:     model.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{}`)},
		},
		{
			name:     "not JSON is wrapped",
			toolCall: `{"id":"c1","type":"function","function":{"name":"f","arguments":"path=main.go"}}`,
			want:     model.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`"path=main.go"`)},
		},
		{
			name:     "truncated object is wrapped",
			toolCall: `{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"path\":"}}`,
			want:     model.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`"{\"path\":"`)},
		},
		{
			name:     "array is wrapped",
			toolCall: `{"id":"c1","type":"function","function":{"name":"f","arguments":"[1,2]"}}`,
			want:     model.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`"[1,2]"`)},
		},
		{
			name:     "object sent unquoted by a lax server",
			toolCall: `{"id":"c1","type":"function","function":{"name":"f","arguments":{"a":1}}}`,
			want:     model.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)},
		},
		{
			name:     "missing id is derived from the call number",
			toolCall: `{"type":"function","function":{"name":"f","arguments":"{}"}}`,
			want:     model.ToolCall{ID: "call_7_0", Name: "f", Arguments: json.RawMessage(`{}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":null,"tool_calls":[` + tt.toolCall + `]}`)})
			resp, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{Model: "m", Call: 7})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if len(resp.ToolCalls) != 1 {
				t.Fatalf("tool calls = %+v, want one", resp.ToolCalls)
			}
			got := resp.ToolCalls[0]
			if got.ID != tt.want.ID || got.Name != tt.want.Name || string(got.Arguments) != string(tt.want.Arguments) {
				t.Errorf("tool call = {%s %s %s}, want {%s %s %s}",
					got.ID, got.Name, got.Arguments, tt.want.ID, tt.want.Name, tt.want.Arguments)
			}
			if !json.Valid(got.Arguments) {
				t.Errorf("arguments %s are not valid JSON", got.Arguments)
			}
		})
	}
}

func TestCompleteRefusal(t *testing.T) {
	srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":null,"refusal":"I can't help with that."}`)})
	resp, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{Model: "m", Call: 1})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Content != "I can't help with that." {
		t.Errorf("content = %q, want the refusal", resp.Content)
	}
}

func TestCompleteHTTPErrors(t *testing.T) {
	future := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name          string
		reply         reply
		wantRetryable bool
		// wantRetryAfter is checked exactly unless retryAfterAbout is set,
		// then as an upper bound with a lower bound of half.
		wantRetryAfter  time.Duration
		retryAfterAbout bool
		wantIn          []string
		wantNotIn       []string
	}{
		{
			name: "429 with Retry-After seconds",
			reply: reply{status: 429, header: map[string]string{"Retry-After": "7"},
				body: `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`},
			wantRetryable: true, wantRetryAfter: 7 * time.Second,
			wantIn: []string{"429", "Rate limit reached"},
		},
		{
			name: "429 with retry-after-ms preferred",
			reply: reply{status: 429, header: map[string]string{"Retry-After": "7", "retry-after-ms": "1500"},
				body: `{"error":{"message":"slow down"}}`},
			wantRetryable: true, wantRetryAfter: 1500 * time.Millisecond,
		},
		{
			name: "503 with Retry-After date",
			reply: reply{status: 503, header: map[string]string{"Retry-After": future},
				body: `{"error":{"message":"overloaded"}}`},
			wantRetryable: true, wantRetryAfter: 30 * time.Second, retryAfterAbout: true,
			wantIn: []string{"503", "overloaded"},
		},
		{
			name:          "500 without Retry-After",
			reply:         reply{status: 500, body: `{"error":{"message":"The server had an error","type":"server_error"}}`},
			wantRetryable: true,
			wantIn:        []string{"500", "The server had an error", "gpt-test"},
		},
		{
			name:          "502 from a proxy with an HTML page",
			reply:         reply{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: "<html>" + strings.Repeat("x", 2000) + "</html>"},
			wantRetryable: true,
			wantIn:        []string{"502", "<html>", "…"},
		},
		{
			name:          "408",
			reply:         reply{status: 408, body: `{"error":{"message":"timeout"}}`},
			wantRetryable: true,
		},
		{
			name:          "409",
			reply:         reply{status: 409, body: `{"error":{"message":"conflict"}}`},
			wantRetryable: true,
		},
		{
			name: "401 points at the key and never shows it",
			reply: reply{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + testKey +
				`. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`},
			wantIn:    []string{"401", "OPENAI_API_KEY", "Incorrect API key provided"},
			wantNotIn: []string{testKey, "sk-test"},
		},
		{
			name:      "401 with a masked key",
			reply:     reply{status: 401, body: `{"error":{"message":"Incorrect API key provided: sk-test-s****6789."}}`},
			wantIn:    []string{"OPENAI_API_KEY"},
			wantNotIn: []string{"sk-test", "6789"},
		},
		{
			name:   "403",
			reply:  reply{status: 403, body: `{"error":{"message":"Country, region, or territory not supported"}}`},
			wantIn: []string{"403", "OPENAI_API_KEY", "not supported"},
		},
		{
			name: "400 shows the server message",
			reply: reply{status: 400, body: `{"error":{"message":"This model's maximum context length is 8192 tokens.",
				"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
			wantIn: []string{"400", "maximum context length is 8192"},
		},
		{
			name:   "404 plain text",
			reply:  reply{status: 404, header: map[string]string{"Content-Type": "text/plain"}, body: "404 page not found"},
			wantIn: []string{"404", "404 page not found"},
		},
		{
			name:   "400 vLLM shape",
			reply:  reply{status: 400, body: `{"object":"error","message":"The model does-not-exist does not exist.","type":"NotFoundError","code":404}`},
			wantIn: []string{"400", "does-not-exist does not exist"},
		},
		{
			name:   "400 error as a plain string",
			reply:  reply{status: 400, body: `{"error":"model 'llama9' not found"}`},
			wantIn: []string{"400", "model 'llama9' not found"},
		},
		{
			name:          "500 error as a plain string",
			reply:         reply{status: 500, header: map[string]string{"Retry-After": "2"}, body: `{"error":"out of memory"}`},
			wantRetryable: true, wantRetryAfter: 2 * time.Second,
			wantIn: []string{"500", "out of memory"},
		},
		// Found by FuzzComplete: the server's message, when it came in the
		// JSON shape, was neither cut nor made valid UTF-8.
		{
			name:          "a long message in the usual shape is cut",
			reply:         reply{status: 503, body: `{"error":{"message":"` + strings.Repeat("overloaded ", 1000) + `"}}`},
			wantRetryable: true,
			wantIn:        []string{"503", "overloaded overloaded", "…"},
		},
		{
			name:   "broken UTF-8 in a plain body",
			reply:  reply{status: 400, header: map[string]string{"Content-Type": "text/plain"}, body: "bad \xff\xfe request"},
			wantIn: []string{"bad \uFFFD request"},
		},
		{
			name:   "a status without a name",
			reply:  reply{status: 488, header: map[string]string{"Content-Type": "text/plain"}},
			wantIn: []string{`at http://127.0.0.1`, ": 488: no message"},
		},
		// Found by FuzzComplete: a 2xx answer whose body is no chat
		// completion was reported as no answer, in the decoder's Go words.
		{
			name:          "200 with a body that is no object",
			reply:         reply{status: 200, body: `[1, 2]`},
			wantRetryable: true,
			wantIn:        []string{"the answer (HTTP 200) is not a chat completion: its body is a JSON array, not an object"},
			wantNotIn:     []string{"Go value", "cannot get an answer"},
		},
		{
			name:          "200 with a broken body",
			reply:         reply{status: 200, body: `{"choices": [`},
			wantRetryable: true,
			wantIn:        []string{"the answer (HTTP 200) is not a chat completion: its body"},
		},
		{
			name:          "200 with an HTML page",
			reply:         reply{status: 200, header: map[string]string{"Content-Type": "text/html"}, body: "<html>Sign in to the proxy</html>"},
			wantRetryable: true,
			wantIn:        []string{`the answer (HTTP 200) is not a chat completion: its content type is "text/html", not JSON`},
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
			if me.Retryable != tt.wantRetryable {
				t.Errorf("Retryable = %v, want %v (%s)", me.Retryable, tt.wantRetryable, me.Message)
			}
			if me.StatusCode != tt.reply.status {
				t.Errorf("StatusCode = %d, want %d", me.StatusCode, tt.reply.status)
			}
			if tt.retryAfterAbout {
				if me.RetryAfter > tt.wantRetryAfter || me.RetryAfter < tt.wantRetryAfter/2 {
					t.Errorf("RetryAfter = %v, want about %v", me.RetryAfter, tt.wantRetryAfter)
				}
			} else if me.RetryAfter != tt.wantRetryAfter {
				t.Errorf("RetryAfter = %v, want %v", me.RetryAfter, tt.wantRetryAfter)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(me.Message, s) {
					t.Errorf("message %q does not contain %q", me.Message, s)
				}
			}
			for _, s := range tt.wantNotIn {
				if strings.Contains(me.Message, s) || strings.Contains(err.Error(), s) {
					t.Errorf("message %q contains %q", me.Message, s)
				}
			}
			// Temporal owns retries: one Complete, one HTTP request.
			if n := len(srv.got(t)); n != 1 {
				t.Errorf("%d HTTP requests, want exactly 1", n)
			}
		})
	}
}

func TestCompleteNoChoices(t *testing.T) {
	srv := newFakeServer(t, reply{body: `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m","choices":[]}`})
	_, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{Model: "m", Call: 1})
	var me *model.Error
	if !errors.As(err, &me) || !me.Retryable || !errors.Is(err, errNoChoices) {
		t.Fatalf("error = %v, want a retryable *model.Error wrapping errNoChoices", err)
	}
	if !strings.Contains(me.Message, "no choices") {
		t.Errorf("message = %q", me.Message)
	}
	if n := len(srv.got(t)); n != 1 {
		t.Errorf("%d HTTP requests, want exactly 1", n)
	}
}

func TestCompleteTransportErrors(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL + "/v1"
		srv.Close() // nothing listens there any more

		_, err := newTestClient(t, srv.URL).Complete(context.Background(), model.Request{Model: "m", Call: 1})
		var me *model.Error
		if !errors.As(err, &me) {
			t.Fatalf("error = %#v, want *model.Error", err)
		}
		if !me.Retryable || me.StatusCode != 0 {
			t.Errorf("Retryable=%v StatusCode=%d, want retryable with no status", me.Retryable, me.StatusCode)
		}
		if !strings.Contains(me.Message, base) {
			t.Errorf("message %q does not name the base URL %q", me.Message, base)
		}
	})

	t.Run("request timeout", func(t *testing.T) {
		srv := hangingServer(t)
		c, err := New(Options{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), model.Request{Model: "m", Call: 1})
		var me *model.Error
		if !errors.As(err, &me) || !me.Retryable {
			t.Fatalf("error = %v, want a retryable *model.Error", err)
		}
		if !strings.Contains(me.Message, srv.URL) || !strings.Contains(me.Message, "50ms") {
			t.Errorf("message %q does not name the base URL and the timeout", me.Message)
		}
	})

	t.Run("caller cancels", func(t *testing.T) {
		srv := hangingServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := newTestClient(t, srv.URL).Complete(ctx, model.Request{Model: "m", Call: 1})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want one wrapping context.Canceled", err)
		}
	})
}

// hangingServer never answers, until the client gives up or the test ends.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client that hung up only once the body has
		// been read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return srv
}

func TestCompleteRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name   string
		req    model.Request
		wantIn string
	}{
		{"no model", model.Request{Call: 1}, "no model name"},
		{"unknown role", model.Request{Model: "m", Messages: []model.Message{{Role: "robot"}}}, `messages[0]: unknown role "robot"`},
		{"tool message without id", model.Request{Model: "m", Messages: []model.Message{
			{Role: model.RoleUser}, {Role: model.RoleTool, Content: "x"}}}, "messages[1]: tool message has no tool_call_id"},
		{"schema not an object", model.Request{Model: "m", Tools: []model.ToolSpec{
			{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, "tools[0] (t): parameters must be a JSON Schema object"},
		{"tool without name", model.Request{Model: "m", Tools: []model.ToolSpec{{}}}, "tool has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":"x"}`)})
			_, err := newTestClient(t, srv.URL).Complete(context.Background(), tt.req)
			var me *model.Error
			if !errors.As(err, &me) || me.Retryable {
				t.Fatalf("error = %v, want a non-retryable *model.Error", err)
			}
			if !strings.Contains(me.Message, tt.wantIn) {
				t.Errorf("message %q does not contain %q", me.Message, tt.wantIn)
			}
			if n := len(srv.got(t)); n != 0 {
				t.Errorf("%d HTTP requests for an invalid request, want 0", n)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "20"}, 20 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"milliseconds win", map[string]string{"Retry-After": "20", "Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"Retry-After": "3", "Retry-After-Ms": "soon"}, 3 * time.Second},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"HTTP date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}
