package chat

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/termtext"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// What the client shows, as plain text with a kind; the terminal view
// styles each kind, the line mode prints the text as it is, both cleaned of
// terminal controls (package termtext): the text is the model's, the tools'
// and the files'. Everything here is pure, so that it is tested without a
// terminal.

type kind int

const (
	kindUser      kind = iota // the user's own message
	kindReply                 // the model's text
	kindTool                  // a tool call
	kindResult                // a tool's result
	kindError                 // a failed tool, a failed turn, a client error
	kindNote                  // a message the loop injected, a command's output
	kindEvent                 // another agent's event or status
	kindAttention             // something waits for the user
	kindDiff                  // a line of a diff, coloured by its first character (diff.go)
	kindCall                  // a line of a tool call printed whole (approval.go): unstyled
)

// entry is one block of output.
type entry struct {
	kind kind
	text string
}

// messageEntries is how a transcript message shows: the system prompt not
// at all, a tool result as its first line, a reminder the loop injected as
// a marker, another injected message as a note.
func messageEntries(m model.Message) []entry {
	switch m.Role {
	case model.RoleSystem:
		return nil
	case model.RoleUser:
		if marker, ok := reminders[m.Name]; ok {
			return []entry{{kindNote, "· " + marker}}
		}
		if m.Name != "" {
			return []entry{{kindNote, fmt.Sprintf("· %s: %s", m.Name, clip(text.FirstLineAfterTrim(m.Content), 100))}}
		}
		// A message of several lines keeps them under its "> "; a long
		// one (a paste) shows its first lines, as the prompt showed it
		// collapsed (paste.go).
		text := m.Content
		if lines := strings.Split(text, "\n"); len(lines) > collapseLines {
			text = strings.Join(lines[:3], "\n") + fmt.Sprintf("\n⋯ %d more lines", len(lines)-3)
		}
		return []entry{{kindUser, "> " + strings.ReplaceAll(text, "\n", "\n  ")}}
	case model.RoleAssistant:
		var out []entry
		if cut, note := api.SplitInterrupted(m.Content); m.Name == api.NameInterrupted && cut != "" {
			// The reply the user stopped, as far as it was written,
			// marked as cut, then the note that says so.
			return []entry{{kindReply, strings.TrimSpace(cut)}, {kindNote, cutNote}, {kindReply, note}}
		}
		if text := strings.TrimSpace(m.Content); text != "" {
			k := kindReply
			if m.Name == api.NameModelError {
				k = kindError
			}
			out = append(out, entry{k, text})
		}
		for _, c := range m.ToolCalls {
			out = append(out, entry{kindTool, "⏺ " + callText(c)})
		}
		return out
	case model.RoleTool:
		line := "  ⎿ " + clip(text.FirstLineAfterTrim(m.Content), 100)
		if n := strings.Count(strings.TrimSpace(m.Content), "\n"); n > 0 {
			line += fmt.Sprintf(" (+%d lines)", n)
		}
		if m.IsError {
			return []entry{{kindError, line}}
		}
		return []entry{{kindResult, line}}
	}
	return []entry{{kindNote, m.Role + ": " + clip(text.FirstLineAfterTrim(m.Content), 120)}}
}

// maxResultLines bounds a tool result printed whole: a listing or a log of
// thousands of lines would push the transcript out of the scrollback.
const maxResultLines = 200

// resultEntries print a tool result whole (Ctrl+O), up to maxResultLines.
// label names the call that m answers (callLabel).
func resultEntries(m *model.Message, label string) []entry {
	if m == nil {
		return []entry{{kindNote, "no tool has answered yet"}}
	}
	lines := strings.Split(strings.TrimRight(m.Content, "\n"), "\n")
	more := ""
	if len(lines) > maxResultLines {
		more = fmt.Sprintf("\n… %d more lines", len(lines)-maxResultLines)
		lines = lines[:maxResultLines]
	}
	k := kindResult
	if m.IsError {
		k = kindError
	}
	return []entry{{kindNote, "the latest tool result (" + cmp.Or(label, m.ToolCallID) + "), whole:"}, {k, strings.Join(lines, "\n") + more}}
}

// callLabel names a tool call as the user knows it: its tool and the file
// or folder it worked on (a "path" argument), not the id the model gave
// it; the id when the call is not known.
func callLabel(c model.ToolCall) string {
	if c.Name == "" {
		return c.ID
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(c.Arguments, &args) == nil && args.Path != "" {
		return c.Name + " " + clip(text.OneLine(args.Path), 80)
	}
	return c.Name
}

// reminders are the messages the loop injects to steer the model (its
// guards, the summary of the older messages), by name, with the marker
// that stands for each: their text is written for the model, wrapped in
// <system_reminder>, and says nothing to the user that the checklist and
// the transcript do not.
var reminders = map[string]string{
	todo.NameReminder:           "the agent was reminded of its checklist",
	todo.NameCompletionReminder: "the agent was reminded of unfinished items",
	todo.NameStaleReminder:      "the agent was asked to update its checklist",
	todo.NameContinuation:       "the agent was asked to go on with its checklist",
	todo.NameBlocked:            "the agent was told to stop and report what is unfinished",
	api.NameContextSummary:      "older messages were summarised",
}

// callText is a tool call on one line: its name and arguments, shortened;
// write_todos by what the list holds.
func callText(c model.ToolCall) string {
	if c.Name == "write_todos" {
		var args struct {
			Todos []todo.Item `json:"todos"`
		}
		if json.Unmarshal(c.Arguments, &args) == nil {
			return fmt.Sprintf("write_todos (%d items, %d done)", len(args.Todos), todo.CountStatus(args.Todos, todo.Completed))
		}
	}
	args := strings.TrimSpace(string(c.Arguments))
	if args == "" || args == "{}" {
		return c.Name
	}
	return c.Name + " " + clip(args, 80)
}

// progressLine is the line above the prompt: the item in progress, done/total
// and what the session is doing (or, with no list, the plan's step and
// progress).
//
// stall, when the session makes no progress for a reason the client can
// name (no worker, no server: see client.NoWorkerError), stands in for
// the status: a "working" that nothing works on would mislead.
func progressLine(st *api.State, closed, stall string) string {
	if st == nil {
		return cmp.Or(stall, "connecting…")
	}
	var parts []string
	switch {
	case len(st.Todos) > 0:
		if cur, ok := todo.Current(st.Todos); ok {
			parts = append(parts, "▶ "+clip(text.OneLine(cur.Content), 60))
		}
		parts = append(parts, fmt.Sprintf("%d/%d", todo.CountStatus(st.Todos, todo.Completed), len(st.Todos)))
	case st.Plan != nil:
		if i := slices.IndexFunc(st.Plan.Steps, func(s todo.Step) bool { return s.Status == todo.StepInProgress }); i >= 0 {
			parts = append(parts, "▶ "+clip(text.OneLine(st.Plan.Steps[i].Description), 60))
		}
		p := todo.ComputeProgress(st.Plan.Steps)
		parts = append(parts, fmt.Sprintf("plan %d/%d", p.Completed, p.Total))
	}
	status := statusText(st.Status, closed)
	if stall != "" && closed == "" {
		status = stall
	}
	parts = append(parts, status)
	return strings.Join(parts, " · ")
}

func statusText(status, closed string) string {
	if closed != "" {
		return "session " + closed
	}
	switch status {
	case api.StatusRunning:
		return "working"
	case api.StatusWaitingUser:
		return "your turn"
	case api.StatusAwaitingApproval:
		return "awaiting your approval"
	case api.StatusPaused:
		return "paused"
	case api.StatusBlocked:
		return "waiting on subagents"
	}
	return status
}

// checklist is what Ctrl+T shows: the whole todo list and the plan.
func checklist(st *api.State) string {
	if st == nil {
		return "(no state yet)"
	}
	s := todo.Checklist(st.Todos)
	if st.Plan != nil {
		s += "\n\n" + todo.PlanChecklist(st.Plan)
	}
	return s
}

// attention are the things that wait for the user or that the user should
// know while they last: a pause, a plan to approve, a model that is being
// retried (with what the provider answers and when the next attempt is,
// from retry) or that ended the turn.
func attention(st *api.State, retry client.Retry) []string {
	if st == nil {
		return nil
	}
	var out []string
	waits := st.Waiting
	if len(waits) == 0 && st.Paused {
		waits = []api.Wait{{AgentID: st.AgentID, Kind: api.WaitPaused, Reason: st.PauseReason}}
	}
	if len(waits) == 0 && st.AwaitingApproval {
		waits = []api.Wait{{AgentID: st.AgentID, Kind: api.WaitPlanApproval}}
	}
	for _, w := range waits {
		who := ""
		if w.AgentID != st.AgentID {
			who = w.AgentID + ": "
		}
		switch w.Kind {
		case api.WaitPaused:
			out = append(out, fmt.Sprintf("⏸ %spaused: %s — /resume [what changed]", who, clip(text.OneLine(w.Reason), 100)))
		case api.WaitPlanApproval:
			title := ""
			if st.Plan != nil && w.AgentID == st.AgentID {
				title = fmt.Sprintf(" %q (%d steps)", clip(text.OneLine(st.Plan.Title), 60), len(st.Plan.Steps))
			}
			out = append(out, fmt.Sprintf("✋ %splan%s awaits approval — /approve, or /reject FEEDBACK (/plan shows it)", who, title))
		}
		// A tool call waiting is shown whole by each view (approval.go).
	}
	if me := st.ModelError; me != nil {
		if me.Retryable {
			what, when := "the model is failing", ", retrying"
			if retry.Status != 0 {
				what = fmt.Sprintf("the model provider answers %d", retry.Status)
			}
			if !retry.Next.IsZero() {
				when = "; retrying at " + retry.Next.Local().Format(time.TimeOnly)
			}
			out = append(out, fmt.Sprintf("↻ %s%s (attempt %d, since %s): %s",
				what, when, me.Attempts, me.Since.Local().Format(time.TimeOnly), clip(text.OneLine(me.Message), 120)))
		} else if st.Status == api.StatusWaitingUser {
			out = append(out, "✗ the last turn failed on the model: "+clip(text.OneLine(me.Message), 120)+" — send a message, or `starter retry` once fixed")
		}
	}
	return out
}

// news are the changes between two states worth a line: another agent's
// plan events and the subagents that started or ended; ended are the
// subagents that finished since prev, by id.
func news(prev, cur *api.State) (out []entry, ended []string) {
	if cur == nil {
		return nil, nil
	}
	lastEvent := -1
	if prev != nil {
		for _, ev := range prev.Events {
			lastEvent = max(lastEvent, ev.EventID)
		}
	}
	for _, ev := range cur.Events {
		if ev.EventID <= lastEvent || ev.AgentID == cur.AgentID {
			continue // the root's own events show as its tool calls
		}
		text := fmt.Sprintf("◆ %s: %s", ev.AgentID, strings.ReplaceAll(ev.Type, "_", " "))
		if ev.StepID != "" {
			text += " " + ev.StepID
		}
		out = append(out, entry{kindEvent, text})
	}
	for _, id := range slices.Sorted(maps.Keys(cur.Subagents)) {
		now := cur.Subagents[id].Status
		before := ""
		if prev != nil {
			before = prev.Subagents[id].Status
		}
		if now == before {
			continue
		}
		finished := now == api.StatusCompleted || now == api.StatusFailed
		if finished {
			ended = append(ended, id)
		}
		switch {
		case before == "":
			out = append(out, entry{kindEvent, fmt.Sprintf("◆ subagent %s: %s", id, now)})
		case finished:
			out = append(out, entry{kindEvent, fmt.Sprintf("◆ subagent %s %s", id, now)})
		}
	}
	return out, ended
}

// maxAnswerLines is how much of a subagent's answer the chat shows.
const maxAnswerLines = 20

// subagentEntries show the final answer of subagent id as it ends (its
// first lines: the parent's reply says what came of it), or why it could
// not be read.
func subagentEntries(id, reply string, err error) []entry {
	switch {
	case err != nil:
		return []entry{{kindError, "◆ " + err.Error()}} // it names the subagent
	case strings.TrimSpace(reply) == "":
		return []entry{{kindEvent, fmt.Sprintf("◆ subagent %s ended without an answer", id)}}
	}
	lines := strings.Split(strings.TrimSpace(reply), "\n")
	if len(lines) > maxAnswerLines {
		lines = append(lines[:maxAnswerLines], fmt.Sprintf("… %d more lines", len(lines)-maxAnswerLines))
	}
	return []entry{{kindEvent, fmt.Sprintf("◆ subagent %s answered:", id)}, {kindReply, strings.Join(lines, "\n")}}
}

// agentTree is /agents: the session's agent and its subagents, each with
// its status and list progress.
func agentTree(id string, st api.State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n", id, st.AgentID, agentLine(st))
	var walk func(subs map[string]api.State, indent string)
	walk = func(subs map[string]api.State, indent string) {
		ids := slices.Sorted(maps.Keys(subs))
		for i, sid := range ids {
			branch, deeper := "├─ ", "│  "
			if i == len(ids)-1 {
				branch, deeper = "└─ ", "   "
			}
			fmt.Fprintf(&b, "%s%s%s: %s\n", indent, branch, sid, agentLine(subs[sid]))
			walk(subs[sid].Subagents, indent+deeper)
		}
	}
	walk(st.Subagents, "")
	if len(st.Subagents) == 0 {
		b.WriteString("(no subagents)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func agentLine(st api.State) string {
	done, total := todo.CountStatus(st.Todos, todo.Completed), len(st.Todos)
	if l := st.Live; l != nil {
		done, total = l.TodosCompleted, l.TodosTotal
	}
	model := ""
	if st.Model != "" {
		model = ", " + st.Model
	}
	return fmt.Sprintf("%s%s, %d model calls, todos %d/%d", st.Status, model, st.ModelCalls, done, total)
}

// streamText is the running reply as it shows below the transcript, from
// its rendered lines: the last of them, at most maxLines, under a "● …"
// when some are left out (or the stream itself was cut, cut > 0).
func streamText(lines []string, cut, maxLines int) string {
	if len(lines) > maxLines || cut > 0 {
		keep := slices.Clone(lines[max(len(lines)-maxLines+1, 0):])
		if len(keep) > 0 && strings.HasPrefix(keep[0], "● ") {
			keep[0] = "  " + strings.TrimPrefix(keep[0], "● ")
		}
		lines = append([]string{"● …"}, keep...)
	}
	return strings.Join(lines, "\n")
}

// toolLine says what a running tool is at: its name and, when it reports
// progress, how far it has come and its latest message.
func toolLine(t client.RunningTool) string {
	s := "running " + t.Name
	switch {
	case t.Total > 0:
		s += fmt.Sprintf(" · %s/%s (%.0f%%)", number(t.Progress), number(t.Total), 100*min(t.Progress/t.Total, 1))
	case t.Progress > 0:
		s += " · " + number(t.Progress)
	}
	if m := text.OneLine(t.Message); m != "" {
		s += " · " + clip(m, 80)
	}
	return s
}

// number shows a progress count: whole numbers as they are, others to one
// decimal.
func number(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprintf("%.1f", f)
}

// fit cuts a line of words to width columns at a word's end, marking the
// cut with "…": the terminal would cut it mid-word, without a mark. A
// first word longer than the line is cut where it must be.
func fit(s string, width int) string {
	r := []rune(s)
	if width <= 0 || len(r) <= width {
		return s
	}
	head := string(r[:width-1])
	if r[width-1] == ' ' {
		head += " " // the head ends with a whole word
	}
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		if word := strings.TrimRight(head[:i], " ·"); word != "" {
			return word + "…"
		}
	}
	return head + "…"
}

// clip cuts s to at most n characters, marking a cut with "…". s is
// cleaned of terminal controls first: the view cleans every line again, but
// half a sequence left by the cut would swallow what follows it on the line.
func clip(s string, n int) string {
	s = termtext.Clean(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}
