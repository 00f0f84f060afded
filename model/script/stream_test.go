package script

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

func TestChunks(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want []string
	}{
		{"", 6, []string{""}},
		{"one", 6, []string{"one"}},
		{"one two", 1, []string{"one two"}},
		{"one two", 6, []string{"one ", "two"}},
		{"a b c d e f g h", 4, []string{"a b ", "c d ", "e f ", "g h"}},
		{"Deux cafés, s'il vous plaît, et l'addition.", 3, []string{"Deux cafés, s'il ", "vous plaît, et ", "l'addition."}},
		{"trailing space ", 2, []string{"trailing ", "space "}},
	}
	for _, tt := range tests {
		got := Chunks(tt.text, tt.n)
		if strings.Join(got, "") != tt.text {
			t.Errorf("Chunks(%q, %d) = %q: does not add up to the text", tt.text, tt.n, got)
		}
		if len(got) > max(tt.n, 1) {
			t.Errorf("Chunks(%q, %d) = %d pieces, want at most %d", tt.text, tt.n, len(got), tt.n)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Chunks(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
		}
	}
}

// A streamed call delivers the text in pieces spread over delay_ms, and
// answers exactly as an unstreamed one does.
func TestCompleteStreams(t *testing.T) {
	path := writeScenario(t, "s.json", `{"model": [
	  {"content": "The tests pass now, and the fix is in auth.go on line forty-two.", "delay_ms": 600},
	  {"tool_calls": [{"name": "todo_read"}]},
	  {"content": "Quick answer with no delay at all."}
	]}`)
	c := New("/")
	type piece struct {
		text string
		at   time.Duration
	}
	call := func(n int) ([]piece, model.Response, time.Duration) {
		var mu sync.Mutex
		var got []piece
		start := time.Now()
		resp, err := c.Complete(context.Background(), model.Request{Model: path, Call: n, Stream: func(d string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, piece{d, time.Since(start)})
		}})
		if err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		return got, resp, time.Since(start)
	}

	pieces, resp, took := call(1)
	plain, err := complete(t, c, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != plain.Content || len(resp.ToolCalls) != 0 {
		t.Errorf("streamed response %+v differs from the plain one %+v", resp, plain)
	}
	var joined strings.Builder
	for _, p := range pieces {
		joined.WriteString(p.text)
	}
	if joined.String() != resp.Content {
		t.Errorf("pieces %q do not add up to the reply %q", joined.String(), resp.Content)
	}
	if len(pieces) < 3 || len(pieces) > StreamChunks {
		t.Fatalf("%d pieces, want 3 to %d", len(pieces), StreamChunks)
	}
	// Spread over the delay: the first well before its end, the last at it.
	if first := pieces[0].at; first > 400*time.Millisecond {
		t.Errorf("first piece after %v, want about %v", first, 600*time.Millisecond/time.Duration(len(pieces)))
	}
	if last := pieces[len(pieces)-1].at; last < 550*time.Millisecond {
		t.Errorf("last piece after %v, want about 600ms", last)
	}
	if took < 600*time.Millisecond {
		t.Errorf("the call took %v, less than its delay_ms", took)
	}

	if pieces, _, _ := call(2); len(pieces) != 0 {
		t.Errorf("a response of tool calls only streamed %d pieces", len(pieces))
	}
	pieces, _, took = call(3)
	if len(pieces) < 2 || took > 200*time.Millisecond {
		t.Errorf("no delay: %d pieces in %v, want several at once", len(pieces), took)
	}
}

// A stream cut short by the context is a retryable error, like a delay.
func TestCompleteStreamInterrupted(t *testing.T) {
	path := writeScenario(t, "s.json", `{"model": [{"content": "one two three four five six", "delay_ms": 5000}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	_, err := New("/").Complete(ctx, model.Request{Model: path, Call: 1, Stream: func(d string) {
		got = append(got, d)
		cancel()
	}})
	me, ok := err.(*model.Error)
	if !ok || !me.Retryable {
		t.Fatalf("err = %v, want a retryable *model.Error", err)
	}
	if len(got) != 1 {
		t.Errorf("pieces after the cancel: %q", got)
	}
}
