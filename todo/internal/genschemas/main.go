// Command genschemas writes the JSON schemas of the todo package's tools,
// generated from their argument structs (todo.Table) with
// github.com/google/jsonschema-go, into todo/tools/schemas.json, which the
// todo package embeds (it imports nothing but the standard library). Run it
// with `go generate ./todo`; TestSchemasAreCurrent fails while the file is
// stale.
//
// A schema is rendered the way the model has read it since v0.1.0: compact,
// "type" first, then "properties" (in the struct's field order) and
// "required", then the keywords of the field's schema tag in the order it
// names them, then "items" and "description" unless the tag placed them.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/todoflow/todoflow/todo"
)

func main() {
	b, err := generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("tools/schemas.json", b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// generate returns the file: a JSON object of the tools' schemas, one tool
// a line, in the table's order.
func generate() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, t := range todo.Table() {
		s, err := schemaOf(t.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		name, _ := json.Marshal(t.Name)
		fmt.Fprintf(&b, "%s: %s", name, s)
		if i < len(todo.Table())-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// schemaOf renders the schema of the argument struct args.
func schemaOf(args any) ([]byte, error) {
	t := reflect.TypeOf(args)
	s, err := inferred(t)
	if err != nil {
		return nil, err
	}
	g := &gen{order: map[*jsonschema.Schema][]string{}}
	if err := g.walk(t, s); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := g.render(&b, s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// inferred is jsonschema-go's schema of t, with a json.RawMessage argument
// taken for an object.
func inferred(t reflect.Type) (*jsonschema.Schema, error) {
	return jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
}

// gen completes inferred schemas with the schema tags and keeps each
// schema's keyword order.
type gen struct {
	order map[*jsonschema.Schema][]string
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// walk makes s, inferred from t, what the model reads: arrays and objects
// without the null and the additionalProperties the library adds (the
// tools' readers accept unknown fields), and the schema tags applied.
func (g *gen) walk(t reflect.Type, s *jsonschema.Schema) error {
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	switch {
	case t == rawMessage:
	case t.Kind() == reflect.Slice:
		return g.walk(t.Elem(), s.Items)
	case t.Kind() == reflect.Struct:
		s.AdditionalProperties = nil
		if s.Properties == nil {
			s.Properties = map[string]*jsonschema.Schema{}
		}
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := s.Properties[name]
			if !f.IsExported() || p == nil {
				continue
			}
			if err := g.walk(f.Type, p); err != nil {
				return err
			}
			if err := g.tag(p, f.Tag.Get("schema")); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

// tag applies a schema tag: space-separated keywords, "name=value" or a
// bare "items" or "description" to place them; "items." applies a keyword
// to the items' schema.
func (g *gen) tag(s *jsonschema.Schema, tag string) error {
	for _, kw := range strings.Fields(tag) {
		target := s
		if rest, ok := strings.CutPrefix(kw, "items."); ok {
			if s.Items == nil {
				return fmt.Errorf("%q: not an array", kw)
			}
			target, kw = s.Items, rest
		}
		name, value, _ := strings.Cut(kw, "=")
		var err error
		switch name {
		case "items", "description":
		case "enum":
			for _, v := range strings.Split(value, "|") {
				target.Enum = append(target.Enum, v)
			}
		case "pattern":
			target.Pattern = value
		case "minimum", "maximum":
			var f float64
			if f, err = strconv.ParseFloat(value, 64); err == nil {
				*map[string]**float64{"minimum": &target.Minimum, "maximum": &target.Maximum}[name] = &f
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			var n int
			if n, err = strconv.Atoi(value); err == nil {
				*map[string]**int{"minLength": &target.MinLength, "maxLength": &target.MaxLength,
					"minItems": &target.MinItems, "maxItems": &target.MaxItems}[name] = &n
			}
		default:
			return fmt.Errorf("unknown schema keyword %q", name)
		}
		if err != nil {
			return fmt.Errorf("%q: %w", kw, err)
		}
		g.order[target] = append(g.order[target], name)
	}
	return nil
}

// render writes s compactly, in the order the package doc tells: the
// keywords' values as the library marshals them, the subschemas rendered
// the same way.
func (g *gen) render(b *bytes.Buffer, s *jsonschema.Schema) error {
	raw, err := json.Marshal(s)
	var kw map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(raw, &kw)
	}
	if err != nil {
		return err
	}
	b.WriteString(`{"type":` + string(kw["type"]))
	if s.Properties != nil {
		b.WriteString(`,"properties":{`)
		for i, name := range s.PropertyOrder {
			if i > 0 {
				b.WriteByte(',')
			}
			n, _ := json.Marshal(name)
			b.WriteString(string(n) + ":")
			if err := g.render(b, s.Properties[name]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	order := append([]string{"required"}, g.order[s]...)
	for _, last := range []string{"items", "description"} {
		if !slices.Contains(order, last) {
			order = append(order, last)
		}
	}
	for _, k := range order {
		switch {
		case k == "items" && s.Items != nil:
			b.WriteString(`,"items":`)
			if err := g.render(b, s.Items); err != nil {
				return err
			}
		case k != "items" && kw[k] != nil:
			b.WriteString(`,"` + k + `":` + string(kw[k]))
		}
	}
	b.WriteByte('}')
	return nil
}
