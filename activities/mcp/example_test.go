package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/todoflow/todoflow/activities/mcp"
	"github.com/todoflow/todoflow/activities/tools"
)

// The tools of an MCP server join a worker's registry as
// mcp__<server>__<tool>. Here the server is served over HTTP by this
// process; a worker reads the configuration from a file (mcp.Open).
func ExampleServers_Register() {
	srv := sdk.NewServer(&sdk.Implementation{Name: "hello", Version: "1"}, nil)
	type greetArgs struct {
		Name string `json:"name"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "greet", Description: "Greet someone."}, func(_ context.Context, _ *sdk.CallToolRequest, in greetArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()

	servers, err := mcp.New(mcp.Config{Servers: map[string]mcp.Server{"hello": {URL: ts.URL}}}, mcp.Options{})
	if err != nil {
		panic(err)
	}
	defer servers.Close() // as the worker does when it stops
	reg := tools.DefaultRegistry()
	if err := servers.Register(reg); err != nil {
		panic(err)
	}

	ctx := context.Background()
	specs, err := reg.Specs(ctx, []string{"mcp__hello__*"}) // a run whose input has "tools": ["mcp__hello__*"]
	if err != nil {
		panic(err)
	}
	for _, s := range specs {
		fmt.Println(s.Name, "-", s.Description)
	}
	tool, _, err := reg.Find(ctx, "mcp__hello__greet")
	if err != nil {
		panic(err)
	}
	out, err := tool.Run(ctx, tools.Env{}, json.RawMessage(`{"name": "Ada"}`))
	fmt.Println(out, err)
	// Output:
	// mcp__hello__greet - Greet someone.
	// Hello, Ada! <nil>
}
