package script

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
)

// FuzzParse reads any bytes as a scenario file, for the root agent or a
// subagent. `go test ./model/script` replays the seeds; to search for new
// inputs:
//
//	go test ./model/script -run '^$' -fuzz '^FuzzParse$' -fuzztime 60s -parallel 2
//
// A file that is refused gets a clear error; a script that is accepted
// answers every call with a named tool call whose arguments are a JSON
// object, waits no negative time, and reads back the same (its summary
// included) when it is written out as a scenario again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(scenario), "")
	f.Add([]byte(scenario), "researcher")
	f.Add([]byte(scenario), "writer")
	f.Add([]byte(scenario), "reviewer")
	for _, seed := range []string{
		`{"name": "x"}`,
		`{"model": null}`,
		`{"model": [{}]}`,
		`{"model": [{"content": null, "tool_calls": null, "delay_ms": null}]}`,
		`{"model": [{"tool_calls": [{"name": "f", "arguments": null}]}]}`,
		`{"model": [{"content": "x", "comment": "why"}]}`,
		`{"model": [{"content": "x",}]}`,
		`[1, 2]`,
		`null`,
		``,
		`{"model": {"content": "x"}}`,
		`{"model": [{"content": "x"}, "Done."]}`,
		`{"model": [{"content": 42}]}`,
		`{"model": [{"delay_ms": "1s"}]}`,
		`{"model": [{"delay_ms": 1.5}]}`,
		`{"model": [{"delay_ms": -1}]}`,
		`{"model": [{"delay_ms": 3000}]}`,
		`{"model": [{"delay_ms": 9223372036854775807}]}`,
		`{"model": [{"tool_calls": {"name": "f"}}]}`,
		`{"model": [{"tool_calls": ["f"]}]}`,
		`{"model": [{"tool_calls": [{"name": ""}]}]}`,
		`{"model": [{"tool_calls": [{"name": 7}]}]}`,
		`{"model": [{"tool_calls": [{"name": "f", "id": 1}]}]}`,
		`{"model": [{"tool_calls": [{"name": "f"}, {"name": "g", "arguments": "{\"a\":1}"}]}]}`,
		`{"model": [{"tool_calls": [{"name": "f", "arguments": [1]}]}]}`,
		`{"model": [{"tool_calls": [{"name": "write_todos", "arguments": {"todos": [{"content": "a <b> & c", "status": "in_progress"}]}}]}]}`,
		`{"agents": []}`,
		`{"agents": {"r": {"content": "x"}}}`,
		`{"agents": {"a.b": [{"content": "x"}], "r": null}}`,
		`{"summary": "So far: the log was read.", "model": [{"content": "x"}], "agents": {"r": []}}`,
		`{"summary": "", "agents": {"r": [{"content": "x"}]}}`,
		`{"summary": null}`,
		`{"summary": 7}`,
		`{"summary": {"text": "x"}}`,
		`{"summary": ["x"]}`,
	} {
		f.Add([]byte(seed), "")
		f.Add([]byte(seed), "r")
	}
	f.Fuzz(func(t *testing.T, data []byte, agentID string) {
		s, err := Parse(data, agentID)
		if err != nil {
			fuzzcheck.Message(t, "Parse", err.Error())
			return
		}
		for i, step := range s.Steps {
			if step.Delay < 0 {
				t.Fatalf("response %d waits %v", i, step.Delay)
			}
			for j, tc := range step.Response.ToolCalls {
				if tc.ID == "" || strings.TrimSpace(tc.Name) == "" {
					t.Fatalf("response %d, call %d: id %q, name %q", i, j, tc.ID, tc.Name)
				}
				if !json.Valid(tc.Arguments) || !bytes.HasPrefix(tc.Arguments, []byte("{")) {
					t.Fatalf("response %d, call %d: arguments %q are not a JSON object", i, j, tc.Arguments)
				}
			}
		}
		written := writeScript(t, s, agentID)
		again, err := Parse(written, agentID)
		if err != nil {
			t.Fatalf("the script written out does not parse: %v\n%s", err, written)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("the script changed when written out and read again\nfrom %+v\nto   %+v\n(%s)", s, again, written)
		}
	})
}

// writeScript writes a script back as a scenario file, with every field
// it has (derived tool call ids included).
func writeScript(t *testing.T, s Script, agentID string) []byte {
	t.Helper()
	type call struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	type response struct {
		Content   string `json:"content"`
		ToolCalls []call `json:"tool_calls"`
		DelayMS   int64  `json:"delay_ms"`
	}
	list := make([]response, len(s.Steps))
	for i, step := range s.Steps {
		list[i] = response{Content: step.Response.Content, DelayMS: int64(step.Delay / time.Millisecond)}
		for _, tc := range step.Response.ToolCalls {
			list[i].ToolCalls = append(list[i].ToolCalls, call{tc.ID, tc.Name, tc.Arguments})
		}
	}
	// The summary goes out as it was resolved, DefaultSummary included:
	// written out, it must read back the same.
	var file any = map[string]any{"model": list, "summary": s.Summary}
	if agentID != "" {
		file = map[string]any{"agents": map[string]any{agentID: list}, "summary": s.Summary}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // arguments are kept byte for byte
	if err := enc.Encode(file); err != nil {
		t.Fatalf("write the script: %v", err)
	}
	return buf.Bytes()
}
