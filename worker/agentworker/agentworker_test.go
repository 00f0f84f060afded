package agentworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// A worker of your own: the built-in tools, one Go tool, and the tools of
// the MCP servers of a configuration file (none here).
func ExampleNew() {
	reg := activities.DefaultRegistry()
	weather := model.ToolSpec{
		Name:        "weather",
		Description: "Today's weather in a city.",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`),
	}
	err := reg.Register(activities.NewTool(weather, func(_ context.Context, _ activities.ToolEnv, raw json.RawMessage) (string, error) {
		var args struct{ City string }
		if err := activities.DecodeArgs(weather, raw, &args); err != nil {
			return "", err // the model reads it and corrects its call
		}
		return "Sunny in " + args.City, nil
	}))
	if err != nil {
		panic(err)
	}

	// In a main: c, ns, err := agentworker.Dial(ctx, "", "", false, nil).
	c, err := client.NewLazyClient(client.Options{HostPort: client.DefaultHostPort})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	w, err := agentworker.New(c, agentworker.Options{
		Tools:     reg,
		StateDir:  os.TempDir(),
		MCPConfig: "",                      // a file of "mcpServers"; empty: $TODOFLOW_MCP_CONFIG
		HostQueue: "todoflow-host-example", // empty: a name kept in StateDir
	})
	if err != nil {
		panic(err)
	}
	_ = w // w.Run(worker.InterruptCh()), or agentworker.Run(ctx, c, ns, opts)

	specs, _ := reg.Specs(context.Background(), nil)
	for _, s := range specs {
		fmt.Println(s.Name)
	}
	// Output:
	// list_files
	// read_file
	// weather
	// write_file
}

// A bad MCP configuration stops New with one line naming the file and the
// server, so that the worker refuses to start.
func TestNewRefusesBadMCPConfig(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: client.DefaultHostPort})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"orders": {"args": ["x"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, viaEnv := range []bool{false, true} {
		opts := agentworker.Options{StateDir: t.TempDir(), MCPConfig: path}
		if viaEnv {
			opts.MCPConfig = ""
			t.Setenv("TODOFLOW_MCP_CONFIG", path)
		}
		_, err := agentworker.New(c, opts)
		want := "mcp config " + path + `: server "orders": has neither "command" nor "url"`
		if err == nil || err.Error() != want {
			t.Errorf("New (config from the environment: %v) = %v, want %q", viaEnv, err, want)
		}
	}

	// A clash with a tool of the worker's own is refused too.
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"orders": {"command": "orders-mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := activities.NewRegistry(activities.NewTool(model.ToolSpec{Name: "mcp__orders__mine"}, nil))
	_, err = agentworker.New(c, agentworker.Options{StateDir: t.TempDir(), MCPConfig: path, Tools: reg})
	if err == nil || !strings.Contains(err.Error(), `mcp config `+path+`: mcp server "orders"`) || !strings.Contains(err.Error(), "mcp__orders__mine") {
		t.Errorf("New with a clash = %v", err)
	}
}

// A worker refuses to start with a workspace root that holds its state
// folder (the dev server's database, other sessions' folders) or lies in
// it outside its workspaces folder, naming the setting.
func TestNewRefusesRootsAtTheStateFolder(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: client.DefaultHostPort})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := t.TempDir()
	state := filepath.Join(base, "state")
	for _, tt := range []struct {
		roots []string
		err   string
	}{
		{[]string{base}, "holds the worker's state folder"},
		{[]string{filepath.Join(state, "sessions")}, "is inside the worker's state folder"},
	} {
		_, err := agentworker.New(c, agentworker.Options{StateDir: state, WorkspaceRoots: tt.roots, StreamAddr: "off"})
		if err == nil || !strings.Contains(err.Error(), "WorkspaceRoots: ") || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("New with roots %q = %v, want an error naming WorkspaceRoots with %q", tt.roots, err, tt.err)
		}
	}
}

// todoflow on a worker of your own: its task queue, its workflows, and the
// plugin, which registers AgentWorkflow and its activities when the worker
// starts and runs the host queue's worker beside it.
func ExampleNewPlugin() {
	c, err := client.NewLazyClient(client.Options{HostPort: client.DefaultHostPort})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	p, err := agentworker.NewPlugin(c, agentworker.Options{StateDir: os.TempDir(), HostQueue: "todoflow-host-example", StreamAddr: agentworker.StreamOff})
	if err != nil {
		panic(err)
	}
	w := worker.New(c, "my-queue", worker.Options{Plugins: []worker.Plugin{p}})
	_ = w // w.RegisterWorkflow(yours); w.Run(worker.InterruptCh())
}
