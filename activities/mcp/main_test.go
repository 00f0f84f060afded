package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
	case "stdio":
		fmt.Fprintln(os.Stderr, "test server ready")
		if err := testServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
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
