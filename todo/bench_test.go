package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// writeArgs is a write_todos payload of n items, one in progress.
func writeArgs(n int) json.RawMessage {
	items := make([]string, n)
	for i := range items {
		status := "pending"
		if i == 0 {
			status = "in_progress"
		}
		items[i] = fmt.Sprintf(`{"content":"Step %d of the work, described in a sentence","status":%q,"priority":"medium"}`, i+1, status)
	}
	return json.RawMessage(`{"todos":[` + strings.Join(items, ",") + `]}`)
}

// BenchmarkApplyWrite is one write_todos call of 20 items through the whole
// workflow-side path: parse, validate, store, answer.
func BenchmarkApplyWrite(b *testing.B) {
	args := writeArgs(20)
	s, _ := Config{}.Resolve(false)
	calls := []Call{{Name: ToolWrite, Args: args}}
	for b.Loop() {
		st := &State{}
		if r := Apply(st, calls, s); r[0].IsError {
			b.Fatal(r[0].Content)
		}
	}
}

// BenchmarkDecodeBaseline decodes the same payload into generic JSON: the
// floor any handling of the call has to pay.
func BenchmarkDecodeBaseline(b *testing.B) {
	args := writeArgs(20)
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(args, &v); err != nil {
			b.Fatal(err)
		}
	}
}
