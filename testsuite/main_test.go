package testsuite

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// mcpServerEnv makes the test binary the stdio MCP server of the end-to-end
// tests (mcp_e2e_test.go) instead of running the tests: the worker starts
// this binary again as a server, which needs no build step and no network.
const mcpServerEnv = "TODOFLOW_E2E_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(mcpServerEnv) == "stdio" {
		if err := runOrdersServer(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "orders MCP server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
