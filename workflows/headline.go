package workflows

import (
	"fmt"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"github.com/todoflow/todoflow/todo"
)

// The headline of the run's page: what an operator who opens the Web UI
// needs first, in one line: where the session stands in words, what it
// waits for, and the step it is on.

// statusWords are the statuses as an operator reads them.
var statusWords = map[string]string{
	api.StatusRunning:          "Working",
	api.StatusWaitingUser:      "Waiting for the user's message",
	api.StatusAwaitingApproval: "Waiting for approval",
	api.StatusPaused:           "Paused",
	api.StatusBlocked:          "Waiting for subagents",
	api.StatusCompleted:        "Completed",
	api.StatusFailed:           "Failed",
	api.StatusContinued:        "Continued in a new run",
}

// headlineArgsBytes bounds the arguments the headline shows of a waiting
// call; the wait's own line below has more.
const headlineArgsBytes = 160

// headline is the page's first line, as markdown.
func (a *agent) headline() string {
	status := a.shownStatus()
	words, ok := statusWords[status]
	if !ok {
		words = status
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**", words)
	if status == api.StatusRunning && a.modelError != nil {
		b.WriteString(": the model is failing, retrying")
	}
	if ws := a.waiting(); len(ws) > 0 && status != api.StatusCompleted && status != api.StatusFailed && status != api.StatusContinued {
		fmt.Fprintf(&b, ": %s", a.waitWords(ws[0]))
		if len(ws) > 1 {
			fmt.Fprintf(&b, " (and %d more waits, below)", len(ws)-1)
		}
	}
	if step := a.currentStep(); step != "" {
		fmt.Fprintf(&b, " · step: %s", step)
	}
	return b.String()
}

// waitWords says what a wait is for: the call and its arguments, the plan,
// the agent to resume.
func (a *agent) waitWords(w api.Wait) string {
	own := w.AgentID == a.cfg.AgentID
	switch {
	case own && w.Kind == api.WaitToolApproval && a.approvals.toolWait != nil:
		p := a.approvals.toolWait
		words := fmt.Sprintf("%s %s (call %s)", code(p.Tool), code(todo.ApprovalPreview(p.Arguments, headlineArgsBytes)), p.CallID)
		// A diff that is only a note (no change, not compared) has no
		// lines to count.
		if d := p.Diff; d != nil && d.Unavailable == "" && !strings.HasPrefix(d.Hunks, `\`) {
			words += fmt.Sprintf(", diff: +%d −%d lines", d.Added, d.Removed)
		}
		return words
	case own && w.Kind == api.WaitPlanApproval && a.plans.Current() != nil:
		p := a.plans.Current()
		return fmt.Sprintf("plan %s, %d steps", code(text.OneLine(p.Title)), len(p.Steps))
	case w.Kind == api.WaitPaused:
		return fmt.Sprintf("agent %s is paused (%s); resume it", code(w.AgentID), text.OneLine(w.Reason))
	case own:
		return fmt.Sprintf("%s: %s", w.Kind, text.OneLine(w.Reason))
	}
	// Another agent's wait: its reason names the call or the plan.
	return fmt.Sprintf("agent %s, %s: %s", code(w.AgentID), w.Kind, text.OneLine(w.Reason))
}

// currentStep is the item in progress, else the plan's step in progress.
func (a *agent) currentStep() string {
	if cur, ok := todo.Current(a.todo.List()); ok {
		return text.Shorten(cur.Content, api.SummaryMax)
	}
	if p := a.plans.Current(); p != nil {
		for _, s := range p.Steps {
			if s.Status == todo.StepInProgress {
				return text.Shorten(s.Description, api.SummaryMax)
			}
		}
	}
	return ""
}

// code is s as markdown inline code, fenced with more backticks than s
// holds in a row, so that no argument can end it early.
func code(s string) string {
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
