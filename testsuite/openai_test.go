package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/testsuite/scenario"
	"github.com/todoflow/todoflow/workflows"
)

// chatServer is an OpenAI-compatible endpoint that answers request N with
// answers[N-1] (a message object) and keeps every request it received.
type chatServer struct {
	mu       sync.Mutex
	answers  []string
	requests []map[string]any
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.mu.Unlock()
	msg := `{"role":"assistant","content":""}`
	if n <= len(s.answers) {
		msg = s.answers[n-1]
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":%s,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, n, msg)
}

// TestRealClientOverHTTP runs an agent with the real openai-go client
// against a local OpenAI-compatible server: the model's tool calls, the
// transcript read back by the activity, and the tool results all cross the
// wire in the real format.
func TestRealClientOverHTTP(t *testing.T) {
	chat := &chatServer{answers: []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"write_todos","arguments":"{\"todos\":[{\"content\":\"Write notes\",\"status\":\"in_progress\"}]}"}}]}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_b","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"notes.md\",\"content\":\"# Notes\\n\"}"}},{"id":"call_c","type":"function","function":{"name":"write_todos","arguments":"{\"todos\":[{\"content\":\"Write notes\",\"status\":\"completed\"}]}"}}]}`,
		`{"role":"assistant","content":"Notes written."}`,
	}}
	srv := httptest.NewServer(chat)
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")

	s := startServer(t)
	s.startWorker(t, t.TempDir())
	sc := &scenario.Scenario{Name: "openai", Input: workflows.AgentInput{Prompt: "Write notes.", Model: "openai:test-model"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := scenario.Play(ctx, s.c, sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.RunStatus != "completed" || out.Reply != "Notes written." {
		t.Fatalf("run %s, reply %q", out.RunStatus, out.Reply)
	}
	if len(chat.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(chat.requests))
	}
	last := chat.requests[2]
	if last["model"] != "test-model" {
		t.Errorf("model = %v", last["model"])
	}
	msgs := last["messages"].([]any)
	first := msgs[0].(map[string]any)
	if first["role"] != "system" || !strings.Contains(fmt.Sprint(first["content"]), "write_todos") {
		t.Errorf("first message = %v", first)
	}
	var toolIDs []string
	for _, m := range msgs {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			toolIDs = append(toolIDs, fmt.Sprint(mm["tool_call_id"]))
		}
	}
	if strings.Join(toolIDs, ",") != "call_a,call_b,call_c" {
		t.Errorf("tool results answer %v, want call_a,call_b,call_c in order", toolIDs)
	}
	var names []string
	for _, tool := range last["tools"].([]any) {
		names = append(names, fmt.Sprint(tool.(map[string]any)["function"].(map[string]any)["name"]))
	}
	for _, want := range []string{"write_todos", "todo_read", "createPlan", "spawn_subagent", "read_file", "write_file", "list_files"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Errorf("tool %s not offered (got %v)", want, names)
		}
	}
}

// TestUnreachableModelFailsClearly: a model endpoint that does not answer
// fails the run after Temporal's retries with a message naming the endpoint.
func TestUnreachableModelFailsClearly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-wrong")
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	sc := &scenario.Scenario{Name: "bad key", Input: workflows.AgentInput{Prompt: "hi", Model: "openai:test-model"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := scenario.Play(ctx, s.c, sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.RunStatus != "failed" || !strings.Contains(out.Error, "401") || !strings.Contains(out.Error, "OPENAI_API_KEY") || strings.Contains(out.Error, "sk-wrong") {
		t.Errorf("run %s, error %q", out.RunStatus, out.Error)
	}
}
