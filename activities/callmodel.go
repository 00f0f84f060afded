package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// CallModelInput names the model call. It does not carry the conversation,
// only what was added to it since the previous call (package transcript),
// so that history grows with the conversation rather than with its square.
type CallModelInput struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	AgentID    string `json:"agent_id"`
	Model      string `json:"model"`
	Turn       int    `json:"turn"`
	Call       int    `json:"call"`
	// Spans select the messages the model receives (the context window).
	Spans []transcript.Span `json:"spans"`
	// Messages, when set, are sent as they are and Spans are ignored; for
	// callers that have no workflow to read from.
	Messages []model.Message `json:"messages,omitempty"`
	// New, when set, are the messages added to the transcript since the
	// workflow's previous model call (transcript.NewMessages).
	New *transcript.NewMessages `json:"new,omitempty"`
	// TodoTools asks for the workflow's own tools (todo, plan, subagents).
	// The activity builds their specs from the same pure definitions the
	// workflow uses, so kilobytes of schema do not enter history per call.
	TodoTools *TodoTools `json:"todo_tools,omitempty"`
	// Tools are further tool specs to offer, sent as they are.
	Tools []model.ToolSpec `json:"tools,omitempty"`
	// WorkerTools names the worker's tools the model may use; nil means all
	// of them, an empty list none.
	WorkerTools []string `json:"worker_tools"`
	// Summarize, when set, makes this a summarising call: the selected
	// messages are sent as one text after the instructions, with no tools.
	Summarize *Summarize `json:"summarize,omitempty"`
	// ModelChosen says the model is not the run's own choice but its
	// parent agent's model's (spawn_subagent's "model"): the worker serves
	// it only if its operator allows it (Activities.SubagentModels).
	ModelChosen bool `json:"model_chosen,omitempty"`
}

// Summarize asks for a summary of the selected messages.
type Summarize struct {
	Instructions string `json:"instructions"`
	// Previous is the summary of the conversation before the selected
	// messages, when a long stretch is summarised in parts: the answer is
	// that summary brought up to date.
	Previous string `json:"previous,omitempty"`
	// MaxBytes, when not 0, bounds the conversation's text: the longest
	// messages are cut in the middle, with a marker, so that one huge
	// message cannot make the summarising call overflow the model's context.
	MaxBytes int `json:"max_bytes,omitempty"`
}

// request is the model request of a summarising call. The messages go as
// one plain text, not as chat messages: a slice of a conversation may hold a
// tool result without its call, which providers refuse.
func (s *Summarize) request(msgs []model.Message) []model.Message {
	pieces := make([]string, len(msgs))
	for i, m := range msgs {
		var b strings.Builder
		who := m.Role
		if m.Name != "" {
			who += " (" + m.Name + ")"
		}
		fmt.Fprintf(&b, "[%s]\n%s\n", who, m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "(calls %s %s)\n", c.Name, c.Arguments)
		}
		b.WriteString("\n")
		pieces[i] = b.String()
	}
	if s.MaxBytes > 0 {
		pieces = shorten(pieces, s.MaxBytes)
	}
	text := "The conversation to summarise:\n\n" + strings.Join(pieces, "")
	if s.Previous != "" {
		text = "The summary so far, of the conversation before the part below:\n\n" + s.Previous +
			"\n\nWrite the summary again so that it also covers this next part of the conversation:\n\n" + strings.Join(pieces, "")
	}
	return []model.Message{
		{Role: model.RoleSystem, Content: s.Instructions, ToolCalls: []model.ToolCall{}},
		{Role: model.RoleUser, Content: text, ToolCalls: []model.ToolCall{}},
	}
}

// shorten cuts the longest pieces in the middle so that together they take
// at most about maxBytes: every piece keeps up to the same share (the
// shorter ones whole), and a cut piece keeps its beginning and its end, which
// usually say what it was and how it ended, around a marker of what was cut.
func shorten(pieces []string, maxBytes int) []string {
	lens, total := make([]int, len(pieces)), 0
	for i, p := range pieces {
		lens[i] = len(p)
		total += len(p)
	}
	if total <= maxBytes {
		return pieces
	}
	// The largest share that fits: lengths sorted, the shorter pieces
	// whole, the rest cut to an equal share of what is left.
	slices.Sort(lens)
	share, left := 0, maxBytes
	for i, n := range lens {
		if each := left / (len(lens) - i); n > each {
			share = each
			break
		}
		left -= n
	}
	out := make([]string, len(pieces))
	for i, p := range pieces {
		if len(p) <= share {
			out[i] = p
			continue
		}
		marker := fmt.Sprintf("\n[… %d bytes of this message left out …]\n", len(p)-share)
		keep := max(share-len(marker), 0)
		head := text.CutIndex(p, keep/2)
		tail := text.NextRuneStart(p, len(p)-(keep-head))
		out[i] = p[:head] + marker + p[tail:]
	}
	return out
}

// TodoTools selects the todo tools of a model call.
type TodoTools struct {
	// WriteDescription replaces write_todos' description when set
	// (input.todo.tool_description).
	WriteDescription string `json:"write_description,omitempty"`
}

// specs returns the tool specs t stands for: a copy of todoSpecs, with
// write_todos' description replaced when t sets one.
func (t *TodoTools) specs() []model.ToolSpec {
	if t == nil {
		return nil
	}
	out := slices.Clone(todoSpecs())
	if t.WriteDescription != "" {
		for i := range out {
			if out[i].Name == todo.ToolWrite {
				out[i].Description = t.WriteDescription
			}
		}
	}
	return out
}

// todoSpecs are the specs of the workflow's own tools, built once: building
// them copied every schema (kilobytes) on every model call, a third of what
// the activity cost the worker around a model that costs nothing. Callers
// share the schemas and never change them, as they share the transcript's
// messages.
var todoSpecs = sync.OnceValue(func() []model.ToolSpec {
	defs := todo.Tools(todo.Settings{Enabled: true})
	defs = append(defs, todo.PlanTools(true)...)
	out := make([]model.ToolSpec, len(defs))
	for i, d := range defs {
		out[i] = model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
	}
	return out
})

// CallModel sends the selected transcript to the model and returns its answer.
// Errors are classified: a model.Error decides retryable or not (and the
// provider's Retry-After becomes the next retry delay, see retryDelay); a
// bad model reference is not retryable. Each call to the model is counted, with its latency and
// tokens (metrics.go).
func (a *Activities) CallModel(ctx context.Context, in CallModelInput) (model.Response, error) {
	if a.Models == nil {
		return model.Response{}, temporal.NewNonRetryableApplicationError("worker has no model resolver", ErrTypeModelConfig, nil)
	}
	// SubagentModels are patterns as the input's "tools" are, but none allows none.
	if in.ModelChosen && (len(a.SubagentModels) == 0 || !todo.Allowed(a.SubagentModels, in.Model)) {
		return model.Response{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"model %q was chosen for this subagent by its parent agent; this worker lets a subagent use only its parent's model, or one its operator allows (worker --subagent-model PATTERN, %s)",
			in.Model, EnvSubagentModels), ErrTypeModelConfig, nil)
	}
	client, name, err := a.Models(in.Model)
	if err != nil {
		return model.Response{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("model %q: %v", in.Model, err), ErrTypeModelConfig, nil)
	}
	label := name
	if strings.HasPrefix(in.Model, "script:") {
		label = "script" // a file's path is no model name, and would be a label per file
	}
	// The reply streams to watching clients as it is written, and the
	// heartbeats keep the call alive (see stream.go); a summary is no
	// reply, and is only kept alive. They start before the transcript is
	// read, which may wait too, on the server's answer.
	stream := a.streamReply(ctx, in)
	defer stream.stop()

	msgs, err := a.callMessages(ctx, in)
	if err != nil {
		return model.Response{}, err
	}

	var tools []model.ToolSpec
	var onText func(string)
	if in.Summarize != nil {
		msgs = in.Summarize.request(msgs)
	} else {
		onText = stream.reply.Add // its watchers get each piece at once
		tools = append(in.TodoTools.specs(), in.Tools...)
		// Listing may start MCP servers, hence after the heartbeats start. A source
		// that cannot list its tools now costs the model those tools for
		// this call, not the call.
		worker, err := a.registry().Specs(ctx, in.WorkerTools)
		if err != nil {
			activity.GetLogger(ctx).Warn("Some tools are not offered to the model", "Error", err)
		}
		tools = append(tools, worker...)
	}

	req := model.Request{
		Model: name, Messages: msgs, Tools: tools, Call: in.Call, Stream: onText,
		Summarize: in.Summarize != nil,
	}
	key, keep := a.answerKey(ctx, req)
	if keep {
		if resp, ok := a.Answers.Get(key); ok {
			// An earlier attempt of this call got this answer and its
			// completion was not recorded: it was paid for once. Its
			// watchers see the text they saw then.
			if onText != nil && resp.Content != "" {
				onText(resp.Content)
			}
			countReusedAnswer(ctx, label)
			activity.GetLogger(ctx).Info("Model answer taken from this worker's copy: an earlier attempt of the call got it, and its completion was not recorded")
			a.keepAnswer(in, resp)
			return resp, nil
		}
	}
	start := time.Now()
	resp, err := client.Complete(ctx, req)
	countModelCall(ctx, label, time.Since(start), resp, err)
	if err != nil {
		if cancelledByServer(ctx) {
			// The run cancelled the call (the user interrupted its
			// turn): the reply so far is the cancellation's answer, which
			// the run keeps in its transcript (workflows' interrupt.go);
			// a summary's is empty.
			return model.Response{}, temporal.NewCanceledError(stream.details())
		}
		return model.Response{}, classify(err, attempt(ctx), running(ctx).info.RetryPolicy)
	}
	if n := answerSize(resp); n > MaxAnswerBytes {
		// The answer is the activity's result, an event of history: one
		// over the server's 2 MiB would fail the call at every attempt.
		return model.Response{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the model's answer is %d bytes, over the %d a model call may return; ask for the work in smaller pieces (a large file in several write_file calls)",
			n, MaxAnswerBytes), ErrTypeModel, nil)
	}
	resp.Model = name
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].ID == "" {
			// Tool messages answer calls by id; a server that sends none
			// still gets unique, replay-stable ids.
			resp.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", in.Call, i+1)
		}
	}
	if keep {
		a.Answers.Put(key, resp)
	}
	a.keepAnswer(in, resp)
	return resp, nil
}

// cancelledByServer says the activity of ctx was cancelled by its run (the
// SDK cancels it so when the server says so), not stopped by its worker's
// shutdown, which the server retries as a failed attempt.
func cancelledByServer(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled) && temporal.IsCanceledError(context.Cause(ctx))
}

// answerKey is the key of the call's answer in the worker's answer cache,
// and whether there is one to use: a worker with a cache, with a request
// that has a digest.
func (a *Activities) answerKey(ctx context.Context, req model.Request) (AnswerKey, bool) {
	if a.Answers == nil {
		return AnswerKey{}, false
	}
	info := activity.GetInfo(ctx)
	key := AnswerKey{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		ActivityID: info.ActivityID, Request: RequestDigest(req)}
	return key, key.Request != ""
}

// keepAnswer gives the transcript cache the answer the workflow appends
// next; its tool calls then read their arguments from there.
func (a *Activities) keepAnswer(in CallModelInput, resp model.Response) {
	if in.New != nil && in.Summarize == nil && a.Transcripts != nil {
		a.Transcripts.Answer(transcript.Run{WorkflowID: in.WorkflowID, RunID: in.RunID}, in.New.Epoch, in.New.From+len(in.New.Messages),
			model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
	}
}

// MaxAnswerBytes bounds a model's answer (its text and its tool calls'
// arguments), which is the model call's result, an event of history.
const MaxAnswerBytes = 1 << 20

// answerSize is what an answer's text and arguments take.
func answerSize(r model.Response) int {
	n := len(r.Content)
	for _, tc := range r.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	return n
}

// callMessages returns the messages a model call sends: the input's own, or
// the spans of the workflow's transcript.
func (a *Activities) callMessages(ctx context.Context, in CallModelInput) ([]model.Message, error) {
	if in.Messages != nil {
		return in.Messages, nil
	}
	if a.Transcripts == nil {
		return nil, temporal.NewNonRetryableApplicationError("worker has no transcript reader", ErrTypeModelConfig, nil)
	}
	run := transcript.Run{Namespace: cmp.Or(running(ctx).info.WorkflowNamespace, a.Namespace), WorkflowID: in.WorkflowID, RunID: in.RunID}
	return a.Transcripts.Messages(ctx, run, in.New, in.Spans)
}

// classify turns a model error into the Temporal error that makes the
// server retry it, or not, as the provider's answer deserves. A request too
// long for the model gets a type of its own, so that the workflow can shorten
// its transcript instead of failing the run. The failure's details are the
// attempt's number (FailedAttempt), which the workflow cannot learn
// otherwise: the server retries the call without telling it.
//
// The model.Error message is the whole account, so it is the application
// error's message as it is. Its Err becomes the cause only when it says
// something more: an HTTP error's text is its status line, which the message
// already gives, and a transport error's text is usually quoted in it.
func classify(err error, attempt int32, policy *temporal.RetryPolicy) error {
	var me *model.Error
	if errors.As(err, &me) {
		errType, nonRetryable := ErrTypeModel, !me.Retryable
		if me.ContextOverflow {
			errType, nonRetryable = ErrTypeContextOverflow, true
		}
		var cause error
		if me.StatusCode == 0 {
			cause = distinctCause(me.Message, me.Err)
		}
		return temporal.NewApplicationErrorWithOptions(me.Message, errType, temporal.ApplicationErrorOptions{
			NonRetryable:   nonRetryable,
			NextRetryDelay: retryDelay(me.RetryAfter, attempt, policy),
			Cause:          cause,
			// The status lets a client say what the provider answers
			// (429) from the pending call's last failure.
			Details: []any{attempt, me.StatusCode},
		})
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeModel, temporal.ApplicationErrorOptions{Details: []any{attempt}})
}
