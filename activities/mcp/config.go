package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// EnvConfig is the environment variable that names the MCP configuration
// file of a worker (docs/tools.md); `worker --mcp-config FILE` wins over it.
const EnvConfig = "TODOFLOW_MCP_CONFIG"

// Config is an MCP configuration: the servers whose tools the worker offers.
// Its file is the one other MCP clients read (docs/tools.md has an example).
type Config struct {
	// Servers by name; the name is the middle of their tools' names
	// (mcp__<name>__<tool>).
	Servers map[string]Server `json:"mcpServers"`
	// Path is the file the configuration was read from, for errors; empty
	// for one built in code.
	Path string `json:"-"`
	// Dir is the folder a relative cwd is taken from; Load sets it to the
	// file's folder, empty means the worker's current folder.
	Dir string `json:"-"`
}

// Server is one MCP server: a command run with its standard input and output
// as the transport (stdio), or the URL of a Streamable HTTP endpoint.
//
// Its strings may refer to the worker's environment as ${NAME} or
// ${NAME:-default} (see expand), replaced only in the worker's memory when
// the server starts, so that secrets never enter workflow history.
type Server struct {
	// Type is "stdio" or "http" ("streamable-http" too); empty means the
	// one that fits what is set, Command or URL.
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is the command's environment beyond the few variables every
	// program needs (PATH, HOME, USER, the locale...; see childEnv): the
	// rest of the worker's environment is not passed on.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the command's folder; relative to Config.Dir. Empty means
	// Config.Dir.
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled leaves the server out, as in other clients' files.
	Disabled bool `json:"disabled,omitempty"`
}

// IsHTTP reports whether the server is reached by URL.
func (s Server) IsHTTP() bool { return s.URL != "" }

// Load reads and checks the configuration file at path. Its errors are one
// line, naming the file and, where it applies, the server.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err // the path is in the message already
		}
		return Config{}, fmt.Errorf("mcp config %s: %w", path, err)
	}
	cfg, err := parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("mcp config %s: %w", path, err)
	}
	cfg.Path = path
	if abs, err := filepath.Abs(filepath.Dir(path)); err == nil {
		cfg.Dir = abs
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// parse decodes a configuration file's text, server by server, so that an
// error names the server.
func parse(data []byte) (Config, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return Config{}, jsonError(data, err)
	}
	raw, ok := top["mcpServers"]
	if !ok {
		return Config{}, errors.New(`no "mcpServers" object (want {"mcpServers": {"name": {"command": ...} or {"url": ...}}})`)
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
		return Config{}, errors.New(`"mcpServers" must be an object of servers by name`)
	}
	cfg := Config{Servers: make(map[string]Server, len(servers))}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		var srv Server
		if err := json.Unmarshal(servers[name], &srv); err != nil {
			if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
				return Config{}, fmt.Errorf("server %q: %q must be %s, not %s", name, te.Field, te.Type, te.Value)
			}
			return Config{}, fmt.Errorf("server %q: want an object with \"command\" or \"url\": %w", name, err)
		}
		cfg.Servers[name] = srv
	}
	return cfg, nil
}

// jsonError says where in the file the JSON is broken.
func jsonError(data []byte, err error) error {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		line := bytes.Count(data[:min(max(se.Offset, 0), int64(len(data)))], []byte("\n")) + 1
		return fmt.Errorf("not valid JSON at line %d: %w", line, err)
	}
	return fmt.Errorf("not a JSON object: %w", err)
}

// maxServerName bounds a server's name, so that its tools' names (at most 64
// characters, the prefix mcp__<name>__ included) keep room for the tool.
const maxServerName = 32

// Validate checks the configuration as the worker does before it starts:
// every server has a usable name (one that stays distinct when made fit for
// tool names), exactly one of a command and a URL, settings that fit its
// transport, and references only to variables that are set. The error names
// the file and the server.
func (c Config) Validate() error {
	where := "mcp config"
	if c.Path != "" {
		where += " " + c.Path
	}
	if c.Servers == nil {
		return fmt.Errorf(`%s: no "mcpServers" object`, where)
	}
	byPrefix := make(map[string]string)
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		srv := c.Servers[name]
		if srv.Disabled {
			continue
		}
		if err := srv.validate(name); err != nil {
			return fmt.Errorf("%s: server %q: %w", where, name, err)
		}
		p := prefix(name)
		if other, ok := byPrefix[p]; ok {
			return fmt.Errorf("%s: servers %q and %q would both name their tools %s*; rename one", where, other, name, p)
		}
		for q, other := range byPrefix {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return fmt.Errorf("%s: servers %q and %q: tool names %s* and %s* could clash; rename one", where, other, name, q, p)
			}
		}
		byPrefix[p] = name
	}
	return nil
}

// validate checks the server called name.
func (s Server) validate(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case len(name) > maxServerName:
		return fmt.Errorf("the name is longer than %d characters", maxServerName)
	}
	switch s.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	case "sse":
		return errors.New(`type "sse" (the older HTTP+SSE transport) is not supported; give the server's Streamable HTTP endpoint`)
	default:
		return fmt.Errorf(`unknown type %q: want "stdio" or "http"`, s.Type)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New(`has neither "command" nor "url"`)
	case s.Command != "" && s.URL != "":
		return errors.New(`has both "command" and "url"; give one`)
	case s.Command != "" && s.Type != "" && s.Type != "stdio":
		return fmt.Errorf(`type %q needs "url", not "command"`, s.Type)
	case s.URL != "" && s.Type == "stdio":
		return errors.New(`type "stdio" needs "command", not "url"`)
	case s.Command != "" && len(s.Headers) > 0:
		return errors.New(`"headers" are for servers reached by "url"`)
	case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != ""):
		return errors.New(`"args", "env" and "cwd" are for servers run by "command"`)
	}
	// Every reference must resolve now, so that a missing secret stops the
	// worker at once rather than failing its first call.
	x, _, err := s.expanded(os.LookupEnv)
	if err != nil {
		return err
	}
	if s.URL != "" {
		u, err := url.Parse(x.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q: want an http:// or https:// address", s.URL)
		}
	}
	return nil
}

// expanded is s with the references of its fields replaced by their values
// from lookup (see expand); an error names the field. pairs are, for each
// field that a reference changed, its value and the field as written, for a
// replacer that hides the values again; short values (a port, a flag) are
// no secret and would be put back in the wrong places, so they are left out.
func (s Server) expanded(lookup func(string) (string, bool)) (x Server, pairs []string, err error) {
	field := func(name, v string) string {
		if err != nil {
			return ""
		}
		out, e := expand(v, lookup)
		if e != nil {
			err = fmt.Errorf("%s: %w", name, e)
		}
		if out != v && len(out) >= 4 {
			pairs = append(pairs, out, v)
		}
		return out
	}
	x = s
	x.Command = field("command", s.Command)
	x.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		x.Args[i] = field(fmt.Sprintf("args[%d]", i), a)
	}
	x.Env = make(map[string]string, len(s.Env))
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		x.Env[k] = field("env."+k, s.Env[k])
	}
	x.Cwd = field("cwd", s.Cwd)
	x.URL = field("url", s.URL)
	x.Headers = make(map[string]string, len(s.Headers))
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		x.Headers[k] = field("headers."+k, s.Headers[k])
	}
	return x, pairs, err
}
