package activities

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

func TestAnswerCacheKeys(t *testing.T) {
	kept := AnswerKey{WorkflowID: "wf", RunID: "run", ActivityID: "7", Request: "d1"}
	c := NewAnswerCache(0, 0)
	c.Put(kept, model.Response{Content: "the answer", ToolCalls: []model.ToolCall{{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{}`)}}})
	tests := []struct {
		name string
		key  AnswerKey
		hit  bool
	}{
		{"the same call and request", kept, true},
		{"another workflow", AnswerKey{"wf2", "run", "7", "d1"}, false},
		{"another run of the workflow", AnswerKey{"wf", "run2", "7", "d1"}, false},
		{"another call of the run", AnswerKey{"wf", "run", "8", "d1"}, false},
		{"another request", AnswerKey{"wf", "run", "7", "d2"}, false},
	}
	for _, tt := range tests {
		got, ok := c.Get(tt.key)
		if ok != tt.hit || (ok && got.Content != "the answer") {
			t.Errorf("%s: Get = %q, %v; want a hit: %v", tt.name, got.Content, ok, tt.hit)
		}
	}
	// What a caller does with its copy does not reach the cache.
	got, _ := c.Get(kept)
	got.ToolCalls[0].ID = "changed"
	if again, _ := c.Get(kept); again.ToolCalls[0].ID != "c1" {
		t.Errorf("a caller's change reached the cache: id %q", again.ToolCalls[0].ID)
	}
}

func TestAnswerCacheEvicts(t *testing.T) {
	answer := func(n int) model.Response { return model.Response{Content: strings.Repeat("x", n)} }
	key := func(id string) AnswerKey {
		return AnswerKey{WorkflowID: "wf", RunID: "run", ActivityID: id, Request: "d"}
	}
	tests := []struct {
		name    string
		max     int64
		steps   func(c *AnswerCache, clock *time.Time)
		kept    []string
		dropped []string
	}{
		{"the oldest leave for room", 2000, func(c *AnswerCache, _ *time.Time) {
			for _, id := range []string{"1", "2", "3"} {
				c.Put(key(id), answer(800))
			}
		}, []string{"2", "3"}, []string{"1"}},
		{"an answer over the whole bound is not kept", 2000, func(c *AnswerCache, _ *time.Time) {
			c.Put(key("1"), answer(100))
			c.Put(key("2"), answer(3000))
		}, []string{"1"}, []string{"2"}},
		{"old answers leave", 0, func(c *AnswerCache, clock *time.Time) {
			c.Put(key("1"), answer(10))
			*clock = clock.Add(40 * time.Minute)
			c.Put(key("2"), answer(10))
			*clock = clock.Add(30 * time.Minute) // 1 is 70 minutes old, 2 is 30
		}, []string{"2"}, []string{"1"}},
		{"the same key again replaces it", 2000, func(c *AnswerCache, _ *time.Time) {
			c.Put(key("1"), answer(800))
			c.Put(key("1"), answer(800))
			c.Put(key("2"), answer(800))
		}, []string{"1", "2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			c := NewAnswerCache(tt.max, time.Hour)
			c.now = func() time.Time { return clock }
			tt.steps(c, &clock)
			for _, id := range tt.kept {
				if _, ok := c.Get(key(id)); !ok {
					t.Errorf("answer %s was dropped", id)
				}
			}
			for _, id := range tt.dropped {
				if _, ok := c.Get(key(id)); ok {
					t.Errorf("answer %s was kept", id)
				}
			}
			if c.size > c.max {
				t.Errorf("the cache holds %d bytes, over its %d", c.size, c.max)
			}
		})
	}
}

func TestRequestDigest(t *testing.T) {
	base := model.Request{Model: "m", Messages: []model.Message{userMessage("hello")}, Call: 1}
	d := RequestDigest(base)
	if d == "" || RequestDigest(base) != d {
		t.Fatalf("digest %q; want one, the same every time", d)
	}
	withStream := base
	withStream.Stream = func(string) {}
	if RequestDigest(withStream) != d {
		t.Error("the Stream callback changed the digest")
	}
	for name, other := range map[string]model.Request{
		"another model":     {Model: "m2", Messages: base.Messages, Call: 1},
		"another message":   {Model: "m", Messages: []model.Message{userMessage("hello!")}, Call: 1},
		"another call":      {Model: "m", Messages: base.Messages, Call: 2},
		"a summary":         {Model: "m", Messages: base.Messages, Call: 1, Summarize: true},
		"tools offered":     {Model: "m", Messages: base.Messages, Call: 1, Tools: []model.ToolSpec{{Name: "read_file"}}},
		"no message at all": {Model: "m", Call: 1},
	} {
		if RequestDigest(other) == d {
			t.Errorf("%s: same digest", name)
		}
	}
	bad := model.Request{Messages: []model.Message{{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{Name: "x", Arguments: json.RawMessage(`{not json`)}}}}}
	if got := RequestDigest(bad); got != "" {
		t.Errorf("a request that does not encode has digest %q; want none, never a cached answer", got)
	}
}

// The next attempt of a call, on the worker that got its answer, returns
// that answer without asking the provider; another call, another request,
// or a worker without the cache asks again.
func TestCallModelAnswersAnAttemptOnce(t *testing.T) {
	msgs := []model.Message{userMessage("system"), userMessage("write a file")}
	in := CallModelInput{Call: 1, Messages: msgs, WorkerTools: []string{}}
	other := in
	other.Messages = []model.Message{userMessage("system"), userMessage("write another file")}
	tests := []struct {
		name     string
		answers  *AnswerCache
		second   CallModelInput
		sameCall bool // the second execution is the same activity (a fresh environment: same ids)
		want     int  // provider requests
	}{
		{"the next attempt of the call", NewAnswerCache(0, 0), in, true, 1},
		{"no answer cache (before)", nil, in, true, 2},
		{"the next call of the run", NewAnswerCache(0, 0), in, false, 2},
		{"another request", NewAnswerCache(0, 0), other, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &answeringModel{resp: model.Response{Content: "answer", ToolCalls: []model.ToolCall{{Name: "write_file", Arguments: json.RawMessage(`{"path":"a"}`)}}}}
			a := &Activities{Answers: tt.answers, Models: func(string) (model.Client, string, error) { return m, "m", nil }}
			env := activityEnv(a)
			v, err := env.ExecuteActivity(a.CallModel, in)
			if err != nil {
				t.Fatal(err)
			}
			var first model.Response
			if err := v.Get(&first); err != nil {
				t.Fatal(err)
			}
			if tt.sameCall {
				env = activityEnv(a)
			}
			m.resp.Content = "another answer"
			v, err = env.ExecuteActivity(a.CallModel, tt.second)
			if err != nil {
				t.Fatal(err)
			}
			var second model.Response
			if err := v.Get(&second); err != nil {
				t.Fatal(err)
			}
			if len(m.reqs) != tt.want {
				t.Errorf("%d provider requests, want %d", len(m.reqs), tt.want)
			}
			if reused := len(m.reqs) == 1; reused && (second.Content != first.Content || second.ToolCalls[0].ID != first.ToolCalls[0].ID) {
				t.Errorf("the reused answer %+v differs from the first %+v", second, first)
			}
		})
	}
}
