package scenario

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{"minimal", `{"input":{"prompt":"hi"},"model":[{"content":"hello"}]}`, ""},
		{"actions", `{"input":{"prompt":"hi"},"user":[{"when":"paused","signal":"resume","args":"go"},{"when":"awaiting_approval","update":"approve_plan","args":{"approved":true}}]}`, ""},
		{"not JSON", `{`, "not a valid scenario"},
		{"unknown top-level field", `{"modle":[]}`, `unknown field "modle"`},
		{"unknown input field", `{"input":{"promt":"hi"}}`, `input: json: unknown field "promt"`},
		{"bad input value", `{"input":{"max_turns":-1}}`, "input: max_turns is -1"},
		{"carry", `{"input":{"carry":{}}}`, "continue-as-new only"},
		{"tool call without name", `{"model":[{"tool_calls":[{"arguments":{}}]}]}`, "model[0]: tool_calls[0]: name is missing"},
		{"arguments not an object", `{"model":[{"tool_calls":[{"name":"x","arguments":"{}"}]}]}`, "arguments must be an object"},
		{"subagent response", `{"agents":{"impl":[{"delay_ms":-5}]}}`, "agents.impl[0]: delay_ms is -5"},
		{"unknown status", `{"user":[{"when":"running","signal":"resume"}]}`, `user[0]: when "running"`},
		{"update and signal", `{"user":[{"when":"paused","signal":"resume","update":"send_message"}]}`, "not both"},
		{"unknown update", `{"user":[{"when":"paused","update":"approve"}]}`, `unknown update "approve"`},
		{"no message", `{"user":[{"when":"paused"}]}`, "needs an update or a signal"},
		{"negative time limit", `{"time_limit_s":-1}`, "time_limit_s is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestRunInputUsesTheFileAsScript(t *testing.T) {
	sc, err := Parse([]byte(`{"input":{"prompt":"hi"}}`))
	if err != nil {
		t.Fatal(err)
	}
	sc.Path = "/x/s.json"
	if got := sc.RunInput().Model; got != "script:/x/s.json" {
		t.Errorf("model = %q", got)
	}
	sc.Input.Model = "openai:m"
	if got := sc.RunInput().Model; got != "openai:m" {
		t.Errorf("a named model was replaced: %q", got)
	}
}

func TestReply(t *testing.T) {
	msgs := []json.RawMessage{
		json.RawMessage(`{"role":"assistant","content":"first","tool_calls":[]}`),
		json.RawMessage(`{"role":"assistant","content":"calls","tool_calls":[{"id":"1","name":"x","arguments":{}}]}`),
		json.RawMessage(`{"role":"tool","content":"ok","tool_calls":[]}`),
	}
	if got := Reply(msgs); got != "first" {
		t.Errorf("reply = %q, want the last assistant message without tool calls", got)
	}
	if Reply(nil) != "" {
		t.Error("reply of nothing")
	}
}
