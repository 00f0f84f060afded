package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
)

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
