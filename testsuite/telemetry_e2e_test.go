package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/internal/telemetrytest"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/telemetry"
	"github.com/todoflow/todoflow/workflows"
)

// usageModel answers model calls by their number, each answer with the
// usage it reports, and fails the first attempt of the calls in flaky with
// a passing error, as a provider's 503 would.
type usageModel struct {
	answers []model.Response
	flaky   map[int]bool

	mu       sync.Mutex
	attempts map[int]int
}

func (m *usageModel) Complete(_ context.Context, req model.Request) (model.Response, error) {
	m.mu.Lock()
	m.attempts[req.Call]++
	first := m.attempts[req.Call] == 1
	m.mu.Unlock()
	if m.flaky[req.Call] && first {
		return model.Response{}, &model.Error{Retryable: true, StatusCode: 503, Message: fmt.Sprintf("call %d: 503 Service Unavailable", req.Call)}
	}
	if req.Call < 1 || req.Call > len(m.answers) {
		return model.Response{}, &model.Error{Message: fmt.Sprintf("call %d is not scripted", req.Call)}
	}
	return m.answers[req.Call-1], nil
}

func calls(cs ...model.ToolCall) []model.ToolCall { return cs }

func call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// A chat session of two turns, with model calls, a retried model call and
// tool calls of every outcome, served by a worker that is restarted between
// the turns (the second worker replays the first turn from history): the
// worker's /metrics counts each model call, token and tool call exactly
// once, beside the SDK's own metrics, and the collector receives one trace
// with a span for the start, the workflow, every activity the workflow
// starts and every attempt of it.
func TestMetricsAndTracesEndToEnd(t *testing.T) {
	s := startServer(t)
	collector, endpoint := telemetrytest.NewHTTP(t)
	for _, k := range []string{telemetry.EnvTracesEndpoint, telemetry.EnvProtocol, telemetry.EnvTracesProtocol, telemetry.EnvTracesExporter, telemetry.EnvSDKDisabled, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
	t.Setenv(telemetry.EnvEndpoint, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// What the worker binary sets up with --metrics-addr and the OTel
	// environment.
	tracing, err := telemetry.StartTracing(ctx, "todoflow-worker")
	if err != nil || tracing == nil {
		t.Fatalf("StartTracing = %v, %v", tracing, err)
	}
	metrics, err := telemetry.NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	scrapeURL := httptest.NewServer(metrics.HTTPHandler()).URL
	c, _, err := agentworker.DialWith(ctx, agentworker.DialOptions{
		Address: s.srv.Address(), Namespace: s.srv.Namespace(), Local: true, Logger: quiet{},
		MetricsHandler: metrics.MetricsHandler(), Interceptors: tracing.Interceptors(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	fake := &usageModel{
		answers: []model.Response{
			{ToolCalls: calls(
				call("c1", "write_file", `{"path": "a.txt", "content": "hello"}`),
				call("c2", "read_file", `{"path": "missing.txt"}`),
				call("c3", "made_up_tool", `{}`)),
				Usage: model.Usage{PromptTokens: 100, CompletionTokens: 10}},
			{Content: "turn one done", ToolCalls: calls(), Usage: model.Usage{PromptTokens: 50, CompletionTokens: 5}},
			{ToolCalls: calls(
				call("c4", "read_file", `{"path": "a.txt"}`),
				call("c5", "list_files", `{}`)),
				Usage: model.Usage{PromptTokens: 200, CompletionTokens: 20}},
			{Content: "turn two done", ToolCalls: calls(), Usage: model.Usage{PromptTokens: 70, CompletionTokens: 7}},
		},
		flaky:    map[int]bool{3: true},
		attempts: map[int]int{},
	}
	acts := &activities.Activities{
		Transcripts: transcript.NewReader(c.WorkflowService(), nil, 0),
		Models:      func(string) (model.Client, string, error) { return fake, "fake-model", nil },
		Tools:       tools.DefaultRegistry(),
		StateDir:    t.TempDir(),
	}
	probe := &replayProbe{}
	startWorker := func() worker.Worker {
		w := worker.New(c, api.TaskQueue, worker.Options{Interceptors: []interceptor.WorkerInterceptor{probe}})
		workflows.Register(w, acts)
		if err := w.Start(); err != nil {
			t.Fatalf("start worker: %v", err)
		}
		return w
	}

	w1 := startWorker()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "telemetry-e2e", TaskQueue: api.TaskQueue},
		api.WorkflowName, api.AgentInput{Prompt: "turn one", Model: "openai:fake-model", Tools: []string{"read_file", "write_file", "made_*"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the first turn", func() bool {
		st, ok := queryState(ctx, c, run.GetID())
		return ok && st.Status == api.StatusWaitingUser && st.Turns == 1
	})
	first := telemetrytest.Get(t, scrapeURL)

	// A new worker has an empty workflow cache: the second turn starts by
	// replaying the first from history.
	w1.Stop()
	w2 := startWorker()
	defer w2.Stop()
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), UpdateName: api.SendMessageUpdate,
		Args: []any{"turn two"}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var reply string
	if err := h.Get(ctx, &reply); err != nil || reply != "turn two done" {
		t.Fatalf("send_message = %q, %v", reply, err)
	}
	if err := c.SignalWorkflow(ctx, run.GetID(), "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	last := completedScrape(t, scrapeURL)

	type want struct {
		name   string
		labels map[string]string
		first  float64 // after the first turn
		last   float64 // at the end
	}
	m := func(kv ...string) map[string]string {
		out := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []want{
		{"todoflow_model_calls_total", m("model", "fake-model", "outcome", "ok"), 2, 4},
		// The first attempt of call 3 failed and was retried.
		{"todoflow_model_calls_total", m("model", "fake-model", "outcome", "error"), 0, 1},
		{"todoflow_model_tokens_total", m("model", "fake-model", "kind", "prompt"), 150, 420},
		{"todoflow_model_tokens_total", m("model", "fake-model", "kind", "completion"), 15, 42},
		{"todoflow_model_call_latency_seconds_count", m("model", "fake-model"), 2, 5},
		{"todoflow_tool_calls_total", m("tool", "write_file", "outcome", "ok"), 1, 1},
		{"todoflow_tool_calls_total", m("tool", "read_file", "outcome", "error"), 1, 1},
		{"todoflow_tool_calls_total", m("tool", "read_file", "outcome", "ok"), 0, 1},
		{"todoflow_tool_calls_total", m("tool", "", "outcome", "unknown"), 1, 1},
		{"todoflow_tool_calls_total", m("tool", "list_files", "outcome", "refused"), 0, 1},
		{"todoflow_tool_calls_total", nil, 3, 5},
		// The SDK's metrics, through the same handler.
		{"temporal_activity_execution_latency_seconds_count", m("activity_type", "CallModel", "workflow_type", "AgentWorkflow"), 2, 5},
		// Tool calls run as RunToolOnHost, or as RunTool on the host's
		// queue once a worker that is not the host refused one.
		{"temporal_activity_execution_latency_seconds_count", m("activity_type", "RunTool|RunToolOnHost"), 3, 5},
		{"temporal_workflow_completed_total", m("workflow_type", "AgentWorkflow"), 0, 1},
	}
	// sum adds the series of each of the activity types "A|B" names.
	sum := func(r telemetrytest.Scrape, name string, labels map[string]string) float64 {
		types, ok := labels["activity_type"]
		if !ok {
			return r.Sum(name, labels)
		}
		total := 0.0
		for _, typ := range strings.Split(types, "|") {
			one := maps.Clone(labels)
			one["activity_type"] = typ
			total += r.Sum(name, one)
		}
		return total
	}
	for _, tt := range tests {
		if got := sum(first, tt.name, tt.labels); got != tt.first {
			t.Errorf("after the first turn: %s%v = %g, want %g; served:\n%s", tt.name, tt.labels, got, tt.first, first.Named(tt.name))
		}
		if got := sum(last, tt.name, tt.labels); got != tt.last {
			t.Errorf("at the end: %s%v = %g, want %g; served:\n%s", tt.name, tt.labels, got, tt.last, last.Named(tt.name))
		}
	}
	// The todoflow series carry the SDK's activity tags too.
	if n := last.Series("todoflow_model_calls_total", m("namespace", s.srv.Namespace(), "task_queue", api.TaskQueue, "activity_type", "CallModel")); n != 2 {
		t.Errorf("%d todoflow_model_calls_total series with the activity's tags, want 2 (ok, error):\n%s", n, last.Named("todoflow_model_calls_total"))
	}
	// The second worker did replay the first turn (or the counts above
	// would prove nothing about replays).
	if n := probe.replays.Load(); n == 0 {
		t.Errorf("the second worker did not replay the workflow")
	} else {
		t.Logf("workflow executions that began with a replay: %d", n)
	}

	if err := tracing.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	starts := collector.Named("StartWorkflow:AgentWorkflow")
	if len(starts) != 1 {
		t.Fatalf("%d StartWorkflow:AgentWorkflow spans, want 1; spans: %v", len(starts), spanNames(collector))
	}
	trace := starts[0].TraceID
	// The workflow starts an activity once per model call (4), and the
	// server retries the call that failed as the next attempt of the same
	// activity (workflows/modelcall.go), which the workflow does not see:
	// StartActivity spans count the calls, RunActivity spans (one per
	// attempt, on the worker) count the attempts (5), as the SDK's
	// activity_execution_latency does above.
	for _, tt := range []struct {
		name string
		n    int
	}{
		{"StartActivity:CallModel", 4},
		{"RunActivity:CallModel", 5},
		{"StartActivity:RunTool|StartActivity:RunToolOnHost", 5},
		{"RunActivity:RunTool|RunActivity:RunToolOnHost", 5},
		{"UpdateWorkflow:send_message", 1},
	} {
		var spans []telemetrytest.Span
		for _, name := range strings.Split(tt.name, "|") {
			spans = append(spans, collector.Named(name)...)
		}
		if len(spans) != tt.n {
			t.Errorf("%d %s spans, want %d", len(spans), tt.name, tt.n)
		}
		for _, sp := range spans {
			if tt.name != "UpdateWorkflow:send_message" && sp.TraceID != trace {
				t.Errorf("%s span in trace %s, want the start's %s", tt.name, sp.TraceID, trace)
			}
			if sp.Service != "todoflow-worker" {
				t.Errorf("%s span of service %q", tt.name, sp.Service)
			}
		}
	}
	if len(collector.Named("RunWorkflow:AgentWorkflow")) == 0 {
		t.Errorf("no RunWorkflow:AgentWorkflow span; spans: %v", spanNames(collector))
	}
	var tokens []string
	for _, sp := range collector.Named("RunActivity:CallModel") {
		tokens = append(tokens, sp.Attrs["todoflow.outcome"]+":"+sp.Attrs["gen_ai.usage.input_tokens"])
	}
	slices.Sort(tokens)
	if want := []string{"error:", "ok:100", "ok:200", "ok:50", "ok:70"}; !slices.Equal(tokens, want) {
		t.Errorf("CallModel spans' outcome:input tokens %v, want %v", tokens, want)
	}
}

// replayProbe counts the workflow executions that begin by replaying
// history: those of a worker that did not have the run in its cache.
type replayProbe struct {
	interceptor.WorkerInterceptorBase
	replays atomic.Int32
}

func (p *replayProbe) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &replayProbeInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, p: p}
}

type replayProbeInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	p *replayProbe
}

func (i *replayProbeInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if workflow.IsReplaying(ctx) {
		i.p.replays.Add(1)
	}
	return i.Next.ExecuteWorkflow(ctx, in)
}

// completedScrape scrapes url once the SDK has counted the run's
// completion, which it does after the server took it: a client that saw the
// run complete may scrape before.
func completedScrape(t *testing.T, url string) telemetrytest.Scrape {
	t.Helper()
	var s telemetrytest.Scrape
	waitFor(t, 10*time.Second, "temporal_workflow_completed_total", func() bool {
		s = telemetrytest.Get(t, url)
		return s.Sum("temporal_workflow_completed_total", nil) > 0
	})
	return s
}

func spanNames(c *telemetrytest.Collector) string {
	var names []string
	for _, s := range c.Spans() {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

// The worker binary with --metrics-addr and OTEL_EXPORTER_OTLP_ENDPOINT:
// it says where it serves /metrics, counts a scripted run's model and tool
// calls there, and sends its spans to the collector before it exits on
// SIGTERM.
func TestWorkerBinaryMetricsAndTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	bin := buildWorker(t)
	s := startServer(t)
	collector, endpoint := telemetrytest.NewHTTP(t)
	for _, k := range []string{telemetry.EnvTracesEndpoint, telemetry.EnvProtocol, telemetry.EnvTracesProtocol, telemetry.EnvTracesExporter, telemetry.EnvSDKDisabled, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", telemetry.EnvMetricsAddr} {
		t.Setenv(k, "")
	}
	t.Setenv(telemetry.EnvEndpoint, endpoint)
	w := startWorkerProc(t, bin, s, "worker", "--metrics-addr", "127.0.0.1:0")

	url := w.logged(t, "worker: metrics at ")
	if !strings.HasSuffix(url, "/metrics") {
		t.Fatalf("metrics at %q, want a /metrics URL", url)
	}
	sc := writeScenario(t, `{"name": "measured", "input": {"prompt": "go"},
	  "model": [
	    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}},
	                    {"name": "read_file", "arguments": {"path": "missing.txt"}}]},
	    {"content": "done"}
	  ]}`)
	out, _ := play(t, s.c, sc, time.Minute)
	if out.RunStatus != "completed" {
		t.Fatalf("run %s", out.RunStatus)
	}
	got := completedScrape(t, url)
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"todoflow_model_calls_total", map[string]string{"outcome": "ok"}, 2},
		{"todoflow_model_call_latency_seconds_count", nil, 2},
		{"todoflow_tool_calls_total", map[string]string{"tool": "write_file", "outcome": "ok"}, 1},
		{"todoflow_tool_calls_total", map[string]string{"tool": "read_file", "outcome": "error"}, 1},
		{"temporal_workflow_completed_total", map[string]string{"workflow_type": "AgentWorkflow"}, 1},
	} {
		if v := got.Sum(tt.name, tt.labels); v != tt.want {
			t.Errorf("%s%v = %g, want %g; served:\n%s", tt.name, tt.labels, v, tt.want, got.Named(tt.name))
		}
	}

	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not exit on SIGTERM")
	}
	for _, tt := range []struct {
		name string
		n    int // 0: one or more
	}{
		{"RunWorkflow:AgentWorkflow", 0},
		{"RunActivity:CallModel", 2},
		{"RunActivity:RunTool|RunActivity:RunToolOnHost", 2},
	} {
		var spans []telemetrytest.Span
		for _, name := range strings.Split(tt.name, "|") {
			spans = append(spans, collector.Named(name)...)
		}
		if len(spans) == 0 || tt.n > 0 && len(spans) != tt.n {
			t.Errorf("%d %s spans received, want %d; all: %s", len(spans), tt.name, tt.n, spanNames(collector))
		}
		for _, sp := range spans {
			if sp.Service != "todoflow-worker" {
				t.Errorf("%s span of service %q", tt.name, sp.Service)
			}
		}
	}
}
