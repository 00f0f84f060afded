package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
)

// syncBuffer is a bytes.Buffer that servers and loggers may write to from
// their goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stdioServer is the configuration of the test binary as a stdio server.
func stdioServer(env map[string]string) Server {
	e := map[string]string{serverEnv: "stdio"}
	for k, v := range env {
		e[k] = v
	}
	return Server{Command: os.Args[0], Env: e}
}

// fixture is a registry with the servers of cfg, and what they logged.
type fixture struct {
	reg     *tools.Registry
	servers *Servers
	log     *syncBuffer // the servers' log
	stderr  *syncBuffer // what the stdio servers printed on stderr
}

func newFixture(t *testing.T, cfg Config, opts Options) *fixture {
	t.Helper()
	f := &fixture{reg: tools.NewRegistry(), log: &syncBuffer{}, stderr: &syncBuffer{}}
	if opts.Logger == nil {
		opts.Logger = slogTo(f.log)
	}
	opts.Stderr = f.stderr
	var err error
	if f.servers, err = New(cfg, opts); err != nil {
		t.Fatal(err)
	}
	if err := f.servers.Register(f.reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.servers.Close() })
	return f
}

// call runs the tool name as RunTool would, with a time limit.
func (f *fixture) call(t *testing.T, name, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tool, ok, err := f.reg.Find(ctx, name)
	if err != nil {
		return "", tools.Retryable(err) // as RunTool treats it
	}
	if !ok {
		t.Fatalf("tool %s not found", name)
	}
	return tool.Run(ctx, tools.Env{}, json.RawMessage(args))
}

// mustCall is call for a call that must succeed.
func (f *fixture) mustCall(t *testing.T, name, args string) string {
	t.Helper()
	out, err := f.call(t, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func (f *fixture) specs(t *testing.T) map[string]model.ToolSpec {
	t.Helper()
	specs, err := f.reg.Specs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]model.ToolSpec)
	for _, s := range specs {
		out[s.Name] = s
	}
	return out
}

func TestStdioServer(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCP_TEST_GREETING", "hello from the worker")
	t.Setenv("OPENAI_API_KEY", "sk-worker-only")
	t.Setenv("TODOFLOW_PAYLOAD_KEY", "payload-key-worker-only")
	t.Setenv("TODOFLOW_WEBHOOK_HEADERS_OPS", `{"Authorization": "Bearer worker-only"}`)
	srv := stdioServer(map[string]string{"GREETING": "${MCP_TEST_GREETING}", "FALLBACK": "${MCP_TEST_UNSET:-plan b}"})
	srv.Cwd = "work"
	if err := os.Mkdir(dir+"/work", 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Config{Servers: map[string]Server{"orders": srv}, Dir: dir}, Options{})

	specs := f.specs(t)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range specs {
			if !yield(n) {
				return
			}
		}
	})
	// Not background, which must run as a task.
	want := []string{"mcp__orders__count", "mcp__orders__cwd", "mcp__orders__echo", "mcp__orders__env", "mcp__orders__exit",
		"mcp__orders__exit_idempotent", "mcp__orders__fail", "mcp__orders__get_order", "mcp__orders__legacy", "mcp__orders__picture", "mcp__orders__pid", "mcp__orders__slow"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools offered: %q\nwant %q", names, want)
	}
	echo := specs["mcp__orders__echo"]
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echo.Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Errorf("echo's parameters = %s (%v), want the server's schema with a text property", echo.Parameters, err)
	}
	if echo.Description != "Send the text back." {
		t.Errorf("echo's description = %q", echo.Description)
	}
	if log := f.log.String(); !strings.Contains(log, "MCP tool names clash") || !strings.Contains(log, "get_order") {
		t.Errorf("the clash of get.order and get_order was not logged:\n%s", log)
	}

	for _, tt := range []struct {
		tool, args, want string
	}{
		{"mcp__orders__echo", `{"text": "hi"}`, "hi"},
		{"mcp__orders__env", `{"name": "GREETING"}`, "hello from the worker"},
		{"mcp__orders__env", `{"name": "FALLBACK"}`, "plan b"},
		// The rest of the worker's environment is not passed on, secrets
		// least of all; what every program needs is.
		{"mcp__orders__env", `{"name": "MCP_TEST_GREETING"}`, ""},
		{"mcp__orders__env", `{"name": "OPENAI_API_KEY"}`, ""},
		{"mcp__orders__env", `{"name": "TODOFLOW_PAYLOAD_KEY"}`, ""},
		{"mcp__orders__env", `{"name": "TODOFLOW_WEBHOOK_HEADERS_OPS"}`, ""},
		{"mcp__orders__env", `{"name": "PATH"}`, os.Getenv("PATH")},
		{"mcp__orders__cwd", ``, dir + "/work"},
		{"mcp__orders__picture", `{}`, "a red dot\n[image: image/png, 2.0 KiB, not shown]"},
		{"mcp__orders__get_order", `{}`, "get.order"},
		// A schema the worker cannot read leaves the checks to the server.
		{"mcp__orders__legacy", `{"n": 1}`, `{"n":1}`},
	} {
		if got := f.mustCall(t, tt.tool, tt.args); got != tt.want {
			t.Errorf("%s(%s) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}

	// Errors the model reads: plain errors, not retryable.
	for _, tt := range []struct {
		tool, args, want string
	}{
		{"mcp__orders__fail", `{}`, "order B2 does not exist"},
		// A value from the worker's environment, quoted in an error, is
		// put back as its reference: errors go to the run's history.
		{"mcp__orders__fail", `{"quote": "GREETING"}`, "upstream refused ${MCP_TEST_GREETING}"},
		{"mcp__orders__echo", `{"text": 5}`, `invalid argument "text": has type "integer", want "string"`},
		{"mcp__orders__echo", `[1]`, "arguments must be a JSON object"},
		{"mcp__orders__legacy", `[1]`, "arguments must be a JSON object"},
	} {
		_, err := f.call(t, tt.tool, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || tools.IsRetryable(err) {
			t.Errorf("%s(%s) error = %v, want a plain error containing %q", tt.tool, tt.args, err, tt.want)
		}
	}
	if got := f.stderr.String(); !strings.Contains(got, "mcp orders: test server ready\n") {
		t.Errorf("the server's stderr was not passed on with its name:\n%s", got)
	}
	if n := strings.Count(f.log.String(), "MCP server started"); n != 1 {
		t.Errorf("server started %d times, want once:\n%s", n, f.log.String())
	}
}

// slogTo is a logger writing text lines to w, at every level.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
