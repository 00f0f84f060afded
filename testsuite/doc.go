// Package testsuite holds todoflow's end-to-end tests: scenario files
// played against a real Temporal dev server with the real worker, crash and
// resume of a worker mid-run, and replay of recorded histories, which guards
// AgentWorkflow's determinism across code changes.
//
// The tests start their own server on free ports with a temporary database
// (package worker/devserver builds the server once per machine, under a
// lock; the first build takes minutes, so run the tests with a -timeout).
// Scenario files live in testdata/scenarios, recorded histories in
// testdata/histories; `go test ./testsuite -run TestRecord -record` writes
// new histories when a change is meant to alter the command sequence. The
// corpus is recorded from scenario files and, for what a scenario cannot
// script (a model server's faults, a workspace host that is gone, a
// reporter still delivering at the end, the idle timeout), from runs driven
// by Go code (record_faults_test.go); corpus_paths_test.go names the path
// of the command sequence each case covers, which its recording checks.
//
// Package scenario (top-level scenario/) reads and plays scenario files; the
// starter's `run --scenario` uses it too.
package testsuite
