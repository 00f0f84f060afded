package scenario

import (
	"bytes"
	"encoding/json"
	"github.com/todoflow/todoflow/api"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
	"github.com/todoflow/todoflow/model/script"
)

// FuzzParse reads any bytes as a scenario file. `go test ./scenario`
// replays the seeds (the shipped scenarios among them); to search for new
// inputs:
//
//	go test ./scenario -run '^$' -fuzz '^FuzzParse$' -fuzztime 60s -parallel 2
//
// A file that is refused gets a clear error. A file that is accepted is one
// JSON value, has a positive time limit, and every script in it is accepted
// by the scripted model too (the worker reads the same file: a script the
// runner accepts and the worker refuses would fail the run only once it
// started); written out, it reads back as the same scenario, field for field,
// and the scripted model reads the same responses from it.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "testsuite", "testdata", "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no scenario files to seed with: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		`{"input":{"prompt":"hi"},"model":[{"content":"hello"}]}`,
		`{"input":{"prompt":"hi"},"user":[{"when":"paused","signal":"resume","args":"go"},{"when":"awaiting_approval","update":"approve_plan","args":{"approved":true}}]}`,
		`{`,
		`{"modle":[]}`,
		`{"input":{"promt":"hi"}}`,
		`{"input":{"max_turns":-1}}`,
		`{"input":{"carry":{}}}`,
		`{"model":[{"tool_calls":[{"arguments":{}}]}]}`,
		`{"model":[{"tool_calls":[{"name":"x","arguments":"{}"}]}]}`,
		`{"agents":{"impl":[{"delay_ms":-5}]}}`,
		`{"user":[{"when":"running","signal":"resume"}]}`,
		`{"user":[{"when":"paused","signal":"resume","update":"send_message"}]}`,
		`{"user":[{"when":"paused","update":"approve"}]}`,
		`{"user":[{"when":"paused"}]}`,
		`{"time_limit_s":-1}`,
		`{"time_limit_s":9223372037}`,
		`{"model":[null]}`,
		`{"model":[{"tool_calls":[{"name":"f","id":7}]}]}`,
		`{"model":[{"delay_ms":600001}]}`,
		`{"summary":"So far: the log was read.","model":[{"content":"x"}],"agents":{"r":[]}}`,
		`{"summary":""}`,
		`{"summary":7}`,
		`{"name":"a"} {"name":"b"}`,
		`{"input":{"todo":{"in_progress_policy":"sometimes"}}}`,
		`{"input":{"reporters":[{"type":"webhook","config":{"url":"ftp://x"}}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data)
		if err != nil {
			fuzzcheck.Message(t, "Parse", err.Error())
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted a file that is not one JSON value: %q", data)
		}
		if sc.TimeLimit() <= 0 {
			t.Fatalf("time limit %v", sc.TimeLimit())
		}
		if _, err := script.Parse(data, ""); err != nil {
			t.Fatalf("the runner accepts the scenario, the scripted model refuses it: %v", err)
		}
		for id := range sc.Agents {
			if _, err := script.Parse(data, id); err != nil {
				t.Fatalf("the runner accepts agent %q, the scripted model refuses it: %v", id, err)
			}
		}

		// Written out, the raw responses lose their spacing only: read back,
		// the file is the scenario that was read, field for field, and the
		// scripted model reads the same responses from it.
		written := writeScenario(t, sc)
		again, err := Parse(written)
		if err != nil {
			t.Fatalf("the scenario written out does not parse: %v\n%s", err, written)
		}
		if want, got := compacted(t, sc), compacted(t, again); !reflect.DeepEqual(got, want) {
			t.Fatalf("the scenario written out reads back different\nread    %+v\nwritten %s\nreads   %+v", want, written, got)
		}
		for _, id := range append([]string{""}, slices.Sorted(maps.Keys(sc.Agents))...) {
			want, _ := script.Parse(data, id)
			if got, err := script.Parse(written, id); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("the scripted model reads agent %q's responses differently from the file written out (%v)\nread %+v\nnow  %+v", id, err, want, got)
			}
		}
		if rewritten := writeScenario(t, again); !bytes.Equal(rewritten, written) {
			t.Fatalf("the scenario changed when written out and read again\nfrom %s\nto   %s", written, rewritten)
		}
	})
}

// compacted is a copy of sc whose raw JSON (responses, action arguments) has
// its spacing removed, the one thing writing a scenario out may change. The
// input is what the workflow receives, its JSON; an action's absent args are
// null, as they go to the update or signal; Path is left out, as a file
// written elsewhere has another.
func compacted(t *testing.T, sc *Scenario) Scenario {
	t.Helper()
	compact := func(raw json.RawMessage) json.RawMessage {
		if raw == nil {
			return nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			t.Fatalf("raw JSON that does not compact: %v: %s", err, raw)
		}
		return buf.Bytes()
	}
	out := *sc
	out.Path = ""
	in, err := json.Marshal(sc.RunInput())
	if err != nil {
		t.Fatalf("the input does not encode: %v", err)
	}
	out.Input = api.AgentInput{Prompt: string(in)}
	out.Model = nil
	for _, r := range sc.Model {
		out.Model = append(out.Model, compact(r))
	}
	if sc.Agents != nil {
		out.Agents = map[string][]json.RawMessage{}
		for id, rs := range sc.Agents {
			out.Agents[id] = []json.RawMessage{}
			for _, r := range rs {
				out.Agents[id] = append(out.Agents[id], compact(r))
			}
		}
	}
	out.User = nil
	for _, a := range sc.User {
		if a.Args = compact(a.Args); a.Args == nil {
			a.Args = json.RawMessage("null")
		}
		out.User = append(out.User, a)
	}
	return out
}

// writeScenario writes a parsed scenario back as a file.
func writeScenario(t *testing.T, sc *Scenario) []byte {
	t.Helper()
	file := struct {
		*Scenario
		Input any `json:"input"`
	}{sc, sc.Input}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // raw responses and arguments are kept byte for byte
	if err := enc.Encode(file); err != nil {
		t.Fatalf("write the scenario: %v", err)
	}
	return buf.Bytes()
}
