package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model"
)

func userMessage(text string) model.Message {
	return model.Message{Role: model.RoleUser, Content: text, ToolCalls: []model.ToolCall{}}
}

// fetcher reads spans of msgs, as a read of history would, and counts
// the reads and the messages read.
type fetcher struct {
	msgs          []model.Message
	reads, counts int
}

func (f *fetcher) fetch(spans []Span) ([]model.Message, error) {
	f.reads++
	var out []model.Message
	for _, sp := range spans {
		if sp.End > len(f.msgs) {
			return nil, fmt.Errorf("span %v past the transcript's %d messages", sp, len(f.msgs))
		}
		out = append(out, f.msgs[sp.Start:sp.End]...)
		f.counts += sp.End - sp.Start
	}
	return out, nil
}

func spanMessages(msgs []model.Message, spans []Span) []model.Message {
	var out []model.Message
	for _, sp := range spans {
		out = append(out, msgs[sp.Start:sp.End]...)
	}
	return out
}

func TestCacheRead(t *testing.T) {
	var msgs []model.Message
	for i := range 12 {
		msgs = append(msgs, userMessage(fmt.Sprintf("message %d", i)))
	}
	all := func(n int) []Span { return []Span{{Start: 0, End: n}} }
	tests := []struct {
		name string
		// before are earlier calls of the run on this worker.
		before []NewMessages
		nm     NewMessages
		spans  []Span
		// reads is how many reads of history the call needs, holes the messages
		// they read.
		reads, holes int
	}{
		{name: "first call of a run, sent everything", nm: NewMessages{From: 0, Messages: msgs[:4]}, spans: all(4)},
		{name: "first call of a continued run: the carried messages read from history",
			nm: NewMessages{From: 3, Messages: msgs[3:5]}, spans: all(5), reads: 1, holes: 3},
		{name: "the next call", before: []NewMessages{{From: 0, Messages: msgs[:4]}},
			nm: NewMessages{From: 4, Messages: msgs[4:7]}, spans: all(7)},
		{name: "a retried call sends the same again", before: []NewMessages{{From: 0, Messages: msgs[:4]}, {From: 4, Messages: msgs[4:7]}},
			nm: NewMessages{From: 4, Messages: msgs[4:7]}, spans: all(7)},
		{name: "calls taken by another worker meanwhile: the gap read from history", before: []NewMessages{{From: 0, Messages: msgs[:4]}},
			nm: NewMessages{From: 9, Messages: msgs[9:11]}, spans: all(11), reads: 1, holes: 5},
		{name: "a window that leaves the gap out needs no read", before: []NewMessages{{From: 0, Messages: msgs[:4]}},
			nm: NewMessages{From: 9, Messages: msgs[9:11]}, spans: []Span{{Start: 0, End: 2}, {Start: 9, End: 11}}},
		{name: "holes in two spans, one read", before: []NewMessages{{From: 1, Messages: msgs[1:3]}},
			nm: NewMessages{From: 6, Messages: msgs[6:8]}, spans: []Span{{Start: 0, End: 2}, {Start: 4, End: 8}}, reads: 1, holes: 3},
		{name: "another epoch: the old copy is void", before: []NewMessages{{From: 0, Messages: msgs[:6]}},
			nm: NewMessages{From: 5, Epoch: 1, Messages: msgs[5:7]}, spans: all(7), reads: 1, holes: 5},
		{name: "no new messages", before: []NewMessages{{From: 0, Messages: msgs[:6]}},
			nm: NewMessages{From: 6}, spans: all(6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache(0)
			f := &fetcher{msgs: msgs}
			for _, nm := range tt.before {
				if _, err := c.Read("wf", "run", &nm, nil, f.fetch); err != nil {
					t.Fatal(err)
				}
			}
			got, err := c.Read("wf", "run", &tt.nm, tt.spans, f.fetch)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameMessages(got, spanMessages(msgs, tt.spans)); err != nil {
				t.Fatal(err)
			}
			if f.reads != tt.reads || f.counts != tt.holes {
				t.Errorf("%d reads for %d messages, want %d for %d", f.reads, f.counts, tt.reads, tt.holes)
			}
			// What was read is kept: the same call again needs no read.
			f.reads = 0
			if _, err := c.Read("wf", "run", &tt.nm, tt.spans, f.fetch); err != nil || f.reads != 0 {
				t.Errorf("the same call again: %d reads, %v; want none", f.reads, err)
			}
		})
	}
}

func TestCacheReadErrors(t *testing.T) {
	c := NewCache(0)
	failing := func([]Span) ([]model.Message, error) { return nil, errors.New("read failed") }
	if _, err := c.Read("wf", "run", &NewMessages{From: 2}, []Span{{Start: 0, End: 2}}, failing); err == nil || err.Error() != "read failed" {
		t.Errorf("a failed read: %v; want its error", err)
	}
	short := func([]Span) ([]model.Message, error) { return []model.Message{userMessage("only one")}, nil }
	if _, err := c.Read("wf", "run", &NewMessages{From: 2}, []Span{{Start: 0, End: 2}}, short); err == nil {
		t.Error("a read of fewer messages than asked: no error")
	}
}

// Whatever the order of calls, workers, retries, taken-back messages and
// evictions, a read returns what the workflow's transcript holds.
func TestCacheFollowsTheWorkflow(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var (
			msgs    []model.Message // the workflow's transcript
			sent    int
			epoch   int
			counter int
		)
		add := func(role string) {
			counter++
			m := userMessage(fmt.Sprintf("message %d, %s", counter, strings.Repeat("x", rng.IntN(200))))
			m.Role = role
			msgs = append(msgs, m)
		}
		// Two workers; the second has a budget that evicts often.
		workers := []*Cache{NewCache(0), NewCache(3000)}
		add(model.RoleSystem)
		add(model.RoleUser)
		for step := range 120 {
			for range rng.IntN(4) {
				add(model.RoleTool)
			}
			if rng.IntN(10) == 0 && len(msgs) > 2 {
				// A failed turn run again takes its last message back.
				msgs = msgs[:len(msgs)-1]
				if sent > len(msgs) {
					sent, epoch = len(msgs), epoch+1
				}
			}
			nm := NewMessages{From: sent, Epoch: epoch, Messages: slices.Clone(msgs[sent:])}
			sent = len(msgs)
			// The view: everything, or the head and a recent tail.
			spans := []Span{{Start: 0, End: len(msgs)}}
			if from := rng.IntN(len(msgs)); from > 2 {
				spans = []Span{{Start: 0, End: 2}, {Start: from, End: len(msgs)}}
			}
			f := &fetcher{msgs: msgs}
			w := workers[rng.IntN(len(workers))]
			for range 1 + rng.IntN(2) { // attempts of the same call
				got, err := w.Read("wf", "run", &nm, spans, f.fetch)
				if err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				if err := sameMessages(got, spanMessages(msgs, spans)); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				// The answer, kept ahead of the workflow; some attempts'
				// answers are not the one the workflow takes.
				counter++
				answer := model.Message{Role: model.RoleAssistant, Content: fmt.Sprintf("answer %d", counter), ToolCalls: []model.ToolCall{
					{ID: "call", Name: "write_file", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, counter))}}}
				w.Answer("wf", "run", epoch, sent, answer)
				if rng.IntN(3) == 0 {
					msgs = append(msgs, answer)
				}
			}
			if n := len(msgs); n > sent && msgs[n-1].Role == model.RoleAssistant {
				// The tool call of the answer taken, read by reference on
				// either worker: from the cache only when it is that one.
				want := msgs[n-1].ToolCalls[0]
				for _, w := range workers {
					if got, ok := w.Call("wf", "run", CallRef{Message: n - 1, Index: 0, Digest: CallDigest(want)}, "call"); ok && string(got.Arguments) != string(want.Arguments) {
						t.Fatalf("seed %d step %d: cached call %s, want %s", seed, step, got.Arguments, want.Arguments)
					}
				}
			}
		}
		if size := workers[1].size; size > 3000 {
			t.Errorf("seed %d: the bounded cache holds %d bytes", seed, size)
		}
	}
}

func TestCacheCall(t *testing.T) {
	call := model.ToolCall{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}
	c := NewCache(0)
	c.Answer("wf", "run", 0, 3, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}})
	tests := []struct {
		name     string
		run      string
		ref      CallRef
		id       string
		wantHit  bool
		wantArgs string
	}{
		{"the answer kept", "run", CallRef{Message: 3, Digest: CallDigest(call)}, "c1", true, `{"path":"a.txt"}`},
		{"another id", "run", CallRef{Message: 3, Digest: CallDigest(call)}, "c2", false, ""},
		{"other arguments", "run", CallRef{Message: 3, Digest: CallDigest(model.ToolCall{Name: "write_file", Arguments: json.RawMessage(`{}`)})}, "c1", false, ""},
		{"no digest (an older workflow)", "run", CallRef{Message: 3}, "c1", false, ""},
		{"another message", "run", CallRef{Message: 2, Digest: CallDigest(call)}, "c1", false, ""},
		{"past the end", "run", CallRef{Message: 9, Digest: CallDigest(call)}, "c1", false, ""},
		{"another call of the message", "run", CallRef{Message: 3, Index: 1, Digest: CallDigest(call)}, "c1", false, ""},
		{"another run", "run2", CallRef{Message: 3, Digest: CallDigest(call)}, "c1", false, ""},
	}
	for _, tt := range tests {
		got, ok := c.Call("wf", tt.run, tt.ref, tt.id)
		if ok != tt.wantHit || string(got.Arguments) != tt.wantArgs {
			t.Errorf("%s: Call = %s, %v; want %s, %v", tt.name, got.Arguments, ok, tt.wantArgs, tt.wantHit)
		}
	}
}

func TestCallDigest(t *testing.T) {
	a := model.ToolCall{ID: "1", Name: "write_file", Arguments: json.RawMessage(`{"path":"a"}`)}
	if CallDigest(a) != CallDigest(model.ToolCall{ID: "2", Name: "write_file", Arguments: json.RawMessage(`{"path":"a"}`)}) {
		t.Error("the digest depends on the call's id")
	}
	for _, b := range []model.ToolCall{
		{Name: "write_file", Arguments: json.RawMessage(`{"path":"b"}`)},
		{Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
		{Name: "write_fil", Arguments: json.RawMessage(`e{"path":"a"}`)},
	} {
		if CallDigest(a) == CallDigest(b) {
			t.Errorf("%s %s and %s %s have the same digest", a.Name, a.Arguments, b.Name, b.Arguments)
		}
	}
}

func TestCacheEvictsLeastRecent(t *testing.T) {
	big := func(i int) []model.Message { return []model.Message{userMessage(fmt.Sprintf("%d %0400d", i, 0))} }
	c := NewCache(1500) // room for two runs of one message
	f := &fetcher{}
	for _, run := range []string{"a", "b", "a", "c"} {
		f.msgs = big(0)
		if _, err := c.Read("wf", run, &NewMessages{Messages: big(0)}, nil, f.fetch); err != nil {
			t.Fatal(err)
		}
	}
	// b was used least recently: it left when c came.
	// b last: reading it back takes a place again.
	for _, tt := range []struct {
		run  string
		kept bool
	}{{"a", true}, {"c", true}, {"b", false}} {
		run, kept := tt.run, tt.kept
		f.reads = 0
		if _, err := c.Read("wf", run, &NewMessages{From: 1}, []Span{{Start: 0, End: 1}}, f.fetch); err != nil {
			t.Fatal(err)
		}
		if got := f.reads == 0; got != kept {
			t.Errorf("run %s kept: %v, want %v", run, got, kept)
		}
	}
}

// A field over HeldOver is left out of the new messages and found by its
// digest: in the worker's copy of the model's answer, among the tool results
// it remembered, or else read once; the worker keeps it, and a retried call
// that leaves it out again needs no read.
func TestCacheHeldMessages(t *testing.T) {
	big := strings.Repeat("x", HeldOver+1)
	msgs := []model.Message{
		userMessage("read the log"),
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"log"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: big},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c2", Name: "write_file", Arguments: json.RawMessage(`{"content":"<` + big + `>"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c2", Content: "wrote it"},
	}
	first := NewMessagesOf(msgs[:2], 0, 0)
	nm := NewMessagesOf(msgs, 2, 0)
	want := []Held{{Index: 0, Content: Digest(big)}, {Index: 1, Args: []string{ArgsDigest(msgs[3].ToolCalls[0].Arguments)}}}
	if len(first.Held) != 0 || !reflect.DeepEqual(nm.Held, want) || nm.Messages[0].Content != "" || nm.Messages[1].ToolCalls[0].Arguments != nil || nm.Messages[2].Content != "wrote it" {
		t.Fatalf("NewMessagesOf: held %+v, messages %+v; want the two large fields left out, the small message sent", nm.Held, nm.Messages)
	}
	if msgs[3].ToolCalls[0].Arguments == nil {
		t.Fatal("NewMessagesOf changed the caller's tool calls")
	}
	all := []Span{{Start: 0, End: len(msgs)}}
	tests := []struct {
		name  string
		prime func(c *Cache)
		reads int
	}{
		{"neither seen", func(*Cache) {}, 1},
		{"answer and result seen", func(c *Cache) {
			// The answer as the model's client made it: not HTML-escaped.
			c.Answer("wf", "run", 0, 3, msgs[3])
			c.Remember("wf", "run", big)
		}, 0},
		{"another run of the workflow has them", func(c *Cache) {
			if _, err := c.Read("wf", "before", &NewMessages{Messages: msgs}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache(0)
			f := &fetcher{msgs: msgs}
			if _, err := c.Read("wf", "run", first, nil, f.fetch); err != nil {
				t.Fatal(err)
			}
			tt.prime(c)
			got, err := c.Read("wf", "run", nm, all, f.fetch)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameMessages(got, msgs); err != nil {
				t.Fatal(err)
			}
			if f.reads != tt.reads {
				t.Errorf("%d reads, want %d", f.reads, tt.reads)
			}
			f.reads = 0
			if got, err := c.Read("wf", "run", nm, all, f.fetch); err != nil || f.reads != 0 || sameMessages(got, msgs) != nil {
				t.Errorf("the call again: %d reads, %v; want none, the held messages kept", f.reads, err)
			}
			if got, err := c.Read("wf", "run", nil, all, f.fetch); err != nil || f.reads != 0 || sameMessages(got, msgs) != nil {
				t.Errorf("a retried call (no new messages): %d reads, %v; want none", f.reads, err)
			}
		})
	}
}

// A continued run's first call names its carried messages by digest: a
// worker that had the run before has them, and reads nothing.
func TestCacheContinuedRun(t *testing.T) {
	before := []model.Message{userMessage("system"), userMessage("first"),
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"content":"<b>"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: "wrote it", ToolCalls: []model.ToolCall{}},
		userMessage("second")}
	carried := []model.Message{before[0], before[1], before[3], before[4]} // as compact keeps them
	c := NewCache(0)
	f := &fetcher{msgs: append(slices.Clone(carried), userMessage("third"))}
	if _, err := c.Read("wf", "run1", &NewMessages{Messages: before}, nil, f.fetch); err != nil {
		t.Fatal(err)
	}
	nm := NewMessagesOf(f.msgs, len(carried), 0)
	nm.Carried = MessageDigests(carried)
	got, err := c.Read("wf", "run2", nm, []Span{{Start: 0, End: len(f.msgs)}}, f.fetch)
	if err != nil || sameMessages(got, f.msgs) != nil {
		t.Fatalf("read %v, %v", got, err)
	}
	if f.reads != 0 {
		t.Errorf("%d reads; want none, the run before has the carried messages", f.reads)
	}
	// Another workflow's cache entry is no source.
	f.reads = 0
	if _, err := c.Read("other", "run2", nm, []Span{{Start: 0, End: len(f.msgs)}}, f.fetch); err != nil || f.reads != 1 {
		t.Errorf("another workflow: %d reads, %v; want 1", f.reads, err)
	}
}

// A retried call carries no new messages; on a worker that has seen nothing
// of the run it reads the transcript once, and keeps it for the next try.
func TestCacheRetryOnAFreshWorker(t *testing.T) {
	msgs := []model.Message{userMessage("one"), userMessage("two"), userMessage("three")}
	c := NewCache(0)
	f := &fetcher{msgs: msgs}
	all := []Span{{Start: 0, End: len(msgs)}}
	for try := 1; try <= 2; try++ {
		got, err := c.Read("wf", "run", nil, all, f.fetch)
		if err != nil || sameMessages(got, msgs) != nil {
			t.Fatalf("try %d: %v", try, err)
		}
	}
	if f.reads != 1 {
		t.Errorf("%d reads for two tries, want 1", f.reads)
	}
	// The run's next call, with new messages of its epoch, starts over
	// only if the epoch is another.
	f.reads = 0
	if _, err := c.Read("wf", "run", &NewMessages{From: 3, Messages: []model.Message{userMessage("four")}}, []Span{{Start: 0, End: 4}}, f.fetch); err != nil || f.reads != 1 {
		t.Errorf("the next call: %d reads, %v; want 1 (the copy of an unknown epoch is dropped)", f.reads, err)
	}
}

// A model call's input carries the new messages' fields up to
// Budget in all, each at most HeldOver; the rest are left out,
// small fields excepted.
func TestNewMessagesOfStaysInBudget(t *testing.T) {
	piece := strings.Repeat("x", HeldOver-100)
	var msgs []model.Message
	for range 40 { // 40 results of almost 16 KiB: 640 KiB in all
		msgs = append(msgs, model.Message{Role: model.RoleTool, Content: piece})
	}
	msgs = append(msgs, model.Message{Role: model.RoleTool, Content: strings.Repeat("y", HeldOver+1)}, userMessage("small"))
	nm := NewMessagesOf(msgs, 0, 0)
	carried := 0
	var held []int
	for i, m := range nm.Messages {
		carried += len(m.Content)
		if k := slices.IndexFunc(nm.Held, func(h Held) bool { return h.Index == i }); k >= 0 {
			held = append(held, i)
			if nm.Held[k].Content != Digest(msgs[i].Content) {
				t.Errorf("message %d: digest %q, want %q", i, nm.Held[k].Content, Digest(msgs[i].Content))
			}
		}
	}
	if carried > Budget {
		t.Errorf("the input carries %d bytes of messages, over the budget of %d", carried, Budget)
	}
	if !slices.Contains(held, 40) || slices.Contains(held, 41) || len(held) != 40-Budget/len(piece)+1 {
		t.Errorf("held %v; want the large one and those past the budget, not the small last one", held)
	}
}
