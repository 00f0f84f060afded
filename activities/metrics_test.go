package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

// capture is a client.MetricsHandler that keeps what is reported to it:
// counter sums and timer records by name and todoflow's own tags (the
// SDK's activity tags are left out of the key).
type capture struct {
	tags map[string]string
	mu   *sync.Mutex
	sums map[string]int64
}

func newCapture() *capture {
	return &capture{tags: map[string]string{}, mu: &sync.Mutex{}, sums: map[string]int64{}}
}

func (c *capture) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(c.tags)
	maps.Copy(merged, tags)
	return &capture{tags: merged, mu: c.mu, sums: c.sums}
}

// key is "name{k=v,...}" with todoflow's tags, sorted.
func (c *capture) key(name string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(c.tags)) {
		switch k {
		case TagModel, TagOutcome, TagKind, TagTool:
			kv = append(kv, k+"="+c.tags[k])
		}
	}
	return name + "{" + strings.Join(kv, ",") + "}"
}

func (c *capture) add(key string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sums[key] += n
}

type counterFunc func(int64)

func (f counterFunc) Inc(n int64) { f(n) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(float64) {}

func (c *capture) Counter(name string) client.MetricsCounter {
	return counterFunc(func(n int64) { c.add(c.key(name), n) })
}

// Timer counts the records (a latency's value is the test's clock).
func (c *capture) Timer(name string) client.MetricsTimer {
	return timerFunc(func(time.Duration) { c.add(c.key(name)+"#records", 1) })
}

func (c *capture) Gauge(string) client.MetricsGauge { return gaugeFunc(nil) }

// got is what was reported, as sorted "key value" lines.
func (c *capture) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, v := range c.sums {
		out = append(out, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(out)
	return out
}

// answering is a model that answers with resp or fails with err.
type answering struct {
	resp model.Response
	err  error
}

func (m answering) Complete(context.Context, model.Request) (model.Response, error) {
	return m.resp, m.err
}

func TestCallModelMetrics(t *testing.T) {
	tests := []struct {
		name   string
		models ModelResolver
		want   []string
	}{
		{
			name: "answer with usage",
			models: func(string) (model.Client, string, error) {
				return answering{resp: model.Response{Content: "hi", Usage: model.Usage{PromptTokens: 120, CompletionTokens: 7}}}, "gpt-x", nil
			},
			want: []string{
				"todoflow_model_call_latency{model=gpt-x,outcome=ok}#records 1",
				"todoflow_model_calls{model=gpt-x,outcome=ok} 1",
				"todoflow_model_tokens{kind=completion,model=gpt-x} 7",
				"todoflow_model_tokens{kind=prompt,model=gpt-x} 120",
			},
		},
		{
			name: "answer without usage",
			models: func(string) (model.Client, string, error) {
				return answering{resp: model.Response{Content: "hi"}}, "local", nil
			},
			want: []string{
				"todoflow_model_call_latency{model=local,outcome=ok}#records 1",
				"todoflow_model_calls{model=local,outcome=ok} 1",
			},
		},
		{
			name: "passing failure",
			models: func(string) (model.Client, string, error) {
				return answering{err: &model.Error{Retryable: true, StatusCode: 503, Message: "503"}}, "gpt-x", nil
			},
			want: []string{
				"todoflow_model_call_latency{model=gpt-x,outcome=error}#records 1",
				"todoflow_model_calls{model=gpt-x,outcome=error} 1",
			},
		},
		{
			name: "an error of no kind is retried",
			models: func(string) (model.Client, string, error) {
				return answering{err: errors.New("odd")}, "gpt-x", nil
			},
			want: []string{
				"todoflow_model_call_latency{model=gpt-x,outcome=error}#records 1",
				"todoflow_model_calls{model=gpt-x,outcome=error} 1",
			},
		},
		{
			name: "refused for good",
			models: func(string) (model.Client, string, error) {
				return answering{err: &model.Error{StatusCode: 401, Message: "401"}}, "gpt-x", nil
			},
			want: []string{
				"todoflow_model_call_latency{model=gpt-x,outcome=rejected}#records 1",
				"todoflow_model_calls{model=gpt-x,outcome=rejected} 1",
			},
		},
		{
			name: "context overflow",
			models: func(string) (model.Client, string, error) {
				return answering{err: &model.Error{ContextOverflow: true, StatusCode: 400, Message: "too long"}}, "gpt-x", nil
			},
			want: []string{
				"todoflow_model_call_latency{model=gpt-x,outcome=context_overflow}#records 1",
				"todoflow_model_calls{model=gpt-x,outcome=context_overflow} 1",
			},
		},
		{
			name: "no model called for a bad reference",
			models: func(string) (model.Client, string, error) {
				return nil, "", errors.New("unknown model kind")
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newCapture()
			var s testsuite.WorkflowTestSuite
			s.SetMetricsHandler(h)
			env := s.NewTestActivityEnvironment()
			a := &Activities{Models: tt.models}
			env.RegisterActivity(a)
			_, _ = env.ExecuteActivity(a.CallModel, CallModelInput{
				Model: "x:y", Call: 1, Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, WorkerTools: []string{},
			})
			if got := h.got(); !slices.Equal(got, tt.want) {
				t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestRunToolMetrics(t *testing.T) {
	tests := []struct {
		name  string
		call  string
		allow []string
		want  string
	}{
		{"ok", "list_files", nil, "todoflow_tool_calls{outcome=ok,tool=list_files} 1"},
		{"tool error", "fail", nil, "todoflow_tool_calls{outcome=error,tool=fail} 1"},
		{"panic", "crash", nil, "todoflow_tool_calls{outcome=error,tool=crash} 1"},
		{"retry asked", "flaky", nil, "todoflow_tool_calls{outcome=failed,tool=flaky} 1"},
		{"not allowed", "write_file", []string{"read_file"}, "todoflow_tool_calls{outcome=refused,tool=write_file} 1"},
		// Names the worker does not know get no series of their own.
		{"not allowed, unknown", "made_up", []string{"read_file"}, "todoflow_tool_calls{outcome=refused,tool=} 1"},
		{"unknown", "made_up", nil, "todoflow_tool_calls{outcome=unknown,tool=} 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newCapture()
			var s testsuite.WorkflowTestSuite
			s.SetMetricsHandler(h)
			env := s.NewTestActivityEnvironment()
			a := &Activities{Tools: testTools(t), StateDir: t.TempDir()}
			env.RegisterActivity(a)
			_, _ = env.ExecuteActivity(a.RunTool, RunToolInput{WorkflowID: "wf", Call: toolCall(tt.call, `{}`), WorkerTools: tt.allow})
			if got := h.got(); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

// The outcomes that a test environment cannot provoke: an attempt cut
// short, whatever error the client or the tool made of it.
func TestOutcomes(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	timeout := &model.Error{Retryable: true, Message: "request timed out", Err: context.DeadlineExceeded}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"model call cut short", modelOutcome(done, timeout), OutcomeCanceled},
		{"client's own timeout", modelOutcome(live, timeout), OutcomeError},
		{"model answered", modelOutcome(done, nil), OutcomeOK},
		{"tool cut short", toolOutcome(done, OutcomeOK, context.Canceled), OutcomeCanceled},
		{"tool attempt failed", toolOutcome(live, OutcomeOK, errors.New("server down")), OutcomeFailed},
		{"tool answered", toolOutcome(done, OutcomeError, nil), OutcomeError},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: outcome %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// A model's name comes from a run's input, and each new one would be a new
// time series: a worker reports at most MaxModelLabels of them, and the
// calls of any other model as OtherModel.
func TestModelLabelsAreBounded(t *testing.T) {
	s := &labelSet{seen: make(map[string]bool)}
	for i := range MaxModelLabels {
		name := fmt.Sprintf("openai:model-%d", i)
		if got := s.label(name); got != name {
			t.Fatalf("label %d: %q, want the model's own while there is room", i, got)
		}
	}
	tests := []struct{ name, want string }{
		{"openai:model-0", "openai:model-0"}, // one it has
		{"openai:model-31", "openai:model-31"},
		{"openai:one-more", OtherModel},
		{"script:/dev/zero", OtherModel},
	}
	for _, tt := range tests {
		if got := s.label(tt.name); got != tt.want {
			t.Errorf("label(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
