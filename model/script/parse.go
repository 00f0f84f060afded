package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/model"
)

// MaxDelay is the longest delay_ms a response may ask for. A model call's
// attempt is cut after 10 minutes (AgentWorkflow's start-to-close timeout), so
// a longer delay could never be answered; the bound also keeps the conversion
// to a time.Duration from overflowing.
const MaxDelay = 10 * time.Minute

// Step is one scripted model answer.
type Step struct {
	Response model.Response
	// Delay is how long the call takes before it answers (delay_ms).
	Delay time.Duration
}

// DefaultSummary answers the summarising calls of a scenario that has no
// "summary": a scenario written before it compacted, or without a thought
// for compaction, still runs, and the transcript says plainly that its
// summary is a stand-in.
const DefaultSummary = "This is a scripted summary of the earlier conversation: the scenario gives no summary text of its own."

// Script is how one agent's model calls are answered.
type Script struct {
	// Steps answer the agent's turns' calls, in call order.
	Steps []Step
	// Summary answers every summarising call: the scenario's "summary", or
	// DefaultSummary when it has none.
	Summary string
	// Then answers the root agent's calls past Steps (the scenario's
	// "then"); nil for an empty final text.
	Then *Step
}

// At returns the answer to call number call (1-based). Past the end of the
// script it is Then, else an empty final text, which ends the agent's turn;
// for a call number below 1 always the empty text.
func (s Script) At(call int) Step {
	switch {
	case call >= 1 && call <= len(s.Steps):
		return s.Steps[call-1]
	case call > len(s.Steps) && s.Then != nil:
		return s.then(call)
	}
	return Step{Response: model.Response{ToolCalls: []model.ToolCall{}}}
}

// then is Then as the answer to call: a tool call the file gives no id
// takes the one derived from this call's number, as in Steps, so that two
// calls answered by Then never share an id.
func (s Script) then(call int) Step {
	step := *s.Then
	step.Response.ToolCalls = slices.Clone(step.Response.ToolCalls)
	for i, tc := range step.Response.ToolCalls {
		if tc.ID == thenID(i) {
			step.Response.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", call, i)
		}
	}
	return step
}

// thenID marks a tool call of "then" that the file gave no id: parsed
// as call 0, which no numbered call is.
func thenID(i int) string { return fmt.Sprintf("call_0_%d", i) }

// SummaryResponse returns the answer to a summarising call: Summary as a
// final text. It has no delay: delay_ms belongs to a numbered response, and
// a summary is none.
func (s Script) SummaryResponse() model.Response {
	return model.Response{Content: s.Summary, ToolCalls: []model.ToolCall{}}
}

// SplitRef splits a reference "<path>[#<agent_id>]" at its last '#'. The
// agent id is empty for the root agent.
func SplitRef(ref string) (path, agentID string) {
	if i := strings.LastIndexByte(ref, '#'); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// Parse reads the script of one agent from scenario JSON: the top-level
// "model" list when agentID is empty, "agents"[agentID] otherwise, and the
// top-level "summary", which every agent of the file shares. A missing
// "model" list is an empty script. Errors name the position in the file, e.g.
// "model[3].tool_calls[0]: name is missing".
func Parse(data []byte, agentID string) (Script, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return Script{}, describeJSONError(data, err)
	}
	if top == nil {
		return Script{}, errors.New("the scenario must be a JSON object, not null")
	}
	summary, err := parseSummary(top["summary"])
	if err != nil {
		return Script{}, err
	}
	steps, err := parseSteps(top, agentID)
	if err != nil {
		return Script{}, err
	}
	sc := Script{Steps: steps, Summary: summary}
	// "then" belongs to the root agent's list: a subagent's run ends with
	// its final answer, so it has no later calls to answer.
	if raw, ok := top["then"]; ok && !isNull(raw) && agentID == "" {
		then, err := parseStep(raw, "then", 0)
		if err != nil {
			return Script{}, err
		}
		sc.Then = &then
	}
	return sc, nil
}

// parseSummary reads the top-level "summary": a string, used as it is (an
// empty one too: the agent then drops its older messages without a
// summary, which a scenario may want to show), or DefaultSummary when it is
// missing or null.
func parseSummary(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return DefaultSummary, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("summary: must be a string (the answer to every summarising call), not %s", kind(raw))
	}
	return s, nil
}

// parseSteps reads the numbered responses of one agent.
func parseSteps(top map[string]json.RawMessage, agentID string) ([]Step, error) {
	where, list := "model", top["model"]
	if agentID != "" {
		where = "agents." + agentID
		var agents map[string]json.RawMessage
		if raw, ok := top["agents"]; ok && !isNull(raw) {
			if err := json.Unmarshal(raw, &agents); err != nil {
				return nil, fmt.Errorf("agents: must be an object mapping agent ids to response lists")
			}
		}
		var ok bool
		if list, ok = agents[agentID]; !ok {
			return nil, unknownAgent(agentID, agents)
		}
	}
	if isNull(list) {
		return []Step{}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(list, &raws); err != nil {
		return nil, fmt.Errorf("%s: must be an array of responses", where)
	}
	steps := make([]Step, 0, len(raws))
	for i, raw := range raws {
		// Response i answers call i+1, which names its derived tool call ids.
		step, err := parseStep(raw, fmt.Sprintf("%s[%d]", where, i), i+1)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	return steps, nil
}

func parseStep(raw json.RawMessage, where string, call int) (Step, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Step{}, fmt.Errorf("%s: must be an object with content and/or tool_calls", where)
	}
	step := Step{Response: model.Response{ToolCalls: []model.ToolCall{}}}

	if raw, ok := fields["content"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &step.Response.Content); err != nil {
			return Step{}, fmt.Errorf("%s.content: must be a string", where)
		}
	}

	if raw, ok := fields["delay_ms"]; ok && !isNull(raw) {
		var ms int64
		if err := json.Unmarshal(raw, &ms); err != nil {
			return Step{}, fmt.Errorf("%s.delay_ms: must be a whole number of milliseconds", where)
		}
		if ms < 0 {
			return Step{}, fmt.Errorf("%s.delay_ms: must not be negative", where)
		}
		if ms > MaxDelay.Milliseconds() {
			return Step{}, fmt.Errorf("%s.delay_ms: %d is more than %d (%v), longer than a model call may take", where, ms, MaxDelay.Milliseconds(), MaxDelay)
		}
		step.Delay = time.Duration(ms) * time.Millisecond
	}

	if raw, ok := fields["tool_calls"]; ok && !isNull(raw) {
		var calls []json.RawMessage
		if err := json.Unmarshal(raw, &calls); err != nil {
			return Step{}, fmt.Errorf("%s.tool_calls: must be an array", where)
		}
		for i, rawCall := range calls {
			tc, err := parseToolCall(rawCall, fmt.Sprintf("%s.tool_calls[%d]", where, i))
			if err != nil {
				return Step{}, err
			}
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d_%d", call, i)
			}
			step.Response.ToolCalls = append(step.Response.ToolCalls, tc)
		}
	}
	return step, nil
}

func parseToolCall(raw json.RawMessage, where string) (model.ToolCall, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return model.ToolCall{}, fmt.Errorf("%s: must be an object with name and arguments", where)
	}
	var tc model.ToolCall

	rawName, ok := fields["name"]
	if !ok || isNull(rawName) {
		return model.ToolCall{}, fmt.Errorf("%s: name is missing", where)
	}
	if err := json.Unmarshal(rawName, &tc.Name); err != nil {
		return model.ToolCall{}, fmt.Errorf("%s.name: must be a string", where)
	}
	if strings.TrimSpace(tc.Name) == "" {
		return model.ToolCall{}, fmt.Errorf("%s: name is missing", where)
	}

	if rawID, ok := fields["id"]; ok && !isNull(rawID) {
		if err := json.Unmarshal(rawID, &tc.ID); err != nil {
			return model.ToolCall{}, fmt.Errorf("%s.id: must be a string", where)
		}
	}

	tc.Arguments = json.RawMessage(`{}`)
	if args, ok := fields["arguments"]; ok && !isNull(args) {
		args = bytes.TrimSpace(args)
		if args[0] != '{' {
			return model.ToolCall{}, fmt.Errorf("%s.arguments: must be a JSON object, not %s", where, kind(args))
		}
		// Compacting changes whitespace only: the arguments stay what the
		// file says, without its indentation showing up in transcripts.
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err != nil {
			return model.ToolCall{}, fmt.Errorf("%s.arguments: %w", where, err)
		}
		tc.Arguments = json.RawMessage(buf.Bytes())
	}
	return tc, nil
}

func unknownAgent(id string, agents map[string]json.RawMessage) error {
	if len(agents) == 0 {
		return fmt.Errorf("unknown agent id %q: the scenario has no agents", id)
	}
	known := make([]string, 0, len(agents))
	for k := range agents {
		known = append(known, k)
	}
	slices.Sort(known)
	return fmt.Errorf("unknown agent id %q (agents has: %s)", id, strings.Join(known, ", "))
}

// describeJSONError adds the line and column to a syntax error: an offset
// into a hand-written file is of little help.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("the scenario must be a JSON object, not %s", typ.Value)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

func lineCol(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

func isNull(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) == 0 || string(trimmed) == "null"
}

// kind names the JSON type of a value for error messages.
func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}
