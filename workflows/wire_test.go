package workflows

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/todoflow/todoflow/api"
)

// The carry became opaque JSON in api.AgentInput and is written apart
// (handover.input): every input the recorded histories hold, carries
// included, reads and writes back to the very same bytes, so that no
// worker of an earlier build, and no replay, sees a difference.
func TestInputsReadAndWriteBackTheSameBytes(t *testing.T) {
	files, err := filepath.Glob("../testsuite/testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	releases, err := filepath.Glob("../testsuite/testdata/releases/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, releases...)
	inputs, carries := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Events []struct {
				Started *struct {
					Input struct{ Payloads []struct{ Data string } }
				} `json:"workflowExecutionStartedEventAttributes"`
				Continued *struct {
					Input struct{ Payloads []struct{ Data string } }
				} `json:"workflowExecutionContinuedAsNewEventAttributes"`
			}
		}
		if err := json.Unmarshal(b, &h); err != nil {
			continue // not a history
		}
		for _, ev := range h.Events {
			var payloads []struct{ Data string }
			switch {
			case ev.Started != nil:
				payloads = ev.Started.Input.Payloads
			case ev.Continued != nil:
				payloads = ev.Continued.Input.Payloads
			}
			for _, p := range payloads {
				data, err := base64.StdEncoding.DecodeString(p.Data)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				var in api.AgentInput
				if err := json.Unmarshal(data, &in); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				h, err := readHandover(in)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if h.Carry != nil {
					carries++
				}
				back, err := h.input()
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				out, err := json.Marshal(back)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, data) {
					t.Errorf("%s: an input wrote back differently:\n got %s\nwant %s", f, out, data)
				}
				inputs++
			}
		}
	}
	if inputs == 0 || carries == 0 {
		t.Fatalf("%d inputs, %d with a carry, in %d files: the corpus was not found", inputs, carries, len(files))
	}
	t.Logf("%d inputs, %d with a carry, wrote back the same bytes", inputs, carries)
}
