package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/todoflow/todoflow/model"
)

// todoflow's own metrics, reported through the metrics handler of the
// worker's Temporal client (client.Options.MetricsHandler), beside the SDK's
// metrics and with the same activity tags (namespace, task_queue,
// workflow_type, activity_type). Whatever handler the client was dialled
// with (Prometheus through OpenTelemetry, tally, a handler of your own)
// receives them.
//
// They are counted here, in the activities, because an activity body runs
// once per attempt and never again when the workflow replays: a replay, after
// a worker restart or a cache eviction, counts nothing twice. Every attempt
// is counted, a failed one with its outcome, so that the counts match what
// the providers and the tools saw.
//
// The names carry no unit or _total suffix, as the SDK's do: a Prometheus
// exporter adds them (todoflow_model_calls_total,
// todoflow_model_call_latency_seconds).
const (
	// MetricModelCalls counts model calls, by model and outcome
	// (OutcomeOK, OutcomeError, OutcomeRejected, OutcomeContextOverflow,
	// OutcomeCanceled, OutcomeReused).
	MetricModelCalls = "todoflow_model_calls"
	// MetricModelTokens counts the tokens the provider reported for the
	// calls that succeeded, by model and kind (TokensPrompt,
	// TokensCompletion).
	MetricModelTokens = "todoflow_model_tokens"
	// MetricModelLatency is a timer of the model calls (the request alone,
	// not the transcript read), by model and outcome.
	MetricModelLatency = "todoflow_model_call_latency"
	// MetricToolCalls counts the RunTool calls, by tool and outcome
	// (OutcomeOK, OutcomeError, OutcomeRefused, OutcomeUnknown,
	// OutcomeHeld, OutcomeUncertain, OutcomeFailed, OutcomeCanceled).
	MetricToolCalls = "todoflow_tool_calls"
)

// Tag names and values of todoflow's metrics; docs/observability.md says
// what each outcome means to an operator.
const (
	TagModel   = "model"
	TagOutcome = "outcome"
	TagKind    = "kind"
	TagTool    = "tool"

	OutcomeOK              = "ok"
	OutcomeError           = "error"            // retryable model error; a tool's error message
	OutcomeRejected        = "rejected"         // the provider refused the request for good
	OutcomeContextOverflow = "context_overflow" // the workflow shortens the transcript
	OutcomeRefused         = "refused"          // the run does not allow the tool
	OutcomeUnknown         = "unknown"          // the worker has no tool of that name
	OutcomeHeld            = "held"             // held for approval (RunToolInput.HoldDestructive)
	OutcomeUncertain       = "uncertain"        // interrupted after it may have reached the tool (resend.go)
	OutcomeFailed          = "failed"           // a RunTool attempt failed without an answer
	OutcomeCanceled        = "canceled"         // the attempt was cancelled or timed out
	// OutcomeReused: a model call's attempt returned the answer an
	// earlier attempt of the call got on this worker (see AnswerCache); the
	// provider was not asked.
	OutcomeReused = "reused"

	TokensPrompt     = "prompt"
	TokensCompletion = "completion"
)

// countModelCall reports one model call that took d and ended with err (nil:
// resp is the answer). The call's trace span, when tracing is on, gets the
// model and the tokens under OpenTelemetry's GenAI attribute names.
func countModelCall(ctx context.Context, modelName string, d time.Duration, resp model.Response, err error) {
	modelName = modelLabels.label(modelName)
	outcome := modelOutcome(ctx, err)
	h := running(ctx).metrics.WithTags(map[string]string{TagModel: modelName, TagOutcome: outcome})
	h.Counter(MetricModelCalls).Inc(1)
	h.Timer(MetricModelLatency).Record(d)

	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("gen_ai.request.model", modelName), attribute.String("todoflow.outcome", outcome))
	if err != nil {
		return
	}
	for _, t := range []struct {
		kind string
		n    int64
	}{{TokensPrompt, resp.Usage.PromptTokens}, {TokensCompletion, resp.Usage.CompletionTokens}} {
		if t.n > 0 {
			running(ctx).metrics.WithTags(map[string]string{TagModel: modelName, TagKind: t.kind}).Counter(MetricModelTokens).Inc(t.n)
		}
	}
	span.SetAttributes(
		attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.PromptTokens),
		attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.CompletionTokens))
}

// countReusedAnswer reports a model call's attempt answered from the
// worker's answer cache: no request, so no latency and no tokens.
func countReusedAnswer(ctx context.Context, modelName string) {
	running(ctx).metrics.WithTags(map[string]string{TagModel: modelLabels.label(modelName), TagOutcome: OutcomeReused}).Counter(MetricModelCalls).Inc(1)
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("todoflow.outcome", OutcomeReused))
}

// MaxModelLabels bounds the distinct values of the model tag a worker
// reports: the model's name comes from a run's input, and every new value
// is a new time series in the metrics backend. Past the bound, calls are
// counted under OtherModel.
const MaxModelLabels = 32

// OtherModel is the model tag of the calls past MaxModelLabels.
const OtherModel = "other"

// modelLabels are the model tags this process has reported so far.
var modelLabels = &labelSet{seen: make(map[string]bool)}

// labelSet hands out at most MaxModelLabels distinct labels.
type labelSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

// label returns name while the set has room for it, else OtherModel.
func (s *labelSet) label(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[name] {
		return name
	}
	if len(s.seen) >= MaxModelLabels {
		return OtherModel
	}
	s.seen[name] = true
	return name
}

// modelOutcome names what a model call came to, as classify judges it.
func modelOutcome(ctx context.Context, err error) string {
	if err == nil {
		return OutcomeOK
	}
	if ctx.Err() != nil {
		// The attempt was cut short (cancelled, or out of time), whatever
		// the client made of it; a request timeout of the client's own,
		// with the context alive, is an error like any other.
		return OutcomeCanceled
	}
	var me *model.Error
	if errors.As(err, &me) {
		switch {
		case me.ContextOverflow:
			return OutcomeContextOverflow
		case !me.Retryable:
			return OutcomeRejected
		}
	}
	return OutcomeError
}

// countToolCall reports one RunTool call of the tool called name. tool, the
// metric's tag, is name once the worker knows the tool, and empty before (a
// model may invent any name, and each would become a series of its own; the
// trace span, which costs no series, gets the name as called). outcome is
// what the call came to when it returned no error; an error makes it
// OutcomeFailed or OutcomeCanceled.
func countToolCall(ctx context.Context, name, tool, outcome string, err error) {
	outcome = toolOutcome(ctx, outcome, err)
	running(ctx).metrics.WithTags(map[string]string{TagTool: tool, TagOutcome: outcome}).Counter(MetricToolCalls).Inc(1)
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("gen_ai.tool.name", name), attribute.String("todoflow.outcome", outcome))
}

// toolOutcome is the outcome of a RunTool call that returned err, or, when
// err is nil, the outcome its answer had.
func toolOutcome(ctx context.Context, answered string, err error) string {
	switch {
	case err == nil:
		return answered
	case ctx.Err() != nil:
		return OutcomeCanceled
	}
	return OutcomeFailed
}
