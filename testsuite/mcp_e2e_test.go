package testsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// runOrdersServer is the stdio MCP server "orders" (see TestMain).
func runOrdersServer(ctx context.Context) error {
	s := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1"}, nil)
	type lookupArgs struct {
		ID string `json:"id" jsonschema:"the order's id"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "lookup", Description: "Look up an order."}, func(_ context.Context, _ *sdk.CallToolRequest, in lookupArgs) (*sdk.CallToolResult, any, error) {
		if in.ID != "A1" {
			return nil, nil, fmt.Errorf("order %s does not exist", in.ID)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "order A1: 2 widgets, shipped"}}}, nil, nil
	})
	// crash_once dies in the middle of its first call (the marker file
	// says whether it did already), as a server that crashes does; it
	// says it is idempotent, so the call is sent again. charge_once does
	// the same and says nothing of itself: it may not be sent a call twice.
	crashOnce := func(marker string) sdk.ToolHandlerFor[struct{}, any] {
		return func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			if _, err := os.Stat(marker); errors.Is(err, os.ErrNotExist) {
				if err := os.WriteFile(marker, []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
					return nil, nil, err
				}
				os.Exit(3)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("recovered after restart (pid %d)", os.Getpid())}}}, nil, nil
		}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "crash_once", Description: "Crash the first time.", Annotations: &sdk.ToolAnnotations{IdempotentHint: true}},
		crashOnce(os.Getenv("E2E_CRASH_MARKER")))
	sdk.AddTool(s, &sdk.Tool{Name: "charge_once", Description: "Charge a card; crash the first time."}, crashOnce(os.Getenv("E2E_CRASH_MARKER")+".charge"))
	// import takes ms milliseconds, reporting its progress every 200 ms.
	type importArgs struct {
		Ms int `json:"ms"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "import", Description: "Import the orders.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, in importArgs) (*sdk.CallToolResult, any, error) {
			steps := max(in.Ms/200, 1)
			for i := 1; i <= steps; i++ {
				time.Sleep(200 * time.Millisecond)
				if token := req.Params.GetProgressToken(); token != nil {
					p := &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(steps), Message: fmt.Sprintf("order %d of %d", i, steps)}
					if err := req.Session.NotifyProgress(ctx, p); err != nil {
						return nil, nil, err
					}
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("imported %d orders", steps)}}}, nil, nil
		})
	return s.Run(ctx, &sdk.StdioTransport{})
}

// billingHandler is the Streamable HTTP MCP server "billing"; it wants the
// bearer token.
func billingHandler(token string) http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "billing", Version: "1"}, nil)
	type invoiceArgs struct {
		Order string `json:"order"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "invoice", Description: "The invoice of an order."}, func(_ context.Context, _ *sdk.CallToolRequest, in invoiceArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "invoice for " + in.Order + ": 20 EUR"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// toolCalls is an assistant message of the stub's script calling tools,
// each given as id, name and arguments.
func toolCalls(t *testing.T, calls ...[3]string) string {
	t.Helper()
	var list []map[string]any
	for _, c := range calls {
		list = append(list, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	return mustJSON(t, map[string]any{"role": "assistant", "content": nil, "tool_calls": list})
}

// offered returns the tools of a recorded request, by name.
func offered(r stubRequest) map[string]map[string]any {
	out := make(map[string]map[string]any)
	tools, _ := r.body["tools"].([]any)
	for _, tool := range tools {
		fn, _ := tool.(map[string]any)["function"].(map[string]any)
		out[fmt.Sprint(fn["name"])] = fn
	}
	return out
}

// toolResults returns the tool messages of a recorded request by call id.
func toolResults(r stubRequest) map[string]string {
	out := make(map[string]string)
	msgs, _ := r.body["messages"].([]any)
	for _, m := range msgs {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			out[fmt.Sprint(mm["tool_call_id"])] = fmt.Sprint(mm["content"])
		}
	}
	return out
}

// transcriptErrors returns is_error of the run's tool messages by call id.
func transcriptErrors(t *testing.T, out *scenario.Output) map[string]bool {
	t.Helper()
	errs := make(map[string]bool)
	for _, raw := range out.Messages {
		var m struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			IsError    bool   `json:"is_error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m.Role == "tool" {
			errs[m.ToolCallID] = m.IsError
		}
	}
	return errs
}

// TestMCPServers runs agents whose model (the OpenAI-compatible stub, through
// the real openai-go client) is offered the tools of a stdio and a Streamable
// HTTP MCP server, calls them, and reads their results: a plain result, an
// isError result, a server that crashes mid-call (started again), a tool the
// run does not allow, and an HTTP server that is down (tried again for a
// bounded time, then an error tool message; the run goes on).
func TestMCPServers(t *testing.T) {
	const token = "e2e-billing-s3cret"
	stub := newModelStub(t,
		// Run 1.
		toolCalls(t, [3]string{"call_1", "mcp__orders__lookup", `{"id":"A1"}`}, [3]string{"call_2", "mcp__billing__invoice", `{"order":"A1"}`}),
		toolCalls(t, [3]string{"call_3", "mcp__orders__lookup", `{"id":"B2"}`}),
		toolCalls(t, [3]string{"call_4", "mcp__orders__crash_once", `{}`}),
		toolCalls(t, [3]string{"call_4b", "mcp__orders__charge_once", `{}`}),
		toolCalls(t, [3]string{"call_5", "write_file", `{"path":"x.txt","content":"not allowed"}`}),
		assistantText("Run 1 done."),
		// Run 2, with the HTTP server down.
		toolCalls(t, [3]string{"call_6", "mcp__billing__invoice", `{"order":"A1"}`}),
		assistantText("Run 2 done."),
		// Run 3, asking for approval of destructive calls.
		toolCalls(t, [3]string{"call_7", "mcp__orders__import", `{"ms":0}`}, [3]string{"call_8", "mcp__orders__lookup", `{"id":"A1"}`}),
		assistantText("Run 3 done."),
	)
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	t.Setenv("E2E_BILLING_TOKEN", token)

	billing := httptest.NewServer(billingHandler(token))
	t.Cleanup(func() { billing.CloseClientConnections(); billing.Close() })
	dir := t.TempDir()
	cfg := map[string]any{"mcpServers": map[string]any{
		"orders": map[string]any{
			"command": os.Args[0],
			"env":     map[string]string{mcpServerEnv: "stdio", "E2E_CRASH_MARKER": filepath.Join(dir, "crashed")},
		},
		"billing": map[string]any{
			"url":     billing.URL + "/mcp",
			"headers": map[string]string{"Authorization": "Bearer ${E2E_BILLING_TOKEN}"},
		},
	}}
	s := startServer(t)
	s.startMCPWorker(t, cfg)

	play := func(sc *scenario.Scenario) *scenario.Output {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := scenario.Play(ctx, s.c, sc, scenario.Options{Progress: testWriter{t}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	out := play(&scenario.Scenario{Name: "mcp", Input: api.AgentInput{
		Prompt: "Check order A1.", Model: "openai:test-model", Tools: []string{"mcp__*"},
	}})
	if out.RunStatus != "completed" || out.Reply != "Run 1 done." {
		t.Fatalf("run 1: %s, reply %q", out.RunStatus, out.Reply)
	}
	reqs := stub.requests()
	if len(reqs) != 6 {
		t.Fatalf("run 1 made %d model requests, want 6", len(reqs))
	}

	// The request offers the MCP tools with their schemas, the workflow's
	// own tools, and none of the worker's tools that "mcp__*" leaves out.
	tools := offered(reqs[0])
	for _, name := range []string{"mcp__orders__lookup", "mcp__orders__crash_once", "mcp__billing__invoice", "write_todos"} {
		if tools[name] == nil {
			t.Errorf("tool %s not offered; offered: %v", name, slices.Sorted(mapsKeys(tools)))
		}
	}
	for _, name := range []string{"write_file", "read_file", "list_files"} {
		if tools[name] != nil {
			t.Errorf("tool %s offered to a run whose tools are mcp__*", name)
		}
	}
	if params, _ := tools["mcp__orders__lookup"]["parameters"].(map[string]any); params == nil || params["properties"].(map[string]any)["id"] == nil {
		t.Errorf("lookup's parameters = %v, want the server's schema with id", tools["mcp__orders__lookup"]["parameters"])
	}

	// Each result reaches the model in the next request.
	for _, tt := range []struct {
		req     int
		call    string
		want    string
		isError bool
	}{
		{1, "call_1", "order A1: 2 widgets, shipped", false},
		{1, "call_2", "invoice for A1: 20 EUR", false},
		{2, "call_3", "order B2 does not exist", true},
		{3, "call_4", "recovered after restart", false},
		// The server died in the call; it may have charged: not sent again.
		{4, "call_4b", "mcp__orders__charge_once may or may not have taken effect", true},
		{5, "call_5", `tool "write_file" is not allowed in this run; it may use mcp__*`, true},
	} {
		if got := toolResults(reqs[tt.req])[tt.call]; !strings.Contains(got, tt.want) {
			t.Errorf("request %d: result of %s = %q, want %q", tt.req+1, tt.call, got, tt.want)
		}
		if got := transcriptErrors(t, out)[tt.call]; got != tt.isError {
			t.Errorf("%s: is_error %v, want %v", tt.call, got, tt.isError)
		}
	}
	crashed, err := os.ReadFile(filepath.Join(dir, "crashed"))
	if err != nil || strings.Contains(toolResults(reqs[3])["call_4"], "pid "+string(crashed)+")") {
		t.Errorf("the server that crashed (pid %s, %v) answered after the crash: %q", crashed, err, toolResults(reqs[3])["call_4"])
	}
	if got := toolResults(reqs[4])["call_4b"]; strings.Contains(got, "recovered") || !strings.Contains(got, "Check whether it took effect") {
		t.Errorf("charge_once was sent again, or the model is not told to check: %q", got)
	}

	// Run 2: the HTTP server is down. Its tools are still offered (known
	// from before); the call is tried for a bounded time, then the model
	// gets an error tool message and the run goes on.
	billing.CloseClientConnections()
	billing.Close()
	start := time.Now()
	out = play(&scenario.Scenario{Name: "mcp down", Input: api.AgentInput{Prompt: "Invoice A1.", Model: "openai:test-model"}})
	took := time.Since(start)
	if out.RunStatus != "completed" || out.Reply != "Run 2 done." {
		t.Fatalf("run 2: %s, reply %q", out.RunStatus, out.Reply)
	}
	reqs = stub.requests()
	if len(reqs) != 8 {
		t.Fatalf("%d model requests in all, want 8", len(reqs))
	}
	if tools := offered(reqs[6]); tools["mcp__billing__invoice"] == nil || tools["write_file"] == nil {
		t.Errorf("run 2 (no restriction) was offered %v", slices.Sorted(mapsKeys(tools)))
	}
	got := toolResults(reqs[7])["call_6"]
	if !strings.Contains(got, "mcp__billing__invoice failed") || !strings.Contains(got, "MCP server billing") || !strings.Contains(got, "connection refused") {
		t.Errorf("result of a call to the server that is down = %q", got)
	}
	if !transcriptErrors(t, out)["call_6"] {
		t.Error("call_6 is not an error tool message")
	}
	t.Logf("run 2, with the HTTP server down, took %s", took.Round(time.Millisecond))

	// The token was used, never recorded.
	for i, r := range reqs {
		if b, _ := json.Marshal(r.body); strings.Contains(string(b), token) {
			t.Errorf("request %d holds the billing token", i+1)
		}
	}
	for _, m := range out.Messages {
		if strings.Contains(string(m), token) {
			t.Error("the transcript holds the billing token")
		}
	}

	// Run 3: with approval "destructive", lookup (which says nothing of
	// itself, so may destroy) waits for the approval the scenario gives;
	// import (read-only) runs at once. A run whose call waited with no
	// action left would end with an error.
	sc := &scenario.Scenario{Name: "mcp destructive", Input: api.AgentInput{
		Prompt: "Import, then look up A1.", Model: "openai:test-model", Tools: []string{"mcp__orders__*"},
		Approval: todo.ToolApproval{"*": todo.ApprovalDestructive},
	}, User: []scenario.Action{{When: api.StatusAwaitingApproval, Update: api.ApproveToolUpdate, Args: json.RawMessage(`{"approved": true}`)}}}
	if out = play(sc); out.RunStatus != "completed" || out.Reply != "Run 3 done." {
		t.Fatalf("run 3: %s, reply %q", out.RunStatus, out.Reply)
	}
	results := toolResults(stub.requests()[9])
	if results["call_7"] != "imported 1 orders" || results["call_8"] != "order A1: 2 widgets, shipped" {
		t.Errorf("run 3's results = %q", results)
	}
	// The tool activities: import, lookup held, lookup approved.
	var held []string
	it := s.c.GetWorkflowHistory(context.Background(), out.WorkflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && strings.HasPrefix(a.GetActivityType().GetName(), "RunTool") {
			b, _ := proto.Marshal(a.GetInput())
			held = append(held, fmt.Sprintf("%s hold=%v", ev.GetUserMetadata().GetSummary().GetData(), strings.Contains(string(b), `"hold_destructive":true`)))
		}
	}
	want := []string{`"main: mcp__orders__import" hold=true`, `"main: mcp__orders__lookup" hold=true`, `"main: mcp__orders__lookup" hold=false`}
	if !slices.Equal(held, want) {
		t.Errorf("run 3's tool activities %q, want %q", held, want)
	}
}

// startMCPWorker starts a worker whose MCP configuration is cfg (the
// mcpServers file, as JSON); it stops when the test ends.
func (s *server) startMCPWorker(t *testing.T, cfg map[string]any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(mustJSON(t, cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := agentworker.New(s.c, agentworker.Options{ScriptDir: "/", StateDir: t.TempDir(), MCPConfig: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// An MCP tool's progress notifications reach the running call's heartbeat,
// where a client watching the session sees them (ToolsChanged), and never
// the run's history.
func TestMCPProgress(t *testing.T) {
	stub := newModelStub(t, toolCalls(t, [3]string{"call_1", "mcp__orders__import", `{"ms": 8000}`}), assistantText("Imported."))
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startServer(t)
	s.startMCPWorker(t, map[string]any{"mcpServers": map[string]any{"orders": map[string]any{
		"command": os.Args[0],
		"env":     map[string]string{mcpServerEnv: "stdio", "E2E_CRASH_MARKER": filepath.Join(t.TempDir(), "crashed")},
	}}})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const id = "mcp-progress"
	played := make(chan error, 1)
	var out *scenario.Output
	go func() {
		var err error
		out, err = scenario.Play(ctx, s.c, &scenario.Scenario{Name: "progress", Input: api.AgentInput{
			Prompt: "Import the orders.", Model: "openai:test-model", Tools: []string{"mcp__*"},
		}}, scenario.Options{WorkflowID: id})
		played <- err
	}()

	wctx, stop := context.WithCancel(ctx)
	var seen []tfclient.RunningTool
	for ev := range tfclient.New(s.c, tfclient.Options{}).Session(id).Watch(wctx, 100*time.Millisecond) {
		if tc, ok := ev.(tfclient.ToolsChanged); ok && len(tc.Running) > 0 {
			seen = append(seen, tc.Running...)
			if tc.Running[0].Progress > 0 {
				stop()
			}
		}
	}
	stop()
	if err := <-played; err != nil || out.Reply != "Imported." {
		t.Fatalf("run: %v, reply %q", err, out.Reply)
	}
	last := seen[len(seen)-1]
	if last.Name != "mcp__orders__import" || last.Total != 40 || last.Progress < 1 || !strings.HasPrefix(last.Message, "order ") {
		t.Fatalf("tools seen running %+v; want mcp__orders__import with its progress of 40", seen)
	}
	t.Logf("the watch saw %+v", last)

	it := s.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := proto.Marshal(ev); strings.Contains(string(b), "order 1 of 40") { // payloads as they are, not base64
			t.Fatalf("history event %d holds a progress message", ev.GetEventId())
		}
	}
}
