package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// consoleLine is the event as one readable line, e.g.
// agent main: step_completed step_2 "Write the fix" (event 7); plan "Fix the bug" 2/3 (66.7%)
func consoleLine(rec Record, ev reportEvent) string {
	var plan reportPlan
	if len(rec.Plan) > 0 {
		_ = json.Unmarshal(rec.Plan, &plan) // the plan only adds detail
	}
	var b strings.Builder
	agent := rec.AgentID
	if agent == "" {
		agent = "?"
	}
	fmt.Fprintf(&b, "agent %s: %s", text.SpaceControls(agent), text.SpaceControls(ev.Type))
	if ev.StepID != "" {
		fmt.Fprintf(&b, " %s", text.SpaceControls(ev.StepID))
		for _, s := range plan.Steps {
			if s.StepID == ev.StepID && s.Description != "" {
				fmt.Fprintf(&b, " %q", excerpt(s.Description, 120))
				break
			}
		}
	}
	fmt.Fprintf(&b, " (event %s)", text.SpaceControls(ev.eventID()))
	if plan.Title != "" || plan.Progress != nil {
		b.WriteString("; plan")
		if plan.Title != "" {
			fmt.Fprintf(&b, " %q", excerpt(plan.Title, 120))
		}
		if p := plan.Progress; p != nil {
			pct := 0.0
			if p.Percent != nil {
				pct = *p.Percent
			} else if p.Total > 0 {
				pct = 100 * float64(p.Completed) / float64(p.Total)
			}
			fmt.Fprintf(&b, " %d/%d (%s%%)", p.Completed, p.Total, formatPercent(pct))
		}
	}
	return b.String()
}

// formatPercent writes a percentage with one decimal, rounded half away from
// zero, and a trailing ".0" dropped, as the plan checklist does.
func formatPercent(p float64) string {
	s := strconv.FormatFloat(math.Round(p*10)/10, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// excerpt shortens s to about n bytes on one line, cutting at a rune
// boundary: text.Shorten, but with text.CutIndex's cut, which counts a byte
// that is not valid UTF-8 as a rune of its own.
func excerpt(s string, n int) string {
	s = text.OneLine(s)
	if len(s) <= n {
		return s
	}
	return s[:text.CutIndex(s, n)] + "…"
}
