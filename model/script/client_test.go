package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

func writeScenario(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func complete(t *testing.T, c *Client, ref string, call int) (model.Response, error) {
	t.Helper()
	return c.Complete(context.Background(), model.Request{Model: ref, Call: call})
}

func TestComplete(t *testing.T) {
	path := writeScenario(t, "demo.json", `{
	  "model": [
	    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": []}}]},
	    {"content": "Done."}
	  ],
	  "agents": {"researcher": [
	    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}, "id": "r1"}, {"name": "list_files"}]},
	    {"content": "found it"}
	  ]}
	}`)
	final := func(s string) model.Response {
		return model.Response{Content: s, ToolCalls: []model.ToolCall{}}
	}
	tests := []struct {
		name string
		ref  string
		call int
		want model.Response
	}{
		{"call 1", path, 1, model.Response{ToolCalls: []model.ToolCall{
			{ID: "call_1_0", Name: "write_todos", Arguments: json.RawMessage(`{"todos":[]}`)}}}},
		{"call 2", path, 2, final("Done.")},
		{"script ran out", path, 3, final("")},
		{"far past the end", path, 50, final("")},
		{"subagent call 1", path + "#researcher", 1, model.Response{ToolCalls: []model.ToolCall{
			{ID: "r1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
			{ID: "call_1_1", Name: "list_files", Arguments: json.RawMessage(`{}`)}}}},
		{"subagent call 2", path + "#researcher", 2, final("found it")},
		{"subagent ran out", path + "#researcher", 3, final("")},
	}
	c := New("/")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := complete(t, c, tt.ref, tt.call)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Complete = %+v, want %+v", got, tt.want)
			}
			// A retried or replayed call, even from a fresh worker, gets
			// the same answer, ids included.
			again, err := complete(t, New("/"), tt.ref, tt.call)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("second answer = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func TestCompleteErrors(t *testing.T) {
	dir := t.TempDir()
	broken := writeScenario(t, "broken.json", "{\"model\": [\n  {\"content\": \"x\"\n]}")
	badCall := writeScenario(t, "bad.json", `{"model": [{}, {}, {}, {"tool_calls": [{"arguments": {}}]}]}`)
	badArgs := writeScenario(t, "args.json", `{"model": [{"tool_calls": [{"name": "f", "arguments": "x"}]}]}`)
	badSummary := writeScenario(t, "summary.json", `{"summary": 7, "model": [{"content": "x"}]}`)
	good := writeScenario(t, "good.json", `{"model": [], "agents": {"a": []}}`)
	tests := []struct {
		name string
		ref  string
		call int
		want []string
	}{
		{"missing file", filepath.Join(dir, "nope.json"), 1, []string{"nope.json", "no such file"}},
		{"directory", dir, 1, []string{dir, "is a directory"}},
		{"broken JSON", broken, 1, []string{"broken.json", "invalid JSON at line 3"}},
		{"tool call without a name", badCall, 1, []string{"bad.json", "model[3].tool_calls[0]: name is missing"}},
		{"arguments not an object", badArgs, 1, []string{"args.json", "model[0].tool_calls[0].arguments: must be a JSON object"}},
		{"unknown agent", good + "#b", 1, []string{"good.json", `unknown agent id "b"`}},
		{"summary not a string", badSummary, 1, []string{"summary.json", "summary: must be a string"}},
		{"no path", "#a", 1, []string{"no scenario file"}},
		{"call 0", good, 0, []string{"good.json", "call number 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := complete(t, New("/"), tt.ref, tt.call)
			var me *model.Error
			if !errors.As(err, &me) {
				t.Fatalf("error = %#v, want *model.Error", err)
			}
			if me.Retryable {
				t.Errorf("error is retryable, want not: %v", me)
			}
			for _, s := range tt.want {
				if !strings.Contains(me.Message, s) {
					t.Errorf("message %q does not contain %q", me.Message, s)
				}
			}
		})
	}
}

// A summarising call is answered with the scenario's summary and takes no
// numbered response: the agent's calls get responses 1, 2, ... in order
// however many summaries come between them, and whatever Call number a
// summary carries.
func TestCompleteSummary(t *testing.T) {
	const scenario = `{
	  %s
	  "model": [{"content": "one"}, {"content": "two"}],
	  "agents": {"r": [{"content": "r one"}, {"content": "r two"}]}
	}`
	with := writeScenario(t, "with.json", fmt.Sprintf(scenario, `"summary": "So far: the log was read.",`))
	without := writeScenario(t, "without.json", fmt.Sprintf(scenario, ""))
	empty := writeScenario(t, "empty.json", fmt.Sprintf(scenario, `"summary": "",`))
	type call struct {
		summarize bool
		call      int
	}
	// The summaries' Call numbers are those a workflow might send: none,
	// the next turn's, one already answered, one far ahead.
	calls := []call{{true, 0}, {false, 1}, {true, 2}, {true, 1}, {false, 2}, {true, 99}, {false, 3}, {true, -1}}
	tests := []struct {
		name    string
		ref     string
		summary string
		replies []string // of the numbered calls, in order
	}{
		{"root agent", with, "So far: the log was read.", []string{"one", "two", ""}},
		{"subagent", with + "#r", "So far: the log was read.", []string{"r one", "r two", ""}},
		{"no summary in the file", without, DefaultSummary, []string{"one", "two", ""}},
		{"no summary, subagent", without + "#r", DefaultSummary, []string{"r one", "r two", ""}},
		{"empty summary", empty, "", []string{"one", "two", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New("/")
			var replies []string
			for _, cl := range calls {
				got, err := c.Complete(context.Background(), model.Request{Model: tt.ref, Call: cl.call, Summarize: cl.summarize})
				if err != nil {
					t.Fatalf("Complete(call %d, summarize %v): %v", cl.call, cl.summarize, err)
				}
				if len(got.ToolCalls) != 0 || got.ToolCalls == nil {
					t.Errorf("call %d, summarize %v: tool calls %+v, want an empty list", cl.call, cl.summarize, got.ToolCalls)
				}
				if !cl.summarize {
					replies = append(replies, got.Content)
					continue
				}
				if got.Content != tt.summary {
					t.Errorf("summary with Call %d = %q, want %q", cl.call, got.Content, tt.summary)
				}
			}
			if !slices.Equal(replies, tt.replies) {
				t.Errorf("numbered replies = %q, want %q", replies, tt.replies)
			}
		})
	}
}

// delay_ms belongs to a numbered response: a summary is answered at once,
// and never streamed.
func TestCompleteSummaryHasNoDelay(t *testing.T) {
	path := writeScenario(t, "slow.json", `{"summary": "short", "model": [{"content": "stuck", "delay_ms": 600000}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	streamed := false
	got, err := New("/").Complete(ctx, model.Request{Model: path, Call: 1, Summarize: true, Stream: func(string) { streamed = true }})
	if err != nil || got.Content != "short" {
		t.Fatalf("Complete = %+v, %v; want the summary at once", got, err)
	}
	if streamed {
		t.Error("the summary was streamed; a summary is no reply")
	}
}

func TestCompleteDelay(t *testing.T) {
	path := writeScenario(t, "slow.json", `{"model": [{"content": "slow", "delay_ms": 60}, {"content": "stuck", "delay_ms": 60000}]}`)
	c := New("/")

	t.Run("honoured", func(t *testing.T) {
		start := time.Now()
		got, err := complete(t, c, path, 1)
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if elapsed := time.Since(start); elapsed < 60*time.Millisecond {
			t.Errorf("answered after %v, want at least 60ms", elapsed)
		}
		if got.Content != "slow" {
			t.Errorf("content = %q", got.Content)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := c.Complete(ctx, model.Request{Model: path, Call: 2})
		// The error says the delay was cut short: the call did not sit out
		// its minute.
		if err == nil || !strings.Contains(err.Error(), "interrupted during its delay_ms") {
			t.Errorf("error = %v, want the delay interrupted", err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want one wrapping context.Canceled", err)
		}
		var me *model.Error
		if !errors.As(err, &me) || !me.Retryable {
			t.Errorf("error = %#v, want a retryable *model.Error", err)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := c.Complete(ctx, model.Request{Model: path, Call: 2}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error = %v, want one wrapping context.DeadlineExceeded", err)
		}
	})
}

func TestCache(t *testing.T) {
	path := writeScenario(t, "cached.json", `{"model": [{"content": "one"}], "agents": {"a": [{"content": "agent"}]}}`)
	c := New("/")
	for call := 1; call <= 3; call++ {
		if _, err := complete(t, c, path, call); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := complete(t, c, path+"#a", 1); err != nil {
		t.Fatal(err)
	}
	if c.reads != 1 {
		t.Errorf("file read %d times for an unchanged file, want 1", c.reads)
	}

	// Same size, newer mtime: the cache must notice the edit.
	if err := os.WriteFile(path, []byte(`{"model": [{"content": "two"}], "agents": {"a": [{"content": "AGENT"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	got, err := complete(t, c, path, 1)
	if err != nil || got.Content != "two" {
		t.Errorf("after an edit: %+v, %v; want content two", got, err)
	}

	// Different size, mtime unchanged (coarse clocks): still reloaded.
	if err := os.WriteFile(path, []byte(`{"model": [{"content": "three!"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	got, err = complete(t, c, path, 1)
	if err != nil || got.Content != "three!" {
		t.Errorf("after a resize: %+v, %v; want content three!", got, err)
	}
	if c.reads != 3 {
		t.Errorf("file read %d times, want 3", c.reads)
	}
}

// A caller that edits what it got must not change later answers.
func TestCompleteReturnsCopies(t *testing.T) {
	path := writeScenario(t, "copy.json", `{"model": [{"tool_calls": [{"name": "f", "arguments": {"a": 1}}]}]}`)
	c := New("/")
	first, err := complete(t, c, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	first.ToolCalls[0].Name = "changed"
	first.ToolCalls[0].Arguments[1] = 'X'
	second, err := complete(t, c, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if second.ToolCalls[0].Name != "f" || string(second.ToolCalls[0].Arguments) != `{"a":1}` {
		t.Errorf("second answer = %+v, want the original", second.ToolCalls[0])
	}
}

func TestCompleteConcurrent(t *testing.T) {
	path := writeScenario(t, "many.json", `{"model": [{"content": "1"}, {"content": "2"}, {"content": "3"}]}`)
	c := New("/")
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := i%3 + 1
			got, err := complete(t, c, path, call)
			if err != nil || got.Content != string(rune('0'+call)) {
				t.Errorf("call %d: %+v, %v", call, got, err)
			}
		}()
	}
	wg.Wait()
}

// A reference may name only a regular file, of a bounded size, inside the
// client's folder: it comes from a run's input or from the model, and
// /dev/zero once made a worker read until it ran out of memory.
func TestCompleteStaysInItsFolder(t *testing.T) {
	dir := t.TempDir()
	inside := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(inside, []byte(`{"model": [{"content": "hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := writeScenario(t, "outside.json", `{"model": [{"content": "should not be read"}]}`)
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New(dir)
	for _, ref := range []string{inside, "ok.json", "sub/../ok.json"} {
		if got, err := complete(t, c, ref, 1); err != nil || got.Content != "hi" {
			t.Errorf("Complete(%q) = %+v, %v; want the scenario inside the folder", ref, got, err)
		}
	}
	tests := []struct{ ref, want string }{
		{outside, "outside the folder"},
		{"../outside.json", "outside the folder"},
		{"/dev/zero", "outside the folder"},
		{"link.json", "link.json"},
		{"zero.json", "zero.json"},
		{"big.json", "more than the"},
	}
	for _, tt := range tests {
		_, err := complete(t, c, tt.ref, 1)
		var me *model.Error
		if !errors.As(err, &me) || me.Retryable || !strings.Contains(me.Message, tt.want) {
			t.Errorf("Complete(%q) = %v; want a non-retryable error with %q", tt.ref, err, tt.want)
		}
	}
}
