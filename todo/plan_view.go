package todo

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/todoflow/todoflow/internal/text"
)

// stepMarks are the plan checklist's status markers, part of the public contract.
var stepMarks = map[string]string{
	StepCompleted:  "[x]",
	StepInProgress: "[>]",
	StepPending:    "[ ]",
	StepFailed:     "[!]",
	StepSkipped:    "[-]",
	StepBlocked:    "[~]",
}

// PlanChecklist is the user's `plan` command text (the plan query, `starter
// plan`), in jaato's layout:
//
//	Current Plan: Refactor auth module
//	Status: active
//
//	Steps:
//	  [x] step_1: Review current auth implementation
//	  [~] step_2: Review the results (waiting on implementer:step_1)
//
//	Progress: 1/2 (50%)
//
// The header reads "Current Plan" for a finished plan too (the most recent
// plan is shown the same way). Steps are listed in sequence order, one line
// each; a blocked step names what it waits on. Results and errors are not
// shown (getPlanStatus and the state query have them). The last line is
// completed/total and the percentage with one decimal, a trailing ".0"
// dropped. For no plan: "No plan yet."
func PlanChecklist(p *Plan) string {
	if p == nil {
		return "No plan yet."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Current Plan: %s\n", text.OneLine(p.Title))
	fmt.Fprintf(&b, "Status: %s\n", p.Status)
	b.WriteString("\nSteps:\n")
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "  %s %s: %s", cmp.Or(stepMarks[s.Status], "[?]"), s.StepID, text.OneLine(s.Description))
		if s.Status == StepBlocked && len(s.BlockedBy) > 0 {
			fmt.Fprintf(&b, " (waiting on %s)", refKeys(s.BlockedBy))
		}
		b.WriteByte('\n')
	}
	prog := ComputeProgress(p.Steps)
	fmt.Fprintf(&b, "\nProgress: %d/%d (%s%%)", prog.Completed, prog.Total, FormatPercent(prog.Percent))
	return b.String()
}

// maxNotificationValue bounds a result, error or output quoted in a
// notification; getTaskEvents has the full event.
const maxNotificationValue = 1000

// NotificationText renders another agent's event for the model (the content
// of a `task_event` message): who, what, which plan and step, and the result,
// error or output the event carries.
func NotificationText(ev Event) string {
	d := eventData(ev)
	var b strings.Builder
	fmt.Fprintf(&b, "Task event #%d from agent %s: %s", ev.EventID, ev.AgentID, ev.Type)
	where := []string{}
	for _, f := range []struct{ what, id, name string }{{"plan", ev.PlanID, "title"}, {"step", ev.StepID, "description"}} {
		if f.id == "" {
			continue
		}
		w := f.what + " " + f.id
		if t := dataString(d, f.name); t != "" {
			w += fmt.Sprintf(" (%q)", text.OneLine(t))
		}
		where = append(where, w)
	}
	if len(where) > 0 {
		b.WriteString(" — " + strings.Join(where, ", "))
	}
	b.WriteString(".")
	line := func(label, value string) {
		if value = strings.TrimSpace(value); value != "" {
			fmt.Fprintf(&b, "\n%s: %s", label, clipRunes(value, maxNotificationValue, "… (cut; getTaskEvents shows it all)"))
		}
	}
	line("Summary", dataString(d, "summary"))
	line("Result", dataString(d, "result"))
	line("Error", dataString(d, "error"))
	if raw, ok := d["output"]; ok && string(raw) != "null" {
		line("Output", string(raw))
	}
	if raw, ok := d["blocked_by"]; ok {
		line("Waiting on", string(raw))
	}
	if raw, ok := d["received"]; ok && ev.Type == EventStepUnblocked {
		// The keys under which the step's received_outputs hold the
		// outputs of its dependencies (getBlockedSteps, getPlanStatus).
		line("Received outputs", string(raw))
	}
	if ev.Type == EventPlanCreated {
		if raw, ok := d["steps"]; ok {
			line("Steps", string(raw))
		}
	}
	return b.String()
}

// clipRunes shortens s to n characters, then adds more.
func clipRunes(s string, n int, more string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + more
}
