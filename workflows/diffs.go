package workflows

// The diffs of the latest tool calls, for the user: what a write_file call
// changed (activities.RunToolResult.Diff). A diff is for the person
// watching, never for the model, so it stays out of the transcript: it
// enters history in the tool activity's result, and again only in a carry
// (Carry.Diffs, the first part fit.go sheds) for a client that attaches to
// the continuation. The tool_diffs query answers from the latest kept.

import (
	"slices"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
)

// maxKeptDiffs is how many diffs, the latest, the run keeps: a client that
// looks several times a second needs only those of one model's answer,
// and their query answer, each diff at most tools.MaxDiffBytes and
// six times that as JSON escapes it at worst, fits MaxQueryAnswerBytes.
const maxKeptDiffs = 8

// toolDiffs are the diffs a run keeps.
type toolDiffs struct {
	kept []CarriedDiff // oldest first
}

// CarriedDiff is the diff of tool call CallID, as the run keeps it and a
// carry holds it.
type CarriedDiff struct {
	CallID string `json:"call_id"`
	Diff   string `json:"diff"`
}

// newToolDiffs are a continuation's diffs: the carried ones, as bounded as
// the run's own.
func newToolDiffs(carried []CarriedDiff) toolDiffs {
	var d toolDiffs
	for _, k := range carried {
		d.keep(k.CallID, k.Diff)
	}
	return d
}

// carry is what a handover carries of the diffs: those of the tool results
// among msgs, the window it carries.
func (d *toolDiffs) carry(msgs []model.Message) []CarriedDiff {
	var out []CarriedDiff
	for _, k := range d.kept {
		if slices.ContainsFunc(msgs, func(m model.Message) bool { return m.Role == model.RoleTool && m.ToolCallID == k.CallID }) {
			out = append(out, k)
		}
	}
	return out
}

// keep adds the diff of call callID; an empty one is none. A diff over
// its bound (a worker of another build) is dropped, not kept.
func (d *toolDiffs) keep(callID, diff string) {
	if diff == "" || len(diff) > tools.MaxDiffBytes {
		return
	}
	d.kept = append(d.kept, CarriedDiff{callID, diff})
	if over := len(d.kept) - maxKeptDiffs; over > 0 {
		d.kept = slices.Delete(d.kept, 0, over)
	}
}

// answer is the tool_diffs query's answer for ids.
func (d *toolDiffs) answer(ids []string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range d.kept {
		if slices.Contains(ids, k.CallID) {
			out[k.CallID] = k.Diff
		}
	}
	return out, nil
}
