package testsuite

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/scenario"
)

// TestRealClientOverHTTP runs an agent with the real openai-go client
// against a local OpenAI-compatible server: the model's tool calls, the
// transcript read back by the activity, and the tool results all cross the
// wire in the real format.
func TestRealClientOverHTTP(t *testing.T) {
	chat := newModelStub(t,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"write_todos","arguments":"{\"todos\":[{\"content\":\"Write notes\",\"status\":\"in_progress\"}]}"}}]}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_b","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"notes.md\",\"content\":\"# Notes\\n\"}"}},{"id":"call_c","type":"function","function":{"name":"write_todos","arguments":"{\"todos\":[{\"content\":\"Write notes\",\"status\":\"completed\"}]}"}}]}`,
		`{"role":"assistant","content":"Notes written."}`,
	)
	t.Setenv("OPENAI_BASE_URL", chat.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")

	s := startServer(t)
	s.startWorker(t, t.TempDir())
	sc := &scenario.Scenario{Name: "openai", Input: api.AgentInput{Prompt: "Write notes.", Model: "openai:test-model"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := scenario.Play(ctx, s.c, sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.RunStatus != "completed" || out.Reply != "Notes written." {
		t.Fatalf("run %s, reply %q", out.RunStatus, out.Reply)
	}
	reqs := chat.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	last := reqs[2].body
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

// TestUnreachableModelFailsClearly: a model endpoint that rejects the key
// ends the turn at once (waiting will not fix it) with a reply that names
// the endpoint and the variable to fix, never the key; the session survives
// the turn, so the run completes when it ends.
func TestUnreachableModelFailsClearly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-wrong")
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	sc := &scenario.Scenario{Name: "bad key", Input: api.AgentInput{Prompt: "hi", Model: "openai:test-model"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := scenario.Play(ctx, s.c, sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := decodeState(t, out)
	if out.RunStatus != "completed" || !strings.Contains(out.Reply, "401") || !strings.Contains(out.Reply, "OPENAI_API_KEY") || strings.Contains(out.Reply, "sk-wrong") {
		t.Errorf("run %s, reply %q", out.RunStatus, out.Reply)
	}
	if st.ModelError == nil || st.ModelError.Retryable || st.ModelError.Attempts != 1 || strings.Contains(st.ModelError.Message, "sk-wrong") {
		t.Errorf("model_error = %+v", st.ModelError)
	}
}
