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

	"github.com/google/jsonschema-go/jsonschema"

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
// spec, with github.com/google/jsonschema-go, and then unmarshals them into
// v. Empty or null arguments count as an empty object, because models send
// them for tools without parameters; anything else must be an object.
//
// Errors name the tool and the problem, so that the model can correct its
// call. When a call has several, which one is named may vary: the library
// walks the arguments in map order.
func DecodeArgs(spec model.ToolSpec, args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj any
	if err := json.Unmarshal(args, &obj); err != nil {
		return fmt.Errorf("%s: arguments must be a JSON object, got text that is not valid JSON", spec.Name)
	}
	if _, ok := obj.(map[string]any); !ok {
		return fmt.Errorf("%s: arguments must be a JSON object, got %s", spec.Name, describeJSON(obj, args))
	}
	if rs := resolvedSchema(spec.Parameters); rs != nil {
		if err := rs.Validate(obj); err != nil {
			return argsError(spec.Name, rs.Schema(), err)
		}
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("%s: invalid arguments: %w", spec.Name, err)
	}
	return nil
}

// schemas caches resolvedSchema's answers by the schema's text: nil for a
// schema it cannot use. An MCP server may change its schemas at any
// listing, so the cache is bounded: when full, it starts again.
var schemas struct {
	sync.Mutex
	m map[string]*jsonschema.Resolved
}

// maxSchemas bounds the schemas cache; a worker's tools are far fewer.
const maxSchemas = 512

// resolvedSchema returns the resolved schema of a tool's parameters, or nil
// when there is none that jsonschema-go can validate with. Schemas from MCP
// servers may be of another draft (draft-04's boolean exclusiveMinimum,
// 2019-09) or refer to remote schemas: their tools must stay usable, so
// their arguments are only checked to be an object, and the server checks
// the rest.
func resolvedSchema(params json.RawMessage) *jsonschema.Resolved {
	schemas.Lock()
	defer schemas.Unlock()
	if rs, ok := schemas.m[string(params)]; ok {
		return rs
	}
	var rs *jsonschema.Resolved
	var s jsonschema.Schema
	if json.Unmarshal(params, &s) == nil && slices.Contains(validatedDrafts, s.Schema) {
		rs, _ = s.Resolve(nil)
	}
	if schemas.m == nil || len(schemas.m) >= maxSchemas {
		schemas.m = map[string]*jsonschema.Resolved{}
	}
	schemas.m[string(params)] = rs
	return rs
}

// validatedDrafts are the "$schema"s that jsonschema-go validates with; it
// resolves a schema of another draft, then refuses every call.
var validatedDrafts = []string{
	"",
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft/2020-12/schema",
}

// argsError rephrases an error of jsonschema-go, which says where in the
// schema it failed, as a problem with an argument, on one line: "validating
// root: validating /properties/path: type: 3 has type \"integer\", want
// \"string\"" becomes `invalid argument "path": has type "integer", want
// "string"`.
func argsError(tool string, schema *jsonschema.Schema, err error) error {
	m := schemaPath.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%s: invalid arguments: %w", tool, err)
	}
	arg, msg := m[1], typeValue.ReplaceAllString(m[2], "$1")
	if numberBound.MatchString(msg) {
		msg = wholeNumber.ReplaceAllString(msg, "$1")
	}
	if arg == "" && strings.HasPrefix(msg, "unexpected additional properties") {
		msg += fmt.Sprintf(" (accepted: %s)", strings.Join(text.SortedKeys(schema.Properties), ", "))
	}
	// The library quotes the value it refused, which may be long: its
	// middle goes, the rule that refused it (at the end) stays.
	if msg = text.OneLine(msg); len(msg) > 300 {
		msg = text.Cut(msg, 150) + " … " + msg[text.NextRuneStart(msg, len(msg)-150):]
	}
	if arg != "" {
		return fmt.Errorf("%s: invalid argument %q: %s", tool, arg, msg)
	}
	return fmt.Errorf("%s: invalid arguments: %s", tool, msg)
}

var (
	// schemaPath is the schemas an error went through (the first argument
	// among them, m[1]) and the error (m[2]).
	schemaPath = regexp.MustCompile(`(?s)^validating root: (?:validating /properties/([^/ ]+)[^ ]*: )?(?:validating [^ ]+: )*(.*)$`)
	// typeValue is a "type" error, whose value, printed as Go prints it
	// (map[x:1], <invalid reflect.Value> for null), says less than its type.
	typeValue = regexp.MustCompile(`(?s)^type: .* (has type "[^"]*", want .*)$`)
	// numberBound is an error of a number's bound, whose numbers read as
	// big.Rat and %f print them (-1/1, 0.000000); wholeNumber is such a
	// number when it is whole.
	numberBound = regexp.MustCompile(`^(exclusiveM|m)(inimum|aximum): `)
	wholeNumber = regexp.MustCompile(`(-?\b\d+)(/1|\.0+)\b`)
)

// describeJSON names what a model sent instead of an object (obj, decoded
// from raw), quoting a short string so that the model sees its mistake.
func describeJSON(obj any, raw json.RawMessage) string {
	switch obj.(type) {
	case string:
		if len(raw) <= 80 {
			return "the string " + string(raw)
		}
		return "a string"
	case []any:
		return "an array"
	case bool:
		return "a boolean"
	}
	return "a number"
}
