package testsuite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/workflows"
)

// olderBuild is the build whose sessions issue 35 saw half served by a newer
// worker: a build from before protocols (0).
const olderBuild = "e7da0f1"

// buildOlderWorker builds the worker of rev, from the repository's own
// history, into t's temporary folder, with that revision's tree beside it
// (its scenario files are what its worker reads). It skips the test where
// the revision is not in the clone (a shallow one).
func buildOlderWorker(t *testing.T, rev string) (bin, tree string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", rev+"^{commit}").CombinedOutput(); err != nil {
		t.Skipf("revision %s is not in this clone (%v: %s)", rev, err, out)
	}
	tree = filepath.Join(t.TempDir(), rev)
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	// An archive, not a worktree: nothing is registered in the repository.
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, rev, tree)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", rev, err, out)
	}
	bin = filepath.Join(t.TempDir(), "worker-"+rev)
	build := exec.Command("go", "build", "-o", bin, "./worker")
	build.Dir = tree
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./worker at %s: %v\n%s", rev, err, out)
	}
	return bin, tree
}

// Sessions started on a build from before protocols, then served by this
// build's worker (issue 35): none fails its run, each is blocked with the
// message that says what to run (starter state shows it), and, the older
// worker back, each goes on with its todo list and ends as it should.
func TestOlderBuildsSessionsAreRefusedNotFailed(t *testing.T) {
	oldBin, oldTree := buildOlderWorker(t, olderBuild)
	starter := buildStarter(t)
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	older := startWorkerProc(t, oldBin, s, "worker "+olderBuild)
	scenario := func(name string) string {
		return "script:" + filepath.Join(oldTree, "testsuite", "testdata", "scenarios", name+".json")
	}
	// The older client's input: no protocol, as that build wrote it.
	const plain, tree, child = "older-plain", "older-tree", "older-tree/fixer"
	for id, in := range map[string]map[string]any{
		plain: {"prompt": "Fix the failing test and explain the fix.", "model": scenario("01_write_todos_lifecycle")},
		tree:  {"prompt": "Have the database fixed.", "model": scenario("06f_paused_child_resumed_at_root")},
	} {
		if _, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName, in); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
	}
	// The plain session waits for its user with its list done; the tree's
	// subagent paused with its list, its pause surfaced at the root.
	lists := map[string][]todo.Item{}
	for id, status := range map[string]string{plain: api.StatusWaitingUser, tree: api.StatusPaused, child: api.StatusPaused} {
		waitFor(t, time.Minute, id+" "+status+" on "+olderBuild, func() bool {
			st, ok := queryState(ctx, s.c, id)
			lists[id] = st.Todos
			return ok && st.Status == status
		})
	}
	if len(lists[plain]) != 2 || len(lists[child]) != 1 {
		t.Fatalf("lists on %s: plain %+v, subagent %+v; want 2 items and 1", olderBuild, lists[plain], lists[child])
	}
	older.stop(t)

	// This build's worker meets their histories at their next workflow
	// task: a signal no one handles gives each one.
	stopNew := s.startWorker(t, t.TempDir())
	sessions := []string{plain, tree, child}
	for _, id := range sessions {
		if err := s.c.SignalWorkflow(ctx, id, "", "upgrade_probe", nil); err != nil {
			t.Fatalf("signal %s: %v", id, err)
		}
	}
	c := tfclient.New(s.c, tfclient.Options{Namespace: s.srv.Namespace()})
	want := workflows.RefusalMessage(0)
	for _, id := range sessions {
		waitFor(t, 2*time.Minute, id+" blocked with the refusal", func() bool {
			why, err := c.Session(id).Blocked(ctx)
			return err == nil && strings.Contains(why, want)
		})
	}
	for _, id := range sessions {
		d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("%s is %v under this build's worker; want it running, blocked", id, st)
		}
	}
	out, err := exec.CommandContext(ctx, starter, "state", tree, "--address", s.srv.Address(), "--namespace", s.srv.Namespace()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("starter state %s: %v\n%s\nwant it to fail with %q", tree, err, out, want)
	}
	t.Logf("starter state %s (%v): %s", tree, err, out)

	// What the message says: the older build's worker serves them again,
	// at their tasks' next attempts (the server spaces a failing task's
	// attempts out, by up to minutes).
	stopNew()
	older = startWorkerProc(t, oldBin, s, "worker "+olderBuild+" again")
	for _, id := range sessions {
		waitFor(t, 3*time.Minute, id+"'s state on "+olderBuild+" again", func() bool {
			st, ok := queryState(ctx, s.c, id)
			return ok && slices.Equal(st.Todos, lists[id])
		})
	}
	if err := s.c.SignalWorkflow(ctx, tree, "", api.ResumeSignal, "The password is in the vault now."); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the subagent's end", func() bool {
		d, err := s.c.DescribeWorkflowExecution(ctx, child, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	for _, id := range []string{plain, tree} {
		if err := s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range sessions {
		var res api.AgentResult
		if err := s.c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
			t.Errorf("%s: %v; want it completed", id, err)
		}
	}
	older.stop(t)
}
