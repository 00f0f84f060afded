package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "t0ken")
	path := writeConfig(t, `{"mcpServers": {
		"files": {"command": "files-mcp", "args": ["--root", "${MCP_TEST_ROOT:-/srv}"], "env": {"LOG": "warn"}, "cwd": "data"},
		"orders": {"type": "http", "url": "https://orders.example/mcp", "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}},
		"old": {"command": "old-mcp", "disabled": true, "alwaysAllow": ["x"]}
	}}`)
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != path || cfg.Dir != filepath.Dir(path) {
		t.Errorf("Path %q, Dir %q; want the file and its folder", cfg.Path, cfg.Dir)
	}
	files := cfg.Servers["files"]
	if files.Command != "files-mcp" || files.Args[1] != "${MCP_TEST_ROOT:-/srv}" || files.Env["LOG"] != "warn" || files.Cwd != "data" || files.IsHTTP() {
		t.Errorf("files = %+v", files)
	}
	// References stay references: they are replaced when the server starts.
	if h := cfg.Servers["orders"].Headers["Authorization"]; h != "Bearer ${MCP_TEST_TOKEN}" {
		t.Errorf("header = %q, want the reference kept", h)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "files,orders" {
		t.Errorf("servers %s, want files,orders (old is disabled)", got)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "t0ken")
	os.Unsetenv("MCP_TEST_MISSING")
	tests := []struct {
		name, text, want string
	}{
		{"not JSON", "{\n\"mcpServers\": {,}}", "not valid JSON at line 2"},
		{"no mcpServers", `{"servers": {}}`, `no "mcpServers" object`},
		{"not an object", `[1]`, "not a JSON object"},
		{"mcpServers not an object", `{"mcpServers": []}`, `"mcpServers" must be an object of servers by name`},
		{"server not an object", `{"mcpServers": {"a": "x"}}`, `server "a": want an object with "command" or "url"`},
		{"args not a list", `{"mcpServers": {"a": {"command": "x", "args": "--flag"}}}`, `server "a": "args" must be []string, not string`},
		{"neither", `{"mcpServers": {"orders": {"args": ["x"]}}}`, `server "orders": has neither "command" nor "url"`},
		{"both", `{"mcpServers": {"orders": {"command": "x", "url": "http://h/mcp"}}}`, `server "orders": has both "command" and "url"`},
		{"sse", `{"mcpServers": {"orders": {"type": "sse", "url": "http://h/sse"}}}`, `type "sse" (the older HTTP+SSE transport) is not supported`},
		{"unknown type", `{"mcpServers": {"orders": {"type": "ws", "url": "ws://h"}}}`, `unknown type "ws"`},
		{"stdio with url", `{"mcpServers": {"orders": {"type": "stdio", "url": "http://h/mcp"}}}`, `type "stdio" needs "command"`},
		{"http with command", `{"mcpServers": {"orders": {"type": "http", "command": "x"}}}`, `type "http" needs "url"`},
		{"headers on stdio", `{"mcpServers": {"orders": {"command": "x", "headers": {"A": "b"}}}}`, `"headers" are for servers reached by "url"`},
		{"env on http", `{"mcpServers": {"orders": {"url": "http://h/mcp", "env": {"A": "b"}}}}`, `"args", "env" and "cwd" are for servers run by "command"`},
		{"bad url", `{"mcpServers": {"orders": {"url": "h/mcp"}}}`, `url "h/mcp": want an http:// or https:// address`},
		{"unset variable", `{"mcpServers": {"orders": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${MCP_TEST_MISSING}"}}}}`,
			`server "orders": headers.Authorization: ${MCP_TEST_MISSING}: MCP_TEST_MISSING is not set in the worker's environment`},
		{"unterminated reference", `{"mcpServers": {"orders": {"command": "x", "args": ["${HOME"]}}}`, `args[0]: "${HOME": unterminated ${`},
		{"empty name", `{"mcpServers": {"": {"command": "x"}}}`, `server "": the name is empty`},
		{"long name", `{"mcpServers": {"` + strings.Repeat("n", 33) + `": {"command": "x"}}}`, "the name is longer than 32 characters"},
		{"names that clash", `{"mcpServers": {"my.orders": {"command": "x"}, "my_orders": {"command": "y"}}}`,
			`servers "my.orders" and "my_orders" would both name their tools mcp__my_orders__*`},
		{"names that may clash", `{"mcpServers": {"a": {"command": "x"}, "a__b": {"command": "y"}}}`,
			`servers "a" and "a__b": tool names mcp__a__* and mcp__a__b__* could clash`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.text)
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load accepted %s", tt.text)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "mcp config "+path+": ") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q\nwant one line naming %s and containing %q", msg, path, tt.want)
			}
		})
	}
	_, err := Load(filepath.Join(t.TempDir(), "missing.json"))
	if err == nil || !strings.HasSuffix(err.Error(), "missing.json: no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"TOKEN": "abc", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want, wantErr string
	}{
		{"plain", "plain", ""},
		{"Bearer ${TOKEN}", "Bearer abc", ""},
		{"${TOKEN}${TOKEN}", "abcabc", ""},
		{"${MISSING:-fallback}", "fallback", ""},
		{"${EMPTY:-fallback}", "fallback", ""},
		{"${EMPTY}", "", ""},
		{"${TOKEN:-unused}", "abc", ""},
		{"$TOKEN and $5", "$TOKEN and $5", ""},
		{"$${TOKEN}", "${TOKEN}", ""},
		{"${MISSING}", "", "MISSING is not set"},
		{"${TOKEN", "", "unterminated"},
		{"${1X}", "", `"1X" is not a variable name`},
		{"${}", "", "is not a variable name"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, lookup)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("expand(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
