package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/todoflow/todoflow/activities/tools"
)

// serverEnv makes the test binary an MCP server on its standard input and
// output instead of running the tests: the stdio servers of these tests are
// this binary run again, so that they need no build step and no network.
const serverEnv = "TODOFLOW_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case "silent": // a server that never answers: read until stdin closes
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "stdio", "stdio-stubborn":
		fmt.Fprintln(os.Stderr, "test server ready")
		t := &sdk.IOTransport{Reader: os.Stdin, Writer: taskMarker{os.Stdout}}
		if err := testServer().Run(context.Background(), t); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		if os.Getenv(serverEnv) == "stdio-stubborn" {
			// A server that does not stop when its input ends, as
			// some do: only a signal stops it.
			select {}
		}
		os.Exit(0)
	case "worker":
		os.Exit(runWorker())
	}
	os.Exit(m.Run())
}

// testServer is the MCP server of the tests, for stdio and HTTP alike.
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "todoflow-test", Version: "1"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	type echoArgs struct {
		Text string `json:"text" jsonschema:"the text to send back"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Send the text back."}, func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})
	type failArgs struct {
		Quote string `json:"quote,omitempty" jsonschema:"a variable of the server's environment whose value the error quotes"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Report an error."}, func(_ context.Context, _ *sdk.CallToolRequest, in failArgs) (*sdk.CallToolResult, any, error) {
		if in.Quote != "" {
			return nil, nil, fmt.Errorf("order B2 does not exist; upstream refused %s", os.Getenv(in.Quote))
		}
		return nil, nil, errors.New("order B2 does not exist")
	})
	sdk.AddTool(s, &sdk.Tool{Name: "pid", Description: "The server's process id."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return text(strconv.Itoa(os.Getpid())), nil, nil
	})
	type envArgs struct {
		Name string `json:"name"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "A variable of the server's environment."}, func(_ context.Context, _ *sdk.CallToolRequest, in envArgs) (*sdk.CallToolResult, any, error) {
		return text(os.Getenv(in.Name)), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "cwd", Description: "The server's folder."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		wd, err := os.Getwd()
		return text(wd), nil, err
	})
	sdk.AddTool(s, &sdk.Tool{Name: "picture", Description: "A picture and its caption."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "a red dot"},
			&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 2048)},
		}}, nil, nil
	})
	type slowArgs struct {
		Ms int `json:"ms"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Answer after ms milliseconds."}, func(ctx context.Context, _ *sdk.CallToolRequest, in slowArgs) (*sdk.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return text("done"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	// exit ends the process in the middle of the call, as a crash would;
	// it says nothing of itself, so it may not be sent a call twice.
	// exit_idempotent says it may.
	crash := func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	}
	sdk.AddTool(s, &sdk.Tool{Name: "exit", Description: "Crash."}, crash)
	sdk.AddTool(s, &sdk.Tool{Name: "exit_idempotent", Description: "Crash, again and again.",
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false)}}, crash)
	// count reports its progress, three steps, before it answers.
	sdk.AddTool(s, &sdk.Tool{Name: "count", Description: "Count to three, saying so.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= 3 && token != nil; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 3, Message: fmt.Sprintf("counted %d", i)}); err != nil {
					return nil, nil, err
				}
			}
			// Notifications and the answer may be handled in any order.
			time.Sleep(100 * time.Millisecond)
			return text(fmt.Sprintf("counted to 3 (progress token %v)", token)), nil, nil
		})
	// background must run as a task (taskMarker says so in the listing).
	sdk.AddTool(s, &sdk.Tool{Name: "background", Description: "A long job, as a task."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return text("ran without a task"), nil, nil
	})
	// legacy's schema is draft-04's (a boolean exclusiveMinimum), which
	// jsonschema-go cannot read: the worker must still call it.
	s.AddTool(&sdk.Tool{Name: "legacy", Description: "Send the arguments back.", InputSchema: json.RawMessage(`{
		"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
		"properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}, "required": ["n"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(string(req.Params.Arguments)), nil
		})
	// Two names that are one once made fit for a model: the second listed
	// is left out.
	for _, name := range []string{"get.order", "get_order"} {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "Look up an order (" + name + ")."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text(name), nil, nil
		})
	}
	return s
}

// taskMarker writes what a server writes, saying in its tool listings that
// the tool background must run as a task (MCP tasks: execution.taskSupport
// "required"), which the SDK's Tool cannot say.
type taskMarker struct{ w io.Writer }

func (m taskMarker) Write(p []byte) (int, error) {
	out := p
	if bytes.Contains(p, []byte(`"tools":[`)) {
		out = bytes.ReplaceAll(p, []byte(`"name":"background"`), []byte(`"execution":{"taskSupport":"required"},"name":"background"`))
	}
	if _, err := m.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (m taskMarker) Close() error { return nil }

// taskMarkerResponse is taskMarker for a Streamable HTTP server.
type taskMarkerResponse struct{ http.ResponseWriter }

func (m taskMarkerResponse) Write(p []byte) (int, error) {
	return taskMarker{m.ResponseWriter}.Write(p)
}

func (m taskMarkerResponse) Flush() { http.NewResponseController(m.ResponseWriter).Flush() }

func (m taskMarkerResponse) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// runWorker is the test binary as a worker that starts a stubborn stdio
// server, prints the server's process id and waits to be killed.
func runWorker() int {
	srv := Server{Command: os.Args[0], Env: map[string]string{serverEnv: "stdio-stubborn"}}
	servers, err := New(Config{Servers: map[string]Server{"s": srv}}, Options{Stderr: io.Discard})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	reg := tools.NewRegistry()
	if err := servers.Register(reg); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx := context.Background()
	tool, ok, err := reg.Find(ctx, "mcp__s__pid")
	if err != nil || !ok {
		fmt.Println("error: no pid tool:", err)
		return 1
	}
	pid, err := tool.Run(ctx, tools.Env{}, json.RawMessage(`{}`))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("server", pid)
	select {}
}
