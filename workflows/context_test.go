package workflows

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

func TestSplitSpans(t *testing.T) {
	// Messages of 10 tokens, and one of 100 (see tokens).
	sized := func(tok int) model.Message {
		return model.Message{Role: model.RoleUser, Content: strings.Repeat("x", tok*bytesPerToken-16)}
	}
	msgs := []model.Message{sized(10), sized(10), sized(10), sized(10), sized(100), sized(10), sized(10)}
	sp := func(a, b int) transcript.Span { return transcript.Span{Start: a, End: b} }
	tests := []struct {
		name  string
		spans []transcript.Span
		limit int
		want  [][]transcript.Span
	}{
		{"all fit", []transcript.Span{sp(2, 4)}, 100, [][]transcript.Span{{sp(2, 4)}}},
		{"a large message alone", []transcript.Span{sp(2, 7)}, 30, [][]transcript.Span{{sp(2, 4)}, {sp(4, 5)}, {sp(5, 7)}}},
		{"one per part", []transcript.Span{sp(2, 5)}, 10, [][]transcript.Span{{sp(2, 3)}, {sp(3, 4)}, {sp(4, 5)}}},
		{"across spans", []transcript.Span{sp(0, 1), sp(3, 4), sp(5, 7)}, 21, [][]transcript.Span{{sp(0, 1), sp(3, 4)}, {sp(5, 7)}}},
		{"spans joined", []transcript.Span{sp(2, 3), sp(3, 4)}, 20, [][]transcript.Span{{sp(2, 4)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splitSpans(msgs, tt.spans, tt.limit); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splitSpans = %v, want %v", got, tt.want)
			}
		})
	}
}

// A stretch to compact far larger than what one call may carry (here, files
// of about 10,000 tokens under a budget of 9,000) is summarised in parts:
// each call carries one part, cut to the budget by the activity, and brings
// the summary so far up to date.
func TestSummaryInParts(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	read := func(path string) model.Response {
		return model.Response{ToolCalls: []model.ToolCall{{ID: path, Name: "read_file", Arguments: []byte(`{"path":"` + path + `"}`)}}}
	}
	replies := []model.Response{read("a"), read("b"), read("c"), {Content: "read them all"}}
	var seen []activities.CallModelInput
	summaries, answers := 0, 0
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		seen = append(seen, in)
		if in.Summarize != nil {
			summaries++
			return model.Response{Content: fmt.Sprintf("summary %d", summaries)}, nil
		}
		answers++
		return replies[answers-1], nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return activities.RunToolResult{Content: strings.Repeat("data ", 6_000)}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
	registerHost(env)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read a, b and c", IdleTimeoutS: 1,
		Context: api.ContextConfig{MaxTokens: 9000}, Todo: todo.Config{Enabled: new(false)}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	msgs := queryMessages(t, env)
	limit := 9000 - toolTokens - summaryTokens
	var parts []activities.CallModelInput
	longest, chain := 0, 0
	for _, in := range seen {
		if in.Summarize == nil {
			continue
		}
		// A part after the first carries the summary so far; a new
		// compaction starts again (the older summary is among its messages).
		if prev := in.Summarize.Previous; prev == "" {
			chain = 1
		} else if want := fmt.Sprintf("summary %d", len(parts)); prev != want {
			t.Errorf("summarising call %d: previous = %q, want %q", len(parts)+1, prev, want)
		} else {
			chain++
		}
		longest = max(longest, chain)
		parts = append(parts, in)
		tok, n := 0, 0
		for _, sp := range in.Spans {
			for i := sp.Start; i < sp.End; i++ {
				tok += tokens(msgs[i])
				n++
			}
		}
		if tok > limit && n > 1 {
			t.Errorf("a part of %d messages carries %d tokens, over %d", n, tok, limit)
		}
		if in.Summarize.MaxBytes != limit*bytesPerToken {
			t.Errorf("a part's max_bytes = %d, want %d", in.Summarize.MaxBytes, limit*bytesPerToken)
		}
	}
	if longest < 2 {
		t.Fatalf("%d summarising calls, none after another; want a stretch summarised in parts", len(parts))
	}
	var res api.AgentResult
	_ = env.GetWorkflowResult(&res)
	if res.Reply != "read them all" {
		t.Errorf("reply = %q", res.Reply)
	}
	var summary string
	for _, m := range msgs {
		if m.Name == api.NameContextSummary {
			summary = m.Content
		}
	}
	if !strings.HasSuffix(summary, fmt.Sprintf("summary %d", summaries)) {
		t.Errorf("the context_summary is %q; want the last part's summary", summary)
	}
}
