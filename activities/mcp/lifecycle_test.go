package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fixture) pid(t *testing.T) int {
	t.Helper()
	pid, err := strconv.Atoi(f.mustCall(t, "mcp__orders__pid", ""))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether process pid exists (and is not a zombie left
// unreaped, which would be a leak of its own).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(stat), ") Z ")
}

func TestStdioServerRestarts(t *testing.T) {
	f := newFixture(t, Config{Servers: map[string]Server{"orders": stdioServer(nil)}}, Options{})
	first := f.pid(t)

	// Killed between calls: noticed, and started again by the next call.
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the server's death to be noticed", func() bool {
		return strings.Contains(f.log.String(), "MCP server stopped")
	})
	second := f.pid(t)
	if second == first {
		t.Fatalf("pid %d after the kill, the same as before", second)
	}

	// Dead in the middle of a call: the call may or may not have done its
	// work, as with any crash, so it is Retryable but not Unsent (RunTool
	// sends it again only if the tool's hints allow: hints_test.go); the
	// next call gets a new process.
	_, err := f.call(t, "mcp__orders__exit", "")
	if !tools.IsRetryable(err) || tools.IsUnsent(err) || !strings.Contains(err.Error(), "MCP server orders") {
		t.Fatalf("call during which the server died: %v, want a retryable error naming the server, not Unsent", err)
	}
	third := f.pid(t)
	if third == second {
		t.Fatalf("pid %d after the crash, the same as before", third)
	}

	// Killed just before a call: at most one attempt fails.
	if err := syscall.Kill(third, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out, err := f.call(t, "mcp__orders__pid", "")
	if err != nil {
		if !tools.IsRetryable(err) {
			t.Fatalf("first call after a kill: %v, want a result or a retryable error", err)
		}
		out = f.mustCall(t, "mcp__orders__pid", "")
	}
	if out == strconv.Itoa(third) {
		t.Fatalf("pid %s after the kill, the same as before", out)
	}
	for _, pid := range []int{first, second, third} {
		waitFor(t, 5*time.Second, "the dead servers to be reaped", func() bool { return !alive(pid) })
	}

	// Stopped with the worker: the process ends and nothing starts again.
	last, _ := strconv.Atoi(out)
	if err := f.servers.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if alive(last) {
		t.Errorf("server %d still runs after Close", last)
	}
	if _, err := f.call(t, "mcp__orders__pid", ""); err == nil || !strings.Contains(err.Error(), "the worker is stopping") {
		t.Errorf("call after Close: %v, want a refusal", err)
	}
}

// httpServer serves testServer over Streamable HTTP on addr ("" for any
// port), asking for the bearer token; seen records the credentials of the
// requests.
type httpServer struct {
	ts   *httptest.Server
	mu   sync.Mutex
	seen []string // "Authorization|key" of each request
}

func startHTTP(t *testing.T, addr, token string) *httpServer {
	t.Helper()
	h := &httpServer{}
	mcpSrv := testServer()
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, nil)
	h.ts = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Header.Get("Authorization")+"|"+r.URL.Query().Get("key"))
		h.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(taskMarkerResponse{w}, r)
	}))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		h.ts.Listener.Close()
		h.ts.Listener = l
	}
	h.ts.Start()
	t.Cleanup(h.stop)
	return h
}

// stop takes the server down, its open streams included.
func (h *httpServer) stop() {
	h.ts.CloseClientConnections()
	h.ts.Close()
}

func (h *httpServer) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// executeRunTool runs the RunTool activity with reg, as a worker would.
func executeRunTool(t *testing.T, reg *tools.Registry, call model.ToolCall) (activities.RunToolResult, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	// The run's own folder under the state folder: a named workspace
	// would need the worker's workspace roots, which MCP tools do not use.
	a := &activities.Activities{Tools: reg, StateDir: t.TempDir()}
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.RunTool, activities.RunToolInput{WorkflowID: "wf-mcp", Call: call})
	if err != nil {
		return activities.RunToolResult{}, err
	}
	var res activities.RunToolResult
	if err := val.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

func TestHTTPServer(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "s3cret-token")
	t.Setenv("MCP_TEST_KEY", "k3y-in-the-url")
	h := startHTTP(t, "", "s3cret-token")
	cfg := Config{Servers: map[string]Server{"billing": {
		URL:     h.ts.URL + "/mcp?key=${MCP_TEST_KEY}",
		Headers: map[string]string{"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
	}}}
	f := newFixture(t, cfg, Options{})

	if _, ok := f.specs(t)["mcp__billing__echo"]; !ok {
		t.Fatalf("tools offered: %v, want the HTTP server's", f.specs(t))
	}
	if got := f.mustCall(t, "mcp__billing__echo", `{"text": "over HTTP"}`); got != "over HTTP" {
		t.Errorf("echo = %q", got)
	}
	if _, err := f.call(t, "mcp__billing__fail", `{}`); err == nil || tools.IsRetryable(err) || !strings.Contains(err.Error(), "order B2 does not exist") {
		t.Errorf("fail: %v, want the tool's error", err)
	}
	// An error that quotes the token of "Bearer ${MCP_TEST_TOKEN}" alone
	// shows the reference instead.
	if _, err := f.call(t, "mcp__billing__fail", `{"quote": "MCP_TEST_TOKEN"}`); err == nil || !strings.Contains(err.Error(), "upstream refused ${MCP_TEST_TOKEN}") {
		t.Errorf("fail quoting the token: %v, want the reference in place of the token", err)
	}
	for _, r := range h.requests() {
		if r != "Bearer s3cret-token|k3y-in-the-url" {
			t.Fatalf("a request carried %q, want the header and key from the environment", r)
		}
	}

	// Down: RunTool fails retryably, so that Temporal tries again for as
	// long as the workflow's policy says; the error keeps the references,
	// not the secrets they gave.
	addr := h.ts.Listener.Addr().String()
	h.stop()
	_, err := executeRunTool(t, f.reg, model.ToolCall{ID: "c1", Name: "mcp__billing__echo", Arguments: []byte(`{"text": "anyone?"}`)})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeToolRetryable || app.NonRetryable() {
		t.Fatalf("RunTool with the server down: %v, want a retryable %s", err, activities.ErrTypeToolRetryable)
	}
	if msg := err.Error(); !strings.Contains(msg, "MCP server billing") || strings.Contains(msg, "k3y-in-the-url") || strings.Contains(msg, "s3cret") {
		t.Errorf("error %q: want the server named and no secret", msg)
	}
	// The tools stay offered while it is down.
	if _, ok := f.specs(t)["mcp__billing__echo"]; !ok {
		t.Error("the tools of a server that went down are no longer offered")
	}

	// Back: the next call connects again.
	back := startHTTP(t, addr, "s3cret-token")
	if got := f.mustCall(t, "mcp__billing__echo", `{"text": "back"}`); got != "back" {
		t.Errorf("echo after the server came back = %q", got)
	}

	// Restarted between two calls, forgetting its sessions: the first call
	// after it may fail, as not sent (the server answered 404 for a session
	// it does not know: it did not take the call), and the next works.
	back.stop()
	startHTTP(t, addr, "s3cret-token")
	out, err := f.call(t, "mcp__billing__echo", `{"text": "again"}`)
	if err != nil {
		if !tools.IsUnsent(err) {
			t.Fatalf("first call after a restart: %v, want a result or an Unsent error", err)
		}
		out = f.mustCall(t, "mcp__billing__echo", `{"text": "again"}`)
	}
	if out != "again" {
		t.Errorf("echo after a restart = %q", out)
	}
}

// TestHTTPHeadersStayWithTheirServer: a server that redirects to another
// host does not hand it the configured headers (a URL's query is the
// configuration's to choose and goes where the redirect says).
func TestHTTPHeadersStayWithTheirServer(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "s3cret-token")
	elsewhere := startHTTP(t, "", "s3cret-token")
	_, port, _ := net.SplitHostPort(elsewhere.ts.Listener.Addr().String())
	var (
		mu         sync.Mutex
		configured []string // Authorization|X-Api-Key of each request
	)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		configured = append(configured, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		// 307 keeps the method and body, so the client follows a POST.
		http.Redirect(w, r, "http://localhost:"+port+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)

	f := newFixture(t, Config{Servers: map[string]Server{"billing": {
		URL:     redirector.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${MCP_TEST_TOKEN}", "X-Api-Key": "${MCP_TEST_TOKEN}"},
	}}}, Options{})
	specs, err := f.reg.Specs(context.Background(), nil)
	if len(specs) != 0 || err == nil {
		t.Errorf("Specs = %d tools, %v; want the server refused without its credentials", len(specs), err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(configured) == 0 || configured[0] != "Bearer s3cret-token|s3cret-token" {
		t.Errorf("the configured server got %q, want the headers", configured)
	}
	got := elsewhere.requests()
	if len(got) == 0 {
		t.Fatal("the redirect was not followed: the test shows nothing")
	}
	for _, r := range got {
		if strings.Contains(r, "s3cret") {
			t.Errorf("the host redirected to got %q: the configured headers followed the redirect", r)
		}
	}
}

func TestHeaderTransportOrigin(t *testing.T) {
	tests := []struct {
		configured, request string
		sent                bool
	}{
		{"https://billing.internal/mcp", "https://billing.internal/mcp?session=1", true},
		{"https://billing.internal/mcp", "https://BILLING.internal:443/other", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp", true},
		{"https://billing.internal/mcp", "http://billing.internal/mcp", false},
		{"https://billing.internal/mcp", "https://billing.internal:8443/mcp", false},
		{"https://billing.internal/mcp", "https://billing.internal.evil.test/mcp", false},
		{"https://billing.internal/mcp", "https://evil.test/billing.internal/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", false},
	}
	for _, tt := range tests {
		t.Run(tt.configured+" "+tt.request, func(t *testing.T) {
			configured, _ := url.Parse(tt.configured)
			var got http.Header
			tr := &headerTransport{
				header: http.Header{"Authorization": {"Bearer t"}},
				origin: origin(configured),
				base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					got = r.Header
					return nil, errors.New("not sent")
				}),
			}
			req := httptest.NewRequest(http.MethodPost, tt.request, nil)
			_, _ = tr.RoundTrip(req)
			if sent := got.Get("Authorization") != ""; sent != tt.sent {
				t.Errorf("headers sent: %v, want %v", sent, tt.sent)
			}
			if req.Header.Get("Authorization") != "" {
				t.Error("RoundTrip changed the request it was given")
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHTTPServerRefusesCredentials(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "not-the-token")
	h := startHTTP(t, "", "s3cret-token")
	f := newFixture(t, Config{Servers: map[string]Server{"billing": {
		URL:     h.ts.URL,
		Headers: map[string]string{"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
	}}}, Options{})
	specs, err := f.reg.Specs(context.Background(), nil)
	if len(specs) != 0 || err == nil || !strings.Contains(err.Error(), "MCP server billing") || strings.Contains(err.Error(), "not-the-token") {
		t.Fatalf("Specs = %v, %v; want no tools and an error naming the server, without the token", specs, err)
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		srv     Server
		wantErr string
	}{
		{"no such command", Server{Command: "/nonexistent/mcp-server"}, "MCP server broken: start:"},
		{"never answers", Server{Command: os.Args[0], Env: map[string]string{serverEnv: "silent"}}, "MCP server broken: start:"},
		{"nothing listens", Server{URL: "http://127.0.0.1:1/mcp"}, "MCP server broken: start:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{Servers: map[string]Server{"broken": tt.srv}}, Options{StartTimeout: 500 * time.Millisecond})
			start := time.Now()
			specs, err := f.reg.Specs(context.Background(), nil)
			if len(specs) != 0 || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Specs = %v, %v; want an error containing %q", specs, err, tt.wantErr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s; the start timeout is 500ms", d)
			}
			// The next model calls do not wait for it again at once: given a
			// context already done, which a new start could not get past,
			// Specs still answers the same error, without trying.
			done, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err2 := f.reg.Specs(done, nil); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Specs again = %v; want the same error at once, without a new start", err2)
			}
			if n := strings.Count(f.log.String(), "MCP server cannot be started"); n != 1 {
				t.Errorf("%d failed starts logged, want 1:\n%s", n, f.log.String())
			}
			// RunTool: retryable, so that the workflow's policy bounds it.
			_, err = executeRunTool(t, f.reg, model.ToolCall{ID: "c1", Name: "mcp__broken__anything"})
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != activities.ErrTypeToolRetryable {
				t.Fatalf("RunTool = %v, want a retryable %s", err, activities.ErrTypeToolRetryable)
			}
		})
	}
}

func TestListBackoff(t *testing.T) {
	want := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	for i, w := range want {
		if got := listBackoff(i + 1); got != w {
			t.Errorf("listBackoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := listBackoff(100); got != 10*time.Minute {
		t.Errorf("listBackoff(100) = %s", got)
	}
}

// A call that takes a while heartbeats: under a 2 s heartbeat timeout, a 4 s
// call completes only if the worker tells the server it is alive meanwhile.
func TestCallHeartbeats(t *testing.T) {
	f := newFixture(t, Config{Servers: map[string]Server{"orders": stdioServer(nil)}}, Options{})
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	a := &activities.Activities{Tools: f.reg, StateDir: t.TempDir()} // see executeRunTool
	env.RegisterActivityWithOptions(a.RunTool, activity.RegisterOptions{Name: api.ToolActivity})
	wf := func(ctx workflow.Context, call model.ToolCall) (activities.RunToolResult, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			HeartbeatTimeout:    2 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var res activities.RunToolResult
		err := workflow.ExecuteActivity(ctx, api.ToolActivity, activities.RunToolInput{WorkflowID: "wf-mcp", Call: call}).Get(ctx, &res)
		return res, err
	}
	env.RegisterWorkflow(wf)
	env.ExecuteWorkflow(wf, model.ToolCall{ID: "c1", Name: "mcp__orders__slow", Arguments: []byte(`{"ms": 4000}`)})
	var res activities.RunToolResult
	if err := env.GetWorkflowResult(&res); err != nil || res.IsError || res.Content != "done" {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
}

// An isError result is an error tool message; the activity succeeds.
func TestRunToolIsError(t *testing.T) {
	f := newFixture(t, Config{Servers: map[string]Server{"orders": stdioServer(nil)}}, Options{})
	res, err := executeRunTool(t, f.reg, model.ToolCall{ID: "c2", Name: "mcp__orders__fail"})
	if err != nil || !res.IsError || res.Content != "order B2 does not exist" {
		t.Errorf("RunTool of an isError result = %+v, %v; want an error tool message", res, err)
	}
}
