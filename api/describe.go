package api

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/internal/text"
)

// FrameEnd ends the markdown of each frame the Web UI shows (the static
// details a client starts a run with, the current details): a paragraph of
// one no-break space, which the UI's renderers keep (an entity they show
// as written). The UI sizes a frame to its
// body's height without the body's margins and the margins its first and
// last blocks pass on, which cuts about 30 px, the last line, off the
// bottom; the empty paragraph takes the cut (TestWebUIShowsTheRun checks
// that no line is cut).
const FrameEnd = "\n\n\u00a0"

// Describe is what the Web UI and `temporal workflow describe` show of a run from its
// start on, before it has done anything: the summary (one line: the task's first line,
// shortened) and the details (markdown: the model, the tools, the limits and the todo
// settings the run goes by, defaults applied). Starters set them as the run's static
// summary and details (client.StartWorkflowOptions); the run's changing state is its
// current details (workflows/publish.go).
//
// Nothing secret goes in: an input names keys, never holds them, and of the reporters
// only the kinds are shown (a webhook's address may carry a token). They are payloads
// like any other: with TODOFLOW_PAYLOAD_KEY set they are encrypted, and the Web UI shows
// them only through the codec server.
//
// Describe runs in starters, not in workflow code.
func Describe(in AgentInput) (summary, details string) {
	summary = "session, waiting for its first message"
	if line := text.FirstLine(in.Prompt); line != "" {
		summary = text.Shorten(line, SummaryMax)
	}
	c, err := in.Settings()
	if err != nil {
		// The run fails at its start with the same message.
		return summary, "**Input refused:** " + err.Error()
	}
	var b strings.Builder
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "- **%s:** %s\n", name, fmt.Sprintf(format, args...))
	}
	model := "the worker's default (its `TODOFLOW_MODEL`)"
	if in.Model != "" {
		model = "`" + in.Model + "`"
	}
	row("Model", "%s", model)
	tools := "all of the worker's"
	if len(in.Tools) > 0 {
		tools = "`" + strings.Join(in.Tools, "`, `") + "`"
	} else if in.Tools != nil {
		tools = "none"
	}
	row("Tools", "%s", tools)
	if len(c.Approval) > 0 {
		var rules []string
		for _, k := range slices.Sorted(maps.Keys(c.Approval)) {
			rules = append(rules, fmt.Sprintf("`%s` %s", k, c.Approval[k]))
		}
		row("Tool approval", "%s", strings.Join(rules, ", "))
	}
	window := "whole transcript"
	if in.Context.MaxMessages > 0 {
		window = fmt.Sprintf("last %d messages", in.Context.MaxMessages)
	}
	compaction := "then summarised"
	if !c.Summarize {
		compaction = "then dropped"
	}
	// Short rows: the Web UI shows the details in a frame of a fixed height.
	row("Limits", "%d model calls a message; idle end %s; model retries %s; subagents %s",
		c.MaxTurns, span(c.IdleTimeout), span(c.ModelRetryWindow), span(c.SubagentTimeout))
	row("Context", "%s, %d tokens, %s", window, c.MaxTokens, compaction)
	ts := c.Todo
	if !ts.Enabled {
		row("Todos", "off")
	} else {
		continuation := "off"
		if ts.Continuation {
			continuation = fmt.Sprintf("on (max %d)", ts.ContinuationMax)
		}
		row("Todos", "%s, continuation %s, plan approval %s", ts.InProgressPolicy, continuation, ts.PlanApproval)
	}
	if len(in.Reporters) > 0 {
		kinds := make([]string, len(in.Reporters))
		for i, r := range in.Reporters {
			kinds[i] = r.Type
		}
		row("Reporters", "%s", strings.Join(kinds, ", "))
	}
	if in.Workspace != "" {
		row("Workspace", "`%s`", in.Workspace)
	}
	if in.SystemPrompt != "" || ts.SystemPrompt != "" {
		row("System prompt", "the input's own")
	}
	return summary, strings.TrimRight(b.String(), "\n")
}

// SummaryMax bounds the summary, in bytes: the Web UI shows it on one line.
const SummaryMax = 100

// MemoSummary is the memo field that holds a session's summary (Describe's),
// which its starter sets (and a parent agent, for its subagents, their
// static summary): the SDK carries the memo to every run the session
// continues in, and offers no static summary for them (continue-as-new has
// no user metadata in go.temporal.io/sdk v1.50), so the Web UI's Memo tab
// of a continued run still says what the session is about.
const MemoSummary = "summary"

// span writes a duration without its zero tails: 1h, 2m, 1h30m, 1m30s.
func span(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
