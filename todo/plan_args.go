package todo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// planArgs reads a plan tool's arguments loosely, so that a wrong type or a
// missing field becomes an error the model can act on, never a panic. A
// reader keeps the first error in err and reads nothing after it, so a tool
// reads its arguments in order and checks err once: the refusal names the
// first field that was wrong.
type planArgs struct {
	tool string
	m    map[string]json.RawMessage
	err  error
}

// parsePlanArgs decodes a call's arguments. Empty or null arguments read as
// {} (tools whose fields are all optional need none); anything else must be
// a JSON object.
func parsePlanArgs(tool string, raw json.RawMessage) (planArgs, error) {
	a := planArgs{tool: tool, m: map[string]json.RawMessage{}}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return a, nil
	}
	if t[0] != '{' || json.Unmarshal(t, &a.m) != nil {
		return a, fmt.Errorf("the arguments of %s must be a JSON object", tool)
	}
	if a.m == nil {
		a.m = map[string]json.RawMessage{}
	}
	return a, nil
}

// present reports whether the field was sent with a non-null value.
func (a *planArgs) present(name string) bool {
	raw, ok := a.m[name]
	return ok && string(bytes.TrimSpace(raw)) != "null"
}

// ready reports whether an optional field is to be read: no read failed
// before, and it was sent.
func (a *planArgs) ready(name string) bool { return a.err == nil && a.present(name) }

// need fails with "missing" when a field that must be sent was not.
func (a *planArgs) need(name, hint string) {
	if a.err == nil && !a.present(name) {
		a.err = fmt.Errorf("%q is missing: %s", name, hint)
	}
}

// str reads an optional string field ("" when absent).
func (a *planArgs) str(name string) string {
	var s string
	if !a.ready(name) {
		return ""
	}
	if json.Unmarshal(a.m[name], &s) != nil {
		a.err = fmt.Errorf("%q must be a string", name)
	} else if len(s) > MaxPlanTextBytes {
		a.err = tooLong(name, len(s))
	}
	return s
}

// required reads a string field that must be present and not blank.
func (a *planArgs) required(name, hint string) string {
	a.need(name, hint)
	s := a.str(name)
	if a.err == nil && strings.TrimSpace(s) == "" {
		a.err = fmt.Errorf("%q is empty: %s", name, hint)
	}
	return s
}

// strList reads an optional array of strings (nil when absent).
func (a *planArgs) strList(name string) []string {
	var list []string
	if !a.ready(name) {
		return nil
	}
	switch {
	case json.Unmarshal(a.m[name], &list) != nil:
		a.err = fmt.Errorf("%q must be an array of strings", name)
	case len(list) > MaxPlanSteps:
		a.err = fmt.Errorf("%q has %d entries: at most %d", name, len(list), MaxPlanSteps)
	}
	for i, s := range list {
		if a.err == nil && len(s) > MaxPlanTextBytes {
			a.err = tooLong(fmt.Sprintf("%s[%d]", name, i), len(s))
		}
	}
	return list
}

// integer reads an optional whole number (def when absent).
func (a *planArgs) integer(name string, def int) int {
	var f float64
	if !a.ready(name) {
		return def
	}
	if json.Unmarshal(a.m[name], &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		a.err = fmt.Errorf("%q must be a whole number", name)
	}
	return int(f)
}

// object reads a JSON object that must be present, compacted.
func (a *planArgs) object(name string) json.RawMessage {
	var buf bytes.Buffer
	a.need(name, "give the step's structured result as a JSON object")
	if a.err != nil {
		return nil
	}
	raw := bytes.TrimSpace(a.m[name])
	var probe map[string]json.RawMessage
	switch {
	case len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &probe) != nil || json.Compact(&buf, raw) != nil:
		a.err = fmt.Errorf("%q must be a JSON object", name)
	case buf.Len() > MaxStepOutputBytes:
		a.err = fmt.Errorf("%q is %d bytes of JSON: at most %d; hand on what the waiting agents need, and put the rest in a file", name, buf.Len(), MaxStepOutputBytes)
	}
	return json.RawMessage(buf.Bytes())
}

// refs reads a list of {agent_id, step_id} dependencies that must be
// present (nil after an error).
func (a *planArgs) refs(name string) []Ref {
	var raws []json.RawMessage
	a.need(name, `give the steps of other agents to wait for, e.g. [{"agent_id": "implementer", "step_id": "step_1"}]`)
	switch {
	case a.err != nil:
	case json.Unmarshal(a.m[name], &raws) != nil:
		a.err = fmt.Errorf("%q must be an array of {\"agent_id\", \"step_id\"} objects", name)
	case len(raws) == 0:
		a.err = fmt.Errorf("%q is empty: name at least one {\"agent_id\", \"step_id\"} to wait for", name)
	case len(raws) > MaxStepDeps:
		a.err = fmt.Errorf("%q names %d steps: a step may wait on at most %d", name, len(raws), MaxStepDeps)
	}
	if a.err != nil {
		return nil
	}
	var out []Ref
	for i, raw := range raws {
		var r struct {
			AgentID *string `json:"agent_id"`
			StepID  *string `json:"step_id"`
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &r) != nil {
			a.err = fmt.Errorf("%s[%d] must be an object with string fields agent_id and step_id", name, i)
			return nil
		}
		if r.AgentID == nil || strings.TrimSpace(*r.AgentID) == "" || r.StepID == nil || strings.TrimSpace(*r.StepID) == "" {
			a.err = fmt.Errorf("%s[%d] needs both agent_id and step_id, e.g. {\"agent_id\": \"implementer\", \"step_id\": \"step_1\"}", name, i)
			return nil
		}
		out = appendNew(out, Ref{AgentID: strings.TrimSpace(*r.AgentID), StepID: strings.TrimSpace(*r.StepID)})
	}
	return out
}

// steps reads createPlan's steps: strings, or objects with a description
// (a shape models often send), none of them blank.
func (a *planArgs) steps() []string {
	const hint = `give the steps in order as an array of short sentences, e.g. ["Reproduce the bug", "Fix it"]`
	var raws []json.RawMessage
	a.need("steps", hint)
	switch {
	case a.err != nil:
	case json.Unmarshal(a.m["steps"], &raws) != nil:
		a.err = fmt.Errorf("%q must be an array of strings: %s", "steps", hint)
	case len(raws) == 0:
		a.err = fmt.Errorf("%q is empty: %s", "steps", hint)
	case len(raws) > MaxPlanSteps:
		a.err = fmt.Errorf("%q has %d steps: a plan has at most %d; group them into larger steps, or plan in stages", "steps", len(raws), MaxPlanSteps)
	}
	if a.err != nil {
		return nil
	}
	out := make([]string, 0, len(raws))
	for i, raw := range raws {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var o struct {
				Description *string `json:"description"`
			}
			if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &o) != nil || o.Description == nil {
				a.err = fmt.Errorf("steps[%d] must be a string: %s", i, hint)
				return nil
			}
			s = *o.Description
		}
		if strings.TrimSpace(s) == "" {
			a.err = fmt.Errorf("steps[%d] is blank: every step needs a description", i)
			return nil
		}
		if len(s) > MaxPlanTextBytes {
			a.err = tooLong(fmt.Sprintf("steps[%d]", i), len(s))
			return nil
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// planError is a refused plan tool call.
func planError(format string, args ...any) Result {
	return Result{IsError: true, Content: "Refused: " + fmt.Sprintf(format, args...)}
}

// refusal is planError for the checks that answer nil when a call passes.
func refusal(format string, args ...any) *Result {
	r := planError(format, args...)
	return &r
}

// argError is the Result for malformed arguments, with the table's example
// of a valid call.
func argError(tool string, err error) Result {
	t, _ := lookup(tool)
	return Result{IsError: true, Content: fmt.Sprintf("Refused: %v. Nothing was changed. Example of a valid %s call: %s", err, tool, cmp.Or(t.Example, `{}`))}
}

// planJSON renders a tool result as compact JSON without HTML escaping.
func planJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf(`{"error": %q}`, err.Error())
	}
	return strings.TrimRight(buf.String(), "\n")
}

// planOK is a successful tool result rendered as JSON.
func planOK(v any) Result { return Result{Content: planJSON(v)} }

// failurePhrases are the wordings that, in a `completed` report, say the step
// did not in fact succeed: such a report is refused (docs/tools.md).
var failurePhrases = []string{"could not", "couldn't", "cannot", "can't", "unable to", "failed to", "not able to"}

// FailurePhrase returns the first failure phrase found in s (case
// insensitive, whole words, any run of spaces between words, ’ read as '),
// or "" when there is none.
func FailurePhrase(s string) string {
	t := strings.ToLower(text.OneLine(s))
	t = strings.ReplaceAll(t, "\u2019", "'")
	for _, p := range failurePhrases {
		for from := 0; ; {
			i := strings.Index(t[from:], p)
			if i < 0 {
				break
			}
			i += from
			end := i + len(p)
			if (i == 0 || !wordByte(t[i-1])) && (end == len(t) || !wordByte(t[end])) {
				return p
			}
			from = i + 1
		}
	}
	return ""
}

// wordByte reports whether b belongs to a word (letters, digits, '_', and
// any byte of a multi-byte character).
func wordByte(b byte) bool {
	return b == '_' || b >= 0x80 || text.IsAlnum(rune(b))
}
