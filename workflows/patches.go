package workflows

import "go.temporal.io/sdk/workflow"

// Patches: changes to AgentWorkflow's command sequence made after the first
// release (docs/protocol.md: Versions and upgrades).
//
// An unversioned worker (the default: no worker deployment) replays every
// open session on whatever build it runs, so a build that makes other
// commands than the release that started a session must still make that
// release's commands for it. Each such change is a patch: a constant below,
// named patch*, whose comment says the release that removes it (the first
// release after which no supported build can hold a session started before
// the patch), and one call of patched where the run starts (or, for a
// change that only a rare event reaches, where that event is handled, so
// that the runs it never reaches record no marker: patchKeepInterrupted,
// read when an interrupt reaches a model call). The release's
// recorded corpus (testsuite/testdata/releases) replays through the old
// branch, the current corpus through the new one; TestPatchesAreListed
// keeps GetVersion to this file.

// patchLeanTurn makes a chat turn cheaper: the idle timer is started once
// and moved, not started and cancelled on every turn (session.go), and a
// short turn does not show "running" in the run list (publish.go).
// Remove in v0.3.0.
const patchLeanTurn = "lean-turn"

// patchPlanRestored makes a plan carried across continue-as-new answer as
// it did before the handover (todo.PlanState.Restored): a status report
// repeated after it is unchanged and emits no event again, so no parent or
// subscriber is told of the step twice. Read at the run's start, and only
// by a run whose carried plan holds such a step. Remove in v0.3.0.
const patchPlanRestored = "plan-restored"

// patchRecordMade records a field of the workflow's own making that a model
// call's input leaves out (modelcall.go, recordMade), so that the run's
// history tells every message and no reader queries the run. Asked for
// where it is first needed, not at the run's start: most runs never are.
// Remove in v0.3.0.
const patchRecordMade = "record-made"

// patchKeepInterrupted keeps what an interrupted model call had written:
// the call is cancelled and its answer waited for, a few seconds at most
// (cutWait), and the turn's interrupted message holds the reply it
// reported (interrupt.go). Read where the interrupt reaches the call
// (keepsCut), once a run at most: a run never interrupted pays no marker.
// Remove in v0.3.0.
const patchKeepInterrupted = "keep-interrupted"

// patchPreviewWrite shows the diff a write_file call would make in its
// wait for approval: a PreviewTool activity before the wait (preview.go).
// Read the first time a run would preview, not at its start, so that a run
// that never waits for a write records no marker for it.
// Remove in v0.3.0.
const patchPreviewWrite = "preview-write"

// patched reports whether this run takes the patch id: true for a run that
// a build with the patch started (the marker it recorded says so), false
// for one an older build started and this build replays.
func patched(ctx workflow.Context, id string) bool {
	return workflow.GetVersion(ctx, id, workflow.DefaultVersion, 1) == 1
}
