package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/todoflow/todoflow/activities/tools"
)

// BenchmarkCall is one echo call of the test server, as RunTool makes it
// (with a progress token and the wire watched, wire.go) and, as the
// baseline of the same run, through the SDK's client alone.
func BenchmarkCall(b *testing.B) {
	mcpSrv := testServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, nil))
	b.Cleanup(ts.Close)
	for _, tr := range []struct {
		name string
		cfg  Server
		bare func() sdk.Transport
	}{
		{"stdio", Server{Command: os.Args[0], Env: map[string]string{serverEnv: "stdio"}}, func() sdk.Transport {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), serverEnv+"=stdio")
			return &sdk.CommandTransport{Command: cmd}
		}},
		{"http", Server{URL: ts.URL}, func() sdk.Transport { return &sdk.StreamableClientTransport{Endpoint: ts.URL} }},
	} {
		ctx := context.Background()
		args := json.RawMessage(`{"text":"hello"}`)
		b.Run(tr.name+"/sdk", func(b *testing.B) {
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr.bare(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tr.name+"/todoflow", func(b *testing.B) {
			servers, err := New(Config{Servers: map[string]Server{"s": tr.cfg}}, Options{Stderr: io.Discard, Logger: slogTo(io.Discard)})
			if err != nil {
				b.Fatal(err)
			}
			defer servers.Close()
			reg := tools.NewRegistry()
			if err := servers.Register(reg); err != nil {
				b.Fatal(err)
			}
			tool, ok, err := reg.Find(ctx, "mcp__s__echo")
			if err != nil || !ok {
				b.Fatalf("echo: %v, %v", ok, err)
			}
			env := tools.Env{Progress: func(tools.Progress) {}}
			for b.Loop() {
				if _, err := tool.Run(ctx, env, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
