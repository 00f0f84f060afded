package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/todoflow/todoflow/activities"
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
		if err := testServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
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
	// exit ends the process in the middle of the call, as a crash would.
	sdk.AddTool(s, &sdk.Tool{Name: "exit", Description: "Crash."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
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

// runWorker is the test binary as a worker that starts a stubborn stdio
// server, prints the server's process id and waits to be killed.
func runWorker() int {
	srv := Server{Command: os.Args[0], Env: map[string]string{serverEnv: "stdio-stubborn"}}
	servers, err := New(Config{Servers: map[string]Server{"s": srv}}, Options{Stderr: io.Discard})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	reg := activities.NewRegistry()
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
	pid, err := tool.Run(ctx, activities.ToolEnv{}, json.RawMessage(`{}`))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("server", pid)
	select {}
}
