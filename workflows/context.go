package workflows

import (
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// A context that always fits (docs/architecture.md, "A full context"): a
// model call receives a view of the stored transcript, the head, a
// context_summary for the older messages, and the recent ones.
const (
	// toolTokens is what the tool definitions of a call are counted as.
	toolTokens = 4_000
	// bytesPerToken estimates tokens from bytes. Three is cautious: English
	// prose runs near four bytes a token, code and JSON nearer three.
	bytesPerToken = 3
	// keepShare is the part of the budget the recent messages may keep after
	// a compaction; the rest is room for the turns to come.
	keepShare = 2
	// summaryWords bounds a summary, so that it is always far smaller than
	// what it replaces.
	summaryWords = 400
	// summaryTokens is room for a summary so far and the answer in a
	// summarising call.
	summaryTokens = 2 * summaryWords * 2
	// minPartTokens is the least a summarising call carries of the
	// conversation, however small the budget.
	minPartTokens = 2_000
	// maxSummaryBytes is the most of a summary kept: a model asked for
	// summaryWords words may answer with a megabyte, and the summary is in
	// every carry.
	maxSummaryBytes = 64 << 10
)

// compaction is where the model's view of the transcript starts.
type compaction struct {
	// From: messages [Head, From) are left out of model calls; 0 before
	// the first compaction.
	From int `json:"from,omitempty"`
	// Summary is the index of the context_summary message that stands for
	// them; 0 when there is none (index 0 is always the system prompt).
	Summary int `json:"summary,omitempty"`
	// Count is how many compactions the run made.
	Count int `json:"count,omitempty"`
}

// errNothingToCompact: every message in the view is recent enough to stay.
var errNothingToCompact = errors.New("nothing to compact: every message after the first is recent")

// tokens estimates what a message costs in a request.
func tokens(m model.Message) int {
	n := len(m.Content) + len(m.Name) + 16
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + 16
	}
	return (n + bytesPerToken - 1) / bytesPerToken
}

func (a *agent) spanTokens(spans []transcript.Span) int {
	n := toolTokens
	for _, sp := range spans {
		for i := sp.Start; i < sp.End; i++ {
			n += tokens(a.window.msgs[i])
		}
	}
	return n
}

// viewStart is where the recent part of the model's view begins.
func (a *agent) viewStart() int { return max(a.window.comp.From, todo.Head) }

// view is the spans of the model's view without the max_messages window:
// the head, the summary, then the messages from viewStart on (the summary
// itself, which sits among them where it was written, only once).
func (a *agent) view(start int) []transcript.Span {
	head := transcript.Span{Start: 0, End: min(todo.Head, len(a.window.msgs))}
	s := a.window.comp.Summary
	if s == 0 || s < start {
		if start <= todo.Head {
			return []transcript.Span{{Start: 0, End: len(a.window.msgs)}}
		}
		return []transcript.Span{head, {Start: start, End: len(a.window.msgs)}}
	}
	spans := []transcript.Span{head, {Start: s, End: s + 1}}
	if start < s {
		spans = append(spans, transcript.Span{Start: start, End: s})
	}
	if s+1 < len(a.window.msgs) {
		spans = append(spans, transcript.Span{Start: s + 1, End: len(a.window.msgs)})
	}
	return spans
}

// fit keeps a model call within context.max_tokens: when the view is over
// budget, it compacts first. A view that still does not fit (one message
// larger than the budget) is sent as it is; the provider's answer decides.
func (a *agent) fit(ctx workflow.Context, spans []transcript.Span) ([]transcript.Span, error) {
	if a.spanTokens(spans) <= a.budget() {
		return spans, nil
	}
	if _, err := a.compact(ctx); err != nil && !errors.Is(err, errNothingToCompact) {
		return nil, err
	}
	return a.requestSpans(), nil
}

// budget is the most a model request may carry, in estimated tokens: the
// input's context.max_tokens, or less once the provider said where its
// limit is.
func (a *agent) budget() int {
	if a.window.contextLimit > 0 {
		return min(a.cfg.MaxTokens, a.window.contextLimit)
	}
	return a.cfg.MaxTokens
}

// compact moves the view's start forward so that the recent messages keep
// at most budget()/keepShare tokens, and writes a context_summary for what
// left the view; it says what it did, in a sentence. The start only moves
// forward, and a summary longer than what it replaces is not used.
func (a *agent) compact(ctx workflow.Context) (string, error) {
	return a.compactKeeping(ctx, a.budget(), 0, untilWindow)
}

// compactKeeping is compact that also keeps at most maxRecent recent
// messages (0: no such bound), as the carry of a continue-as-new does, and
// whose summary is retried as p allows.
func (a *agent) compactKeeping(ctx workflow.Context, budget, maxRecent int, p patience) (string, error) {
	from := a.viewStart()
	keep := budget / keepShare
	cut, kept := len(a.window.msgs), 0
	for cut > from {
		t := tokens(a.window.msgs[cut-1])
		if kept+t > keep || maxRecent > 0 && len(a.window.msgs)-cut >= maxRecent {
			break
		}
		kept += t
		cut--
	}
	// Never start the view on a tool result: its call must come with it.
	for cut < len(a.window.msgs) && a.window.msgs[cut].Role == model.RoleTool {
		cut++
	}
	if cut >= len(a.window.msgs) {
		// Even the last message is over the share: keep the latest model
		// answer with its tool results, which the next call needs.
		cut = a.lastAnswerStart()
	}
	if cut <= from {
		return "", errNothingToCompact
	}
	// The previous summary leaves the view with the messages it preceded,
	// so the new one covers it too; one still in the kept tail stays there
	// as an ordinary message.
	old := a.window.comp.Summary
	if old >= cut {
		old = 0
	}
	replaced, n := 0, 0
	var spans []transcript.Span
	if old != 0 {
		replaced += tokens(a.window.msgs[old])
		spans = append(spans, transcript.Span{Start: old, End: old + 1})
	}
	for i := from; i < cut; i++ {
		if i != old {
			replaced += tokens(a.window.msgs[i])
			n++
		}
	}
	if from < old {
		spans = append(spans, transcript.Span{Start: from, End: old}, transcript.Span{Start: old + 1, End: cut})
	} else {
		spans = append(spans, transcript.Span{Start: from, End: cut})
	}

	summary := ""
	if a.cfg.Summarize {
		text, err := a.summarize(ctx, spans, budget, p)
		if err != nil {
			return "", err
		}
		summary = text
	}
	a.window.comp.From, a.window.comp.Count = cut, a.window.comp.Count+1
	a.window.comp.Summary = 0
	msg := model.Message{Role: model.RoleUser, Name: api.NameContextSummary,
		Content: "Summary of the earlier conversation, which no longer fits the context:\n\n" + text.Cut(summary, maxSummaryBytes)}
	if summary != "" && tokens(msg) < replaced {
		a.append(msg)
		a.window.comp.Summary = len(a.window.msgs) - 1
		return fmt.Sprintf("Compacted %d messages (about %d tokens) into a summary of about %d tokens.", n, replaced, tokens(msg)), nil
	}
	return fmt.Sprintf("Dropped %d older messages (about %d tokens) from the model's view; the stored transcript keeps them.", n, replaced), nil
}

// lastAnswerStart is the index of the latest assistant message after the
// head (or the head's end when there is none).
func (a *agent) lastAnswerStart() int {
	for i := len(a.window.msgs) - 1; i >= todo.Head; i-- {
		if a.window.msgs[i].Role == model.RoleAssistant {
			return i
		}
	}
	return todo.Head
}

// summarize writes the summary of the given spans with model calls that
// offer no tools; the activity sends the messages as one text, so the
// provider's rules on tool messages do not apply. A stretch larger than one
// call may carry is summarised in parts, each call bringing the summary so
// far up to date with the next part.
func (a *agent) summarize(ctx workflow.Context, spans []transcript.Span, budget int, p patience) (string, error) {
	instructions := fmt.Sprintf(
		"Summarise the conversation below for the assistant that continues it, in at most %d words: "+
			"the user's requests, decisions made, facts learned (file names, values, errors), work done and work left. "+
			"Do not restate the todo list; it is kept separately.", summaryWords)
	limit := max(budget-toolTokens-summaryTokens, minPartTokens)
	parts := splitSpans(a.window.msgs, spans, limit)
	// Runs that compacted before summaries came in parts did it in one
	// call, whatever its size; the version is asked only where the parts
	// would differ.
	if len(parts) == 1 && a.spanTokens(spans)-toolTokens <= limit {
		in := a.modelInput(ctx, spans, true)
		in.Summarize = &activities.Summarize{Instructions: instructions}
		resp, err := a.execModel(ctx, in, a.callSummary()+": summary of the older messages", p)
		if err != nil {
			return "", err
		}
		return resp.Content, nil
	}
	summary := ""
	for i, part := range parts {
		in := a.modelInput(ctx, part, true)
		in.Summarize = &activities.Summarize{Instructions: instructions, Previous: summary, MaxBytes: limit * bytesPerToken}
		resp, err := a.execModel(ctx, in, fmt.Sprintf("%s: summary of the older messages, part %d of %d", a.callSummary(), i+1, len(parts)), p)
		if err != nil {
			return "", err
		}
		summary = resp.Content
	}
	return summary, nil
}

// splitSpans splits the messages of spans into parts of at most limit
// estimated tokens each, in order, without splitting a message: one larger
// than limit is a part of its own (the activity cuts it, see
// activities.Summarize.MaxBytes).
func splitSpans(msgs []model.Message, spans []transcript.Span, limit int) [][]transcript.Span {
	var parts [][]transcript.Span
	var cur []transcript.Span
	used := 0
	add := func(i int) {
		if n := len(cur); n > 0 && cur[n-1].End == i {
			cur[n-1].End++
			return
		}
		cur = append(cur, transcript.Span{Start: i, End: i + 1})
	}
	for _, sp := range spans {
		for i := sp.Start; i < sp.End; i++ {
			t := tokens(msgs[i])
			if used > 0 && used+t > limit {
				parts, cur, used = append(parts, cur), nil, 0
			}
			add(i)
			used += t
		}
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	return parts
}

func (a *agent) validateCompact() error {
	switch {
	case a.window.compactAsked:
		return errors.New("a compaction is already waiting")
	case a.approvals.toolWait != nil:
		return fmt.Errorf("the run is waiting for the approval of call %s (%s); ask again once it goes on", a.approvals.toolWait.CallID, a.approvals.toolWait.Tool)
	case a.plans.AwaitingApproval || a.status == api.StatusBlocked:
		// The loop compacts between model calls; these waits may last
		// days, and the caller would wait with them.
		return fmt.Errorf("the run is %s; ask again once it goes on", map[bool]string{true: "waiting for a plan approval", false: "waiting for its subagents"}[a.plans.AwaitingApproval])
	}
	return nil
}

// onCompact asks the loop to compact: the loop owns the transcript and the
// model calls, so the handler only waits for its answer.
func (a *agent) onCompact(ctx workflow.Context) (api.CompactResult, error) {
	a.window.compactAsked = true
	if err := workflow.Await(ctx, func() bool { return !a.window.compactAsked }); err != nil {
		return api.CompactResult{}, err
	}
	return a.window.compactAnswer, nil
}

// compactOnRequest runs a compaction that compact_context asked for.
func (a *agent) compactOnRequest(ctx workflow.Context) error {
	if !a.window.compactAsked {
		return nil
	}
	text, err := a.compact(ctx)
	var tf *turnFailure
	switch {
	case errors.Is(err, errNothingToCompact):
		a.window.compactAnswer = api.CompactResult{Message: "Nothing to compact: " + fmt.Sprint(len(a.window.msgs)-a.viewStart()) + " recent messages fit in half the budget."}
	case errors.As(err, &tf):
		a.window.compactAnswer = api.CompactResult{Message: tf.reply}
	case err != nil && (temporal.IsCanceledError(err) || ctx.Err() != nil):
		return err // the run itself is being cancelled
	case err != nil:
		// The session goes on as it was: the caller learns why nothing
		// was compacted (a summarising call that overflowed, say).
		a.window.compactAnswer = api.CompactResult{Message: "The compaction did not happen: " + api.RootMessage(err)}
	default:
		a.window.compactAnswer = api.CompactResult{Compacted: true, Message: text}
	}
	a.window.compactAsked = false
	return nil
}
