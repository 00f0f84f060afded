package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
)

// A worker's tools are the built-ins plus its own, in one registry that is
// given to the activities the worker registers.
func ExampleRegistry_Register() {
	wordCount := model.ToolSpec{
		Name:        "word_count",
		Description: "Count the words of a text.",
		Parameters: json.RawMessage(`{
			"type": "object",
			"properties": {"text": {"type": "string"}},
			"required": ["text"],
			"additionalProperties": false
		}`),
	}
	reg := tools.DefaultRegistry()
	err := reg.Register(tools.New(wordCount, func(ctx context.Context, env tools.Env, raw json.RawMessage) (string, error) {
		var args struct{ Text string }
		if err := tools.DecodeArgs(wordCount, raw, &args); err != nil {
			return "", err
		}
		return fmt.Sprint(len(strings.Fields(args.Text))), nil
	}))
	if err != nil {
		panic(err)
	}

	// In the worker's main:
	//	w.RegisterActivity(&activities.Activities{Tools: reg, StateDir: stateDir})
	fmt.Println(reg.Names())

	tool, _ := reg.Lookup("word_count")
	out, _ := tool.Run(context.Background(), tools.Env{}, json.RawMessage(`{"text": "to do or not to do"}`))
	fmt.Println(out)
	// Output:
	// [list_files read_file word_count write_file]
	// 6
}

func tool(name string, params string) tools.Tool {
	spec := model.ToolSpec{Name: name, Description: "test tool " + name}
	if params != "" {
		spec.Parameters = json.RawMessage(params)
	}
	return tools.New(spec, func(context.Context, tools.Env, json.RawMessage) (string, error) {
		return name, nil
	})
}

func TestRegister(t *testing.T) {
	tests := []struct {
		name    string
		tool    tools.Tool
		wantErr string // empty: registered
	}{
		{"new tool", tool("grep", `{"type":"object"}`), ""},
		{"no parameters", tool("now", ""), ""},
		{"duplicate of a built-in", tool("read_file", ""), `"read_file": a tool with this name is already registered`},
		{"empty name", tool("", ""), "name is empty"},
		{"name with a space", tool("my tool", ""), "name must be"},
		{"name too long", tool(strings.Repeat("x", 65), ""), "name must be"},
		{"parameters not an object", tool("bad", `[1]`), "parameters must be a JSON Schema object"},
		{"parameters not JSON", tool("bad", `{`), "parameters must be a JSON Schema object"},
		{"nil tool", nil, "tool is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := tools.DefaultRegistry()
			err := reg.Register(tt.tool)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				if _, ok := reg.Lookup(tt.tool.Spec().Name); !ok {
					t.Fatalf("Lookup(%q) after Register: not found", tt.tool.Spec().Name)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Register: got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRegisterTwice(t *testing.T) {
	var reg tools.Registry // the zero Registry is usable
	if err := reg.Register(tool("a", "")); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(tool("a", "")); err == nil {
		t.Fatal("second Register of the same name succeeded")
	}
}

func TestNewRegistryPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewRegistry with a duplicate did not panic")
		}
	}()
	tools.NewRegistry(tool("a", ""), tool("a", ""))
}

func specNames(specs []model.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func TestSpecs(t *testing.T) {
	reg := tools.NewRegistry(tool("zeta", ""), tool("alpha", ""), tool("mid", ""), tool("mcp_like", ""))
	tests := []struct {
		name  string
		allow []string
		want  []string
	}{
		{"nil allows all, sorted", nil, []string{"alpha", "mcp_like", "mid", "zeta"}},
		{"empty allows none", []string{}, nil},
		{"filter keeps name order", []string{"zeta", "alpha"}, []string{"alpha", "zeta"}},
		{"unknown names ignored", []string{"mid", "nope"}, []string{"mid"}},
		{"star allows all", []string{"*"}, []string{"alpha", "mcp_like", "mid", "zeta"}},
		{"pattern", []string{"m*"}, []string{"mcp_like", "mid"}},
		{"class and name", []string{"[a-l]*", "zeta"}, []string{"alpha", "zeta"}},
		{"bad pattern allows nothing", []string{"[a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 5 { // map order must not leak out
				specs, err := reg.Specs(context.Background(), tt.allow)
				if err != nil {
					t.Fatal(err)
				}
				if got := specNames(specs); !slices.Equal(got, tt.want) {
					t.Fatalf("Specs(%q) = %q, want %q", tt.allow, got, tt.want)
				}
			}
		})
	}
	if got, want := reg.Names(), []string{"alpha", "mcp_like", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}

// source is a Source whose tools are the names given, or its error; it
// counts how often it was asked.
type source struct {
	prefix string
	names  []string
	err    error
	asked  atomic.Int32
}

func (s *source) Prefix() string { return s.prefix }

func (s *source) Tools(context.Context) ([]tools.Tool, error) {
	s.asked.Add(1)
	if s.err != nil {
		return nil, s.err
	}
	var list []tools.Tool
	for _, n := range s.names {
		list = append(list, tool(s.prefix+n, `{"type":"object"}`))
	}
	return list, nil
}

func TestSources(t *testing.T) {
	ctx := context.Background()
	orders := &source{prefix: "mcp__orders__", names: []string{"list", "cancel"}}
	down := &source{prefix: "mcp__down__", err: errors.New("MCP server down: connection refused")}
	reg := tools.NewRegistry(tool("read_file", ""))
	for _, s := range []tools.Source{orders, down} {
		if err := reg.AddSource(s); err != nil {
			t.Fatal(err)
		}
	}

	specs, err := reg.Specs(ctx, nil)
	if got, want := specNames(specs), []string{"mcp__orders__cancel", "mcp__orders__list", "read_file"}; !slices.Equal(got, want) {
		t.Errorf("Specs(nil) = %q, want %q: a source that is down costs only its own tools", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Specs(nil) error = %v, want the failing source's", err)
	}

	// Sources the restriction cannot match are not asked (not started).
	orders.asked.Store(0)
	down.asked.Store(0)
	specs, err = reg.Specs(ctx, []string{"mcp__orders__l*", "read_file"})
	if got, want := specNames(specs), []string{"mcp__orders__list", "read_file"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Specs(pattern) = %q, %v; want %q", got, err, want)
	}
	if orders.asked.Load() != 1 || down.asked.Load() != 0 {
		t.Errorf("asked orders %d and down %d times, want 1 and 0", orders.asked.Load(), down.asked.Load())
	}
	if _, err := reg.Specs(ctx, []string{}); err != nil || orders.asked.Load() != 1 {
		t.Errorf("Specs(none) asked a source (err %v)", err)
	}

	for _, tt := range []struct {
		name    string
		found   bool
		wantErr string
	}{
		{"read_file", true, ""},
		{"mcp__orders__cancel", true, ""},
		{"mcp__orders__refund", false, ""},
		{"mcp__down__anything", false, "connection refused"},
		{"nope", false, ""},
	} {
		tool, found, err := reg.Find(ctx, tt.name)
		if found != tt.found || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("Find(%q) = %v, %v; want found %v, error containing %q", tt.name, found, err, tt.found, tt.wantErr)
		}
		if found && tool.Spec().Name != tt.name {
			t.Errorf("Find(%q) returned %q", tt.name, tool.Spec().Name)
		}
	}
}

func TestAddSourceClashes(t *testing.T) {
	tests := []struct {
		name    string
		prefix  string
		wantErr string // empty: added
	}{
		{"another server", "mcp__billing__", ""},
		{"same prefix", "mcp__orders__", `could clash with those of source "mcp__orders__"`},
		{"starts the other", "mcp__orders__x__", "could clash"},
		{"started by the other", "mcp__ord", "could clash"},
		{"a registered tool's", "mcp__local__", `tool "mcp__local__echo" is registered`},
		{"empty", "", "prefix must be"},
		{"bad character", "mcp.x__", "prefix must be"},
		{"too long", strings.Repeat("p", 64), "prefix must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := tools.NewRegistry(tool("mcp__local__echo", ""))
			if err := reg.AddSource(&source{prefix: "mcp__orders__"}); err != nil {
				t.Fatal(err)
			}
			err := reg.AddSource(&source{prefix: tt.prefix})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("AddSource: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("AddSource(%q) = %v, want an error containing %q", tt.prefix, err, tt.wantErr)
			}
		})
	}
	reg := tools.NewRegistry()
	if err := reg.AddSource(&source{prefix: "mcp__orders__"}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(tool("mcp__orders__mine", "")); err == nil || !strings.Contains(err.Error(), "belong to a tool source") {
		t.Errorf("Register under a source's prefix = %v, want a refusal", err)
	}
}

func TestDefaultRegistrySpecs(t *testing.T) {
	specs, err := tools.DefaultRegistry().Specs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
		var schema map[string]any
		if err := json.Unmarshal(s.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: parameters are not an object schema: %s", s.Name, s.Parameters)
		}
	}
	if want := []string{"list_files", "read_file", "write_file"}; !slices.Equal(names, want) {
		t.Errorf("built-ins = %q, want %q", names, want)
	}
}

func TestDecodeArgs(t *testing.T) {
	spec := model.ToolSpec{
		Name: "probe",
		Parameters: json.RawMessage(`{
			"type": "object",
			"properties": {
				"s": {"type": "string", "maxLength": 200},
				"n": {"type": "integer", "minimum": 0},
				"f": {"type": "number"},
				"b": {"type": "boolean"},
				"opt": {"type": ["string", "null"]},
				"tags": {"type": "array", "items": {"type": "string"}}
			},
			"required": ["s"],
			"additionalProperties": false
		}`),
	}
	type args struct {
		S   string
		N   int
		F   float64
		B   bool
		Opt *string
	}
	tests := []struct {
		args    string
		wantErr string
	}{
		{`{"s": "x"}`, ""},
		{`{"s": "x", "n": 3, "f": 3, "b": true, "opt": null}`, ""},
		{`{"s": "x", "f": 1.5e3, "opt": "y"}`, ""},
		{``, `probe: invalid arguments: required: missing properties: ["s"]`},
		{`null`, `probe: invalid arguments: required: missing properties: ["s"]`},
		{`{}`, `probe: invalid arguments: required: missing properties: ["s"]`},
		{`[1, 2]`, `probe: arguments must be a JSON object, got an array`},
		{`"list the files"`, `probe: arguments must be a JSON object, got the string "list the files"`},
		{`42`, `probe: arguments must be a JSON object, got a number`},
		{`{"s": `, `probe: arguments must be a JSON object, got text that is not valid JSON`},
		{`{"s": "x"} {}`, `probe: arguments must be a JSON object, got text that is not valid JSON`},
		{`{"s": 1}`, `probe: invalid argument "s": has type "integer", want "string"`},
		{`{"s": "x", "n": 1.5}`, `probe: invalid argument "n": has type "number", want "integer"`},
		{`{"s": "x", "b": "yes"}`, `probe: invalid argument "b": has type "string", want "boolean"`},
		{`{"s": "x", "opt": 1}`, `probe: invalid argument "opt": has type "integer", want one of "string, null"`},
		{`{"s": "x", "extra": 1}`, `probe: invalid arguments: unexpected additional properties ["extra"] (accepted: b, f, n, opt, s, tags)`},
		{`{"s": "x", "n": -2}`, `probe: invalid argument "n": minimum: -2 is less than 0`},
		{`{"s": "x", "tags": ["a", 2]}`, `probe: invalid argument "tags": has type "integer", want "string"`},
		// The middle of a long value goes, the rule stays.
		{`{"s": "` + strings.Repeat("x", 400) + `"}`, `probe: invalid argument "s": maxLength: "` + strings.Repeat("x", 138) + ` … ` + strings.Repeat("x", 101) + `" contains 400 Unicode code points, more than 200`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var a args
			err := tools.DecodeArgs(spec, json.RawMessage(tt.args), &a)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("DecodeArgs: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("DecodeArgs: got error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDecodeArgsAllowsUnknownWithoutAdditionalPropertiesFalse(t *testing.T) {
	spec := model.ToolSpec{Name: "loose", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	var v struct{ A string }
	if err := tools.DecodeArgs(spec, json.RawMessage(`{"a":"x","b":2}`), &v); err != nil || v.A != "x" {
		t.Fatalf("DecodeArgs = %v, %+v", err, v)
	}
}

// Schemas from MCP servers may be of a draft, or use keywords, that
// jsonschema-go cannot resolve or validate with: their tools stay usable,
// with arguments only checked to be an object (the server checks the rest).
func TestDecodeArgsWithoutAUsableSchema(t *testing.T) {
	for _, params := range []string{
		// draft-04: a boolean exclusiveMinimum
		`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"exclusiveMinimum":true}},"required":["n"]}`,
		// a draft the library resolves but does not validate with
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","required":["n"]}`,
		// a remote reference
		`{"type":"object","properties":{"n":{"$ref":"https://example.com/n.json"}},"required":["n"]}`,
	} {
		spec := model.ToolSpec{Name: "legacy", Parameters: json.RawMessage(params)}
		var v struct{ M string }
		if err := tools.DecodeArgs(spec, json.RawMessage(`{"m":"x"}`), &v); err != nil || v.M != "x" {
			t.Errorf("DecodeArgs with %s = %v, %+v; want the arguments decoded", params, err, v)
		}
		want := `legacy: arguments must be a JSON object, got an array`
		if err := tools.DecodeArgs(spec, json.RawMessage(`[1]`), &v); err == nil || err.Error() != want {
			t.Errorf("DecodeArgs([1]) with %s = %v, want %q", params, err, want)
		}
	}
}

func TestRetryable(t *testing.T) {
	if tools.Retryable(nil) != nil {
		t.Error("Retryable(nil) != nil")
	}
	base := errors.New("connection reset")
	err := tools.Retryable(fmt.Errorf("fetch: %w", base))
	if !errors.Is(err, base) {
		t.Error("Retryable hides the error it wraps")
	}
	if err.Error() != "fetch: connection reset" {
		t.Errorf("Retryable changed the message: %q", err)
	}
}

func TestOpenWorkspace(t *testing.T) {
	t.Chdir(t.TempDir())
	ws, err := tools.OpenWorkspace(filepath.FromSlash("relative/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if !strings.HasSuffix(ws.Dir(), filepath.FromSlash("relative/ws")) || !filepath.IsAbs(ws.Dir()) {
		t.Errorf("Dir() = %q, want an absolute path ending in relative/ws", ws.Dir())
	}
	if fi, err := ws.Root().Stat("."); err != nil || !fi.IsDir() {
		t.Errorf("the workspace folder: %v, %v; want it created and open", fi, err)
	}
	if _, err := tools.OpenWorkspace(""); err == nil {
		t.Error(`OpenWorkspace("") succeeded`)
	}
	var zero tools.Workspace
	if zero.Root() != nil || zero.Close() != nil {
		t.Error("the zero Workspace has a folder")
	}
	if _, err := zero.Clean("a"); err == nil {
		t.Error("Clean of the zero Workspace succeeded")
	}
}
