package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
)

// bothTransports runs test against the test server over stdio and over
// Streamable HTTP.
func bothTransports(t *testing.T, test func(t *testing.T, f *fixture)) {
	t.Run("stdio", func(t *testing.T) {
		test(t, newFixture(t, Config{Servers: map[string]Server{"orders": stdioServer(nil)}}, Options{}))
	})
	t.Run("http", func(t *testing.T) {
		h := startHTTP(t, "", "tok")
		test(t, newFixture(t, Config{Servers: map[string]Server{"orders": {URL: h.ts.URL, Headers: map[string]string{"Authorization": "Bearer tok"}}}}, Options{}))
	})
}

func (f *fixture) find(t *testing.T, name string) tools.Tool {
	t.Helper()
	tool, ok, err := f.reg.Find(context.Background(), name)
	if err != nil || !ok {
		t.Fatalf("tool %s: found %v, %v", name, ok, err)
	}
	return tool
}

// A tool's annotations are its hints, with MCP's defaults for what the
// server leaves out.
func TestToolHintsFromAnnotations(t *testing.T) {
	f := newFixture(t, Config{Servers: map[string]Server{"orders": stdioServer(nil)}}, Options{})
	for _, tt := range []struct {
		tool string
		want tools.Hints
	}{
		{"mcp__orders__echo", tools.DefaultHints},
		{"mcp__orders__count", tools.Hints{ReadOnly: true, Destructive: true}},
		{"mcp__orders__exit_idempotent", tools.Hints{Idempotent: true}},
	} {
		h, ok := f.find(t, tt.tool).(tools.HintedTool)
		if !ok {
			t.Fatalf("%s declares no hints", tt.tool)
		}
		if got := h.Hints(); got != tt.want {
			t.Errorf("%s: hints %+v, want %+v", tt.tool, got, tt.want)
		}
	}
}

// Tools that must run as tasks are not offered, with one log line; a call
// by their name finds no tool.
func TestTaskToolsLeftOut(t *testing.T) {
	bothTransports(t, func(t *testing.T, f *fixture) {
		specs := f.specs(t)
		if _, ok := specs["mcp__orders__background"]; ok || specs["mcp__orders__echo"].Name == "" {
			t.Fatalf("offered %d tools, background among them: %v", len(specs), ok)
		}
		if _, ok, err := f.reg.Find(context.Background(), "mcp__orders__background"); ok || err != nil {
			t.Errorf("Find(background) = %v, %v; want not found", ok, err)
		}
		log := f.log.String()
		if n := strings.Count(log, "must run as tasks"); n != 1 || !strings.Contains(log, "tools=[background]") {
			t.Errorf("%d log lines about task tools, want 1 naming background:\n%s", n, log)
		}
	})
}

// A server's progress notifications for a call reach the tool's Progress.
func TestProgressNotifications(t *testing.T) {
	bothTransports(t, func(t *testing.T, f *fixture) {
		var mu sync.Mutex
		var got []tools.Progress
		env := tools.Env{Progress: func(p tools.Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		}}
		out, err := f.find(t, "mcp__orders__count").Run(context.Background(), env, json.RawMessage(`{}`))
		if err != nil || !strings.HasPrefix(out, "counted to 3 (progress token todoflow-") {
			t.Fatalf("count = %q, %v", out, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 3 || got[2] != (tools.Progress{Progress: 3, Total: 3, Message: "counted 3"}) {
			t.Errorf("progress reports %+v, want three, the last 3 of 3", got)
		}
		// Without a Progress, the call asks for none.
		if out := f.mustCall(t, "mcp__orders__count", `{}`); !strings.Contains(out, "progress token <nil>") {
			t.Errorf("count without Progress = %q", out)
		}
	})
}

// A server that died in the middle of a call may have acted: the call of a
// tool that says nothing of itself is answered, not sent again; one that
// says it is idempotent is sent again.
func TestCallNotSentTwice(t *testing.T) {
	f := newFixture(t, Config{Servers: map[string]Server{"orders": stdioServer(nil)}}, Options{})
	res, err := executeRunTool(t, f.reg, model.ToolCall{ID: "c1", Name: "mcp__orders__exit"})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "mcp__orders__exit may or may not have taken effect: MCP server orders") {
		t.Errorf("RunTool of a call the server died in = %+v, %v; want an error tool message saying it may have taken effect", res, err)
	}
	_, err = executeRunTool(t, f.reg, model.ToolCall{ID: "c2", Name: "mcp__orders__exit_idempotent"})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeToolRetryable || app.NonRetryable() {
		t.Errorf("RunTool of an idempotent call the server died in = %v, want a retryable %s", err, activities.ErrTypeToolRetryable)
	}
}

// A call that certainly did not reach its server is Unsent; one whose
// request was written before the connection broke is not.
func TestCallUnsent(t *testing.T) {
	// A stdio server that cannot be started.
	f := newFixture(t, Config{Servers: map[string]Server{"gone": {Command: "/nonexistent/mcp-server"}}}, Options{})
	srv := f.servers.servers[0]
	tl := &tool{srv: srv, spec: model.ToolSpec{Name: "mcp__gone__x"}, remote: "x", hints: tools.DefaultHints}
	if _, err := tl.Run(context.Background(), tools.Env{}, nil); !tools.IsUnsent(err) {
		t.Errorf("call of a server that cannot start: %v, want Unsent", err)
	}

	// An HTTP server that is down after its tools were listed.
	h := startHTTP(t, "", "tok")
	f = newFixture(t, Config{Servers: map[string]Server{"orders": {URL: h.ts.URL, Headers: map[string]string{"Authorization": "Bearer tok"}}}}, Options{})
	echo := f.find(t, "mcp__orders__echo")
	h.stop()
	if _, err := echo.Run(context.Background(), tools.Env{}, json.RawMessage(`{"text":"hi"}`)); !tools.IsUnsent(err) {
		t.Errorf("call of an HTTP server that is down: %v, want Unsent", err)
	}

	// An HTTP server that reads the whole call and drops the connection.
	mcpSrv := testServer()
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, nil)
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { drop.CloseClientConnections(); drop.Close() })
	f = newFixture(t, Config{Servers: map[string]Server{"orders": {URL: drop.URL}}}, Options{})
	_, err := f.find(t, "mcp__orders__echo").Run(context.Background(), tools.Env{}, json.RawMessage(`{"text":"hi"}`))
	if !tools.IsRetryable(err) || tools.IsUnsent(err) {
		t.Errorf("call whose connection broke after it was written: %v, want Retryable and not Unsent", err)
	}
}

func TestUnwritten(t *testing.T) {
	small, _ := jsonrpc.MakeID(float64(1))
	short := &jsonrpc.Request{ID: small, Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)}
	long := &jsonrpc.Request{ID: small, Method: "tools/call", Params: json.RawMessage(`{"name":"` + strings.Repeat("x", pipeAtomic) + `"}`)}
	for _, tt := range []struct {
		name string
		err  error
		msg  jsonrpc.Message
		want bool
	}{
		{"broken pipe, short message", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}, short, true},
		{"broken pipe, long message", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}, long, false},
		{"closed on our side", os.ErrClosed, long, true},
		{"another error", errors.New("i/o timeout"), short, false},
	} {
		if got := unwritten(tt.err, tt.msg); got != tt.want {
			t.Errorf("%s: unwritten = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The listing of an event stream is read however its bytes are cut.
func TestListingBody(t *testing.T) {
	stream := "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"a\"},\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"b\",\"execution\":{\"taskSupport\":\"required\"}},{\"name\":\"c\",\"execution\":{\"taskSupport\":\"optional\"}}]}}\n\n"
	for _, chunk := range []int{1, 7, len(stream)} {
		n := &wireNote{listing: true}
		resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(&chunked{s: stream, n: chunk})}
		body := newListingBody(resp, n)
		if b, err := io.ReadAll(body); err != nil || string(b) != stream {
			t.Fatalf("read %q, %v; want the body as it is", b, err)
		}
		if !n.needsTask("b") || n.needsTask("a") || n.needsTask("c") {
			t.Errorf("chunks of %d: task-only tools %v, want [b]", chunk, n.taskOnly)
		}
	}
}

// chunked reads s n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
