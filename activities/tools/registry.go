package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// Source offers tools that are found when the worker runs rather than fixed
// in its code: the tools of an MCP server (package activities/mcp), listed
// when first needed. The name of every tool of a source starts with its
// Prefix, so that the registry knows which source to ask for a name without
// asking them all.
type Source interface {
	Prefix() string
	// Tools returns the source's tools, finding them first if it must (and
	// then it may take a while: a server to start). An error means the
	// tools cannot be known now; the next call tries again.
	Tools(ctx context.Context) ([]Tool, error)
}

// Registry holds the tools a worker offers, by name, and the sources of
// further tools. Its methods are safe for concurrent use, so one registry can
// serve every activity of a worker.
type Registry struct {
	mu      sync.RWMutex
	tools   map[string]Tool
	sources []Source
}

// NewRegistry returns a registry holding tools. It panics if a tool cannot be
// registered (see Register): the tools of a worker are fixed in its code, so a
// mistake there is a programming error, as with regexp.MustCompile.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool)}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
	return r
}

// toolName is what the OpenAI API accepts as a function name; other providers
// accept at least as much.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Register adds t. It refuses a tool whose name is empty, is not made of
// letters, digits, '_' and '-' (at most 64), is already registered or starts
// with the prefix of a source, and a tool whose parameters are not a JSON
// object: the model would reject the whole request, not just the tool.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return errors.New("register tool: tool is nil")
	}
	spec := t.Spec()
	if err := CheckSpec(spec); err != nil {
		return fmt.Errorf("register %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tools == nil {
		r.tools = make(map[string]Tool)
	}
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("register tool %q: a tool with this name is already registered", spec.Name)
	}
	for _, s := range r.sources {
		if strings.HasPrefix(spec.Name, s.Prefix()) {
			return fmt.Errorf("register tool %q: names starting with %q belong to a tool source", spec.Name, s.Prefix())
		}
	}
	r.tools[spec.Name] = t
	return nil
}

// CheckSpec checks what Register checks of a tool's spec: a name of 1 to 64
// letters, digits, '_' or '-', and parameters (if any) that are a JSON
// object. Sources use it for the tools they find.
func CheckSpec(spec model.ToolSpec) error {
	if spec.Name == "" {
		return errors.New("tool name is empty")
	}
	if !toolName.MatchString(spec.Name) {
		return fmt.Errorf("tool %q: name must be 1 to 64 letters, digits, '_' or '-'", spec.Name)
	}
	if len(spec.Parameters) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(spec.Parameters, &obj); err != nil || obj == nil {
			return fmt.Errorf("tool %q: parameters must be a JSON Schema object", spec.Name)
		}
	}
	return nil
}

// AddSource adds the tools of s. It refuses a source whose prefix is not a
// valid start of a tool name, or could give a name that another source or a
// registered tool has: one prefix must not start another.
func (r *Registry) AddSource(s Source) error {
	if s == nil {
		return errors.New("add tool source: source is nil")
	}
	prefix := s.Prefix()
	if len(prefix) >= 64 || !toolName.MatchString(prefix) {
		return fmt.Errorf("add tool source %q: the prefix must be 1 to 63 letters, digits, '_' or '-'", prefix)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.sources {
		if p := o.Prefix(); strings.HasPrefix(prefix, p) || strings.HasPrefix(p, prefix) {
			return fmt.Errorf("add tool source %q: its tool names could clash with those of source %q", prefix, p)
		}
	}
	for name := range r.tools {
		if strings.HasPrefix(name, prefix) {
			return fmt.Errorf("add tool source %q: tool %q is registered with that prefix", prefix, name)
		}
	}
	r.sources = append(r.sources, s)
	return nil
}

// Lookup returns the registered tool called name. It does not ask the
// sources; Find does.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Find returns the tool called name: a registered tool, or a tool of the
// source whose prefix name starts with, which is asked for its tools (and may
// start a server to answer). The error is the source's, when it cannot tell.
func (r *Registry) Find(ctx context.Context, name string) (Tool, bool, error) {
	if t, ok := r.Lookup(name); ok {
		return t, true, nil
	}
	for _, s := range r.sourceList() {
		if !strings.HasPrefix(name, s.Prefix()) {
			continue
		}
		tools, err := s.Tools(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, t := range tools {
			if t.Spec().Name == name {
				return t, true, nil
			}
		}
		return nil, false, nil
	}
	return nil, false, nil
}

// Names returns the names of the registered tools, sorted; not those of the
// sources, which Specs returns.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.tools))
}

func (r *Registry) sourceList() []Source {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.sources)
}

// Specs returns the specs of the tools that allow allows (see Allowed: nil
// allows every tool, an empty list none), registered and from sources, sorted
// by name so that the model request is the same every time.
//
// Sources that allow cannot match are not asked; the others are asked
// together. The tools of a source that fails are left out, and its error is
// returned (joined with the others') beside the specs of the rest: one server
// that is down must not take every tool away from the model.
func (r *Registry) Specs(ctx context.Context, allow []string) ([]model.ToolSpec, error) {
	var specs []model.ToolSpec
	for _, name := range r.Names() {
		if !todo.Allowed(allow, name) {
			continue
		}
		if t, ok := r.Lookup(name); ok {
			specs = append(specs, t.Spec())
		}
	}
	sources := r.sourceList()
	found := make([][]Tool, len(sources))
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, s := range sources {
		if todo.MayAllowPrefix(allow, s.Prefix()) {
			wg.Go(func() { found[i], errs[i] = s.Tools(ctx) })
		}
	}
	wg.Wait()
	for i, tools := range found {
		for _, t := range tools {
			spec := t.Spec()
			if strings.HasPrefix(spec.Name, sources[i].Prefix()) && todo.Allowed(allow, spec.Name) {
				specs = append(specs, spec)
			}
		}
	}
	slices.SortFunc(specs, func(a, b model.ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	return specs, errors.Join(errs...)
}

// DecodeArgs checks the arguments a model sent against the JSON Schema of
// spec and then unmarshals them into v. It understands enough of JSON Schema
// for tool parameters: the arguments must be an object; properties listed in
// "required" must be present; a property's "type" (a name or a list of names)
// must match; and with "additionalProperties": false, other properties are
// refused. Empty or null arguments count as an empty object, because models
// send them for tools without parameters.
//
// Errors name the tool and the problem, so that the model can correct its call.
func DecodeArgs(spec model.ToolSpec, args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if args[0] != '{' || json.Unmarshal(args, &obj) != nil {
		return fmt.Errorf("%s: arguments must be a JSON object, got %s", spec.Name, describeJSON(args))
	}

	var schema struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
		Required             []string `json:"required"`
		AdditionalProperties *bool    `json:"additionalProperties"`
	}
	if len(spec.Parameters) > 0 {
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			return fmt.Errorf("%s: the tool's parameter schema is invalid: %w", spec.Name, err)
		}
	}

	for _, name := range schema.Required {
		if _, ok := obj[name]; !ok {
			return fmt.Errorf("%s: missing required argument %q", spec.Name, name)
		}
	}
	// Sorted so that a call with several problems always gets the same error.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		prop, known := schema.Properties[k]
		if !known {
			if schema.AdditionalProperties != nil && !*schema.AdditionalProperties {
				return fmt.Errorf("%s: unknown argument %q (accepted: %s)", spec.Name, k, strings.Join(text.SortedKeys(schema.Properties), ", "))
			}
			continue
		}
		want := schemaTypes(prop.Type)
		if len(want) == 0 {
			continue
		}
		got := jsonKind(obj[k])
		if !slices.Contains(want, got) && !(got == "integer" && slices.Contains(want, "number")) {
			if got == "integer" {
				got = "number"
			}
			return fmt.Errorf("%s: argument %q must be of type %s, got %s", spec.Name, k, strings.Join(want, " or "), got)
		}
	}

	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("%s: invalid arguments: %w", spec.Name, err)
	}
	return nil
}

// schemaTypes reads a JSON Schema "type", which is a name or a list of names.
func schemaTypes(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	json.Unmarshal(raw, &many) // a schema without a usable type accepts anything
	return many
}

// jsonKind names the JSON Schema type of a valid JSON value; whole numbers are
// "integer" (and also match "number").
func jsonKind(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "number"
	}
	return "integer"
}

// describeJSON names what a model sent instead of an object, quoting short
// text so that the model sees its mistake.
func describeJSON(v json.RawMessage) string {
	if !json.Valid(v) {
		return "text that is not valid JSON"
	}
	kind := jsonKind(v)
	if kind == "integer" {
		kind = "number"
	}
	article := "a"
	if kind == "array" || kind == "object" {
		article = "an"
	}
	if kind == "string" && len(v) <= 80 {
		return fmt.Sprintf("the string %s", v)
	}
	return article + " " + kind
}
