package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/todoflow/todoflow/model"
)

// emptySchema is sent for a tool without parameters: the API accepts a
// missing schema, but some compatible servers insist on an object schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildParams converts a model.Request into Chat Completions parameters.
func buildParams(req model.Request) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{
		Model:    req.Model,
		Messages: make([]oai.ChatCompletionMessageParamUnion, 0, len(req.Messages)),
	}
	for i, m := range req.Messages {
		msg, err := convertMessage(m)
		if err != nil {
			return params, fmt.Errorf("messages[%d]: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for i, t := range req.Tools {
		tool, err := convertTool(t)
		if err != nil {
			return params, fmt.Errorf("tools[%d] (%s): %w", i, t.Name, err)
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

func convertMessage(m model.Message) (oai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case model.RoleSystem:
		return oai.SystemMessage(m.Content), nil
	case model.RoleUser:
		// Name is dropped on purpose: see the package doc.
		return oai.UserMessage(m.Content), nil
	case model.RoleAssistant:
		var a oai.ChatCompletionAssistantMessageParam
		// Content may be left out only next to tool calls; an assistant
		// message with neither is sent as "" rather than rejected.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: argumentsText(tc.Arguments),
					},
				},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case model.RoleTool:
		if m.ToolCallID == "" {
			// The server would answer 400 anyway; saying which message is
			// wrong here is far more useful than its generic complaint.
			return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message has no tool_call_id")
		}
		return oai.ToolMessage(m.Content, m.ToolCallID), nil
	default:
		return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

func convertTool(t model.ToolSpec) (oai.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool has no name")
	}
	schema := t.Parameters
	if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
		schema = emptySchema
	}
	// Decoding only the top level and keeping each value as raw JSON sends
	// the schema byte for byte: a full decode into map[string]any would turn
	// large integers into floats.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("parameters must be a JSON Schema object: %w", err)
	}
	if top == nil {
		return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("parameters must be a JSON Schema object, not null")
	}
	params := make(shared.FunctionParameters, len(top))
	for k, v := range top {
		params[k] = v
	}
	fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		fn.Description = param.NewOpt(t.Description)
	}
	return oai.ChatCompletionFunctionTool(fn), nil
}

// argumentsText turns stored arguments back into the text the model sent.
// Arguments that were wrapped as a JSON string because they were not an
// object are unwrapped, so that the model sees its own mistake verbatim.
func argumentsText(args json.RawMessage) string {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return "{}"
	}
	if trimmed[0] == '"' {
		var s string
		if err := json.Unmarshal(trimmed, &s); err == nil {
			return s
		}
	}
	return string(trimmed)
}

// normalizeArguments turns the model's argument text into a JSON object.
// Anything that is not an object is wrapped as a JSON string rather than
// dropped, so the tool layer can report what the model actually sent.
func normalizeArguments(text string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(text))
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	wrapped, _ := json.Marshal(text) // marshalling a string cannot fail
	return json.RawMessage(wrapped)
}

// convertResponse converts the first choice of a completion. call is the
// request's call number, used to name tool calls that a server left without
// an id (some compatible servers do), so that the tool messages can still
// refer to them.
func convertResponse(c *oai.ChatCompletion, call int) (model.Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return model.Response{}, errNoChoices
	}
	msg := c.Choices[0].Message
	resp := model.Response{
		Content:   msg.Content,
		ToolCalls: make([]model.ToolCall, 0, len(msg.ToolCalls)),
		Usage: model.Usage{
			PromptTokens:     c.Usage.PromptTokens,
			CompletionTokens: c.Usage.CompletionTokens,
		},
	}
	if resp.Content == "" && msg.Refusal != "" {
		// A refusal is the model's answer to the user; dropping it would
		// leave an empty reply with no explanation.
		resp.Content = msg.Refusal
	}
	for i, tc := range msg.ToolCalls {
		name, args := tc.Function.Name, tc.Function.Arguments
		if tc.Type == "custom" {
			name, args = tc.Custom.Name, tc.Custom.Input
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", call, i)
		}
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{
			ID:        id,
			Name:      name,
			Arguments: normalizeArguments(args),
		})
	}
	return resp, nil
}
