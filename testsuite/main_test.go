package testsuite

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
)

// mcpServerEnv makes the test binary one of the stdio MCP servers of the
// end-to-end tests instead of running the tests ("stdio": the orders server
// of mcp_e2e_test.go, "vault": the server of secrets_e2e_test.go): the
// worker starts this binary again as a server, which needs no build step
// and no network.
const mcpServerEnv = "TODOFLOW_E2E_MCP_SERVER"

func TestMain(m *testing.M) {
	servers := map[string]func(context.Context) error{
		"stdio": runOrdersServer, // "orders"
		"vault": runVaultServer,
	}
	if name := os.Getenv(mcpServerEnv); name != "" {
		run, ok := servers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "%s=%s: no such MCP server\n", mcpServerEnv, name)
			os.Exit(2)
		}
		if err := run(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "%s MCP server: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The workers these tests run in process log to slog.Default: at INFO,
	// a line or three for each of the hundreds of workers, which bury the
	// report of a failing test in the package's output. Warnings stay.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
