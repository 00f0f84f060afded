package workflows

// The diffs of the latest tool calls, for the user: what a write_file call
// changed (activities.RunToolResult.Diff).
//
// A diff is for the person watching, never for the model, so it stays out
// of the transcript: the tool message is what it always was, and a diff
// enters history once, in the tool activity's result, and nowhere else (no
// model call's input, no carry, no query answer is recorded). The run keeps
// the latest maxKeptDiffs in memory, by call id, for the tool_diffs query,
// which a client asks for the results it has just read. A continued run
// starts with none: its client has shown them already.

import (
	"slices"

	"github.com/todoflow/todoflow/activities/tools"
)

// maxKeptDiffs is how many diffs, the latest, the run keeps: a client that
// looks several times a second needs only those of one model's answer,
// and their query answer, each diff at most tools.MaxDiffBytes and
// six times that as JSON escapes it at worst, fits MaxQueryAnswerBytes.
const maxKeptDiffs = 8

// toolDiffs are the diffs a run keeps.
type toolDiffs struct {
	kept []keptDiff // oldest first
}

type keptDiff struct{ callID, diff string }

// keep adds the diff of call callID; an empty one is none. A diff over
// its bound (a worker of another build) is dropped, not kept.
func (d *toolDiffs) keep(callID, diff string) {
	if diff == "" || len(diff) > tools.MaxDiffBytes {
		return
	}
	d.kept = append(d.kept, keptDiff{callID, diff})
	if over := len(d.kept) - maxKeptDiffs; over > 0 {
		d.kept = slices.Delete(d.kept, 0, over)
	}
}

// answer is the tool_diffs query's answer for ids.
func (d *toolDiffs) answer(ids []string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range d.kept {
		if slices.Contains(ids, k.callID) {
			out[k.callID] = k.diff
		}
	}
	return out, nil
}
