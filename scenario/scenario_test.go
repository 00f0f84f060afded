package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/client"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{"minimal", `{"input":{"prompt":"hi"},"model":[{"content":"hello"}]}`, ""},
		{"actions", `{"input":{"prompt":"hi"},"user":[{"when":"paused","signal":"resume","args":"go"},{"when":"awaiting_approval","update":"approve_plan","args":{"approved":true}}]}`, ""},
		{"summary", `{"input":{"prompt":"hi"},"summary":"So far: the log was read.","model":[{"content":"hello"}]}`, ""},
		{"empty summary", `{"summary":""}`, ""},
		{"null summary", `{"summary":null}`, ""},
		{"summary not a string", `{"summary":7}`, "not a valid scenario: summary: got a number where a string is wanted"},
		{"summary an object", `{"summary":{"text":"x"}}`, "not a valid scenario: summary: got an object where a string is wanted"},
		{"not JSON", `{`, "not a valid scenario"},
		{"unknown top-level field", `{"modle":[]}`, `unknown field "modle"`},
		{"unknown input field", `{"input":{"promt":"hi"}}`, `input: unknown field "promt"`},
		// Found by FuzzParse: type errors named Go types.
		{"not an object", `5`, "not a valid scenario: want an object, not a number"},
		{"name not a string", `{"name":5}`, "not a valid scenario: name: got a number where a string is wanted"},
		{"fractional time limit", `{"time_limit_s":1.5}`, "time_limit_s: got the number 1.5 where a whole number is wanted"},
		{"action field", `{"user":[{"when":true}]}`, "user.when: got a boolean where a string is wanted"},
		{"input field", `{"input":{"todo":{"enabled":"yes"}}}`, "input: todo.enabled: got a string where true or false is wanted"},
		{"input not an object", `{"input":[]}`, "input: want an object, not an array"},
		{"bad input value", `{"input":{"max_turns":-1}}`, "input: max_turns is -1"},
		{"carry", `{"input":{"carry":{}}}`, "continue-as-new only"},
		{"tool call without name", `{"model":[{"tool_calls":[{"arguments":{}}]}]}`, "model[0].tool_calls[0]: name is missing"},
		{"blank tool name", `{"model":[{"tool_calls":[{"name":" "}]}]}`, "model[0].tool_calls[0]: name is missing"},
		{"arguments not an object", `{"model":[{"tool_calls":[{"name":"x","arguments":"{}"}]}]}`, "model[0].tool_calls[0].arguments: must be a JSON object, not a string"},
		{"subagent response", `{"agents":{"impl":[{"delay_ms":-5}]}}`, "agents.impl[0].delay_ms: must not be negative"},
		// Found by FuzzParse: each of these was accepted here and refused by
		// the worker's scripted model once the run had started.
		{"null response", `{"model":[null]}`, "model[0]: must be an object with content and/or tool_calls"},
		{"tool call id not a string", `{"model":[{"tool_calls":[{"name":"f","id":7}]}]}`, "model[0].tool_calls[0].id: must be a string"},
		{"delay longer than a model call", `{"model":[{"delay_ms":600001}]}`, "model[0].delay_ms: 600001 is more than 600000"},
		{"first bad agent in id order", `{"agents":{"b":[null],"a":[{"delay_ms":-1}]}}`, "agents.a[0].delay_ms"},
		{"unknown status", `{"user":[{"when":"running","signal":"resume"}]}`, `user[0]: when "running"`},
		{"update and signal", `{"user":[{"when":"paused","signal":"resume","update":"send_message"}]}`, "not both"},
		{"unknown update", `{"user":[{"when":"paused","update":"approve"}]}`, `unknown update "approve"`},
		{"no message", `{"user":[{"when":"paused"}]}`, "needs an update or a signal"},
		{"negative time limit", `{"time_limit_s":-1}`, "time_limit_s is -1"},
		// Found by FuzzParse: a limit this long overflowed into one that had
		// passed before the run started; and a second object was ignored.
		{"time limit too long", `{"time_limit_s":9223372037}`, "time_limit_s is 9223372037: want a positive number of seconds, at most 86400"},
		{"two objects", `{"name":"a"} {"name":"b"}`, "more follows the scenario's object, which ends at byte 12"},
		{"trailing garbage", `{"name":"a"}x`, "more follows"},
		{"trailing space", "{\"name\":\"a\"}\n\n", ""},
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

// The summary is kept as the file gives it: none, empty (a summary of its
// own) or a text.
func TestParseSummary(t *testing.T) {
	text := "So far: the log was read."
	empty := ""
	tests := []struct {
		name, data string
		want       *string
	}{
		{"none", `{}`, nil},
		{"null", `{"summary":null}`, nil},
		{"empty", `{"summary":""}`, &empty},
		{"text", `{"summary":"So far: the log was read."}`, &text},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := Parse([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case (sc.Summary == nil) != (tt.want == nil):
				t.Errorf("summary = %v, want %v", sc.Summary, tt.want)
			case sc.Summary != nil && *sc.Summary != *tt.want:
				t.Errorf("summary = %q, want %q", *sc.Summary, *tt.want)
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

func TestDescribe(t *testing.T) {
	tests := []struct {
		name, data, summary, lastDetail string
	}{
		{"named, with a prompt", `{"name": "lifecycle", "input": {"prompt": "Fix the test.\nThen lint."}}`, "Fix the test.", "- **Scenario:** lifecycle"},
		{"named, a session", `{"name": "chat"}`, "scenario chat", "- **Scenario:** chat"},
		{"unnamed", `{"input": {"prompt": "Fix it"}}`, "Fix it", "- **Todos:** exactly_one, continuation on (max 2), plan approval required"},
	}
	for _, tt := range tests {
		sc, err := Parse([]byte(tt.data))
		if err != nil {
			t.Fatal(err)
		}
		sc.Path = "/x/s.json"
		summary, details := describe(sc, sc.RunInput())
		if summary != tt.summary {
			t.Errorf("%s: summary %q; want %q", tt.name, summary, tt.summary)
		}
		if last := details[strings.LastIndex(details, "\n")+1:]; last != tt.lastDetail {
			t.Errorf("%s: details end %q; want %q", tt.name, last, tt.lastDetail)
		}
		if !strings.Contains(details, "- **Model:** `script:/x/s.json`") {
			t.Errorf("%s: details do not name the scripted model:\n%s", tt.name, details)
		}
	}
}

// An answer refused because its wait moved (an agent handed it over) is
// sent again; any other refusal ends the play.
func TestMoved(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("update approve_tool: %w", &client.RefusedError{Message: `no tool call is waiting for approval: agent "writer" does not wait for this`}), true},
		{&client.RefusedError{Message: "no tool call is waiting for approval: no agent of this run tree waits for this"}, true},
		{fmt.Errorf("approve_tool: %w (running)", errNoWaitingCall), true},
		{&client.RefusedError{Message: `call "c2" is not waiting for approval; c1 is`}, false},
		{errors.New("connection refused"), false},
		{nil, false},
	} {
		if got := moved(tt.err); got != tt.want {
			t.Errorf("moved(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
