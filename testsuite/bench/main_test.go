package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/todoflow/todoflow/internal/localcluster"
)

// TestMain lets the test binary be the benchmark's worker process too, as
// the program is (startWorker runs os.Executable with -role worker).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-role" && os.Args[2] == "worker" {
		if err := runWorker(os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The program runs end to end on a small scale: a server, a worker
// process, a chat session and a streamed reply. Its figures are for
// BENCHMARKS.md, not asserted; what is checked is that each phase finishes
// and prints its table.
func TestPhasesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server and a worker process")
	}
	var out bytes.Buffer
	if err := run([]string{"-phases", "chat,stream", "-turns", "11", "-stream-turns", "1", "-reps", "1"}, &out); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	for _, want := range []string{"## History per chat turn", "| 10 | ", "## A streamed reply: billable actions", "| **the model calls' own**", "| first token: flushed by the model"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run([]string{"-phases", "bogus"}, &out); err == nil {
		t.Error("-phases bogus: no error")
	}
}

// The cluster phase runs end to end on a small scale, against a cluster of
// deploy/cluster.sh, when TODOFLOW_CLUSTER is set as for the cluster tests
// of package testsuite; a machine that cannot run a cluster then fails it
// (localcluster.Gate).
func TestClusterPhaseRuns(t *testing.T) {
	localcluster.Gate(t, localcluster.Requested(), nil)
	if testing.Short() {
		t.Skip("starts a cluster (deploy/cluster.sh); skipped with -short")
	}
	var out bytes.Buffer
	err := run([]string{"-phases", "cluster", "-cluster-sessions", "6", "-cluster-turns", "2", "-cluster-conc", "3", "-reps", "1"}, &out)
	if err != nil {
		t.Log(out.String())
	}
	localcluster.Gate(t, true, err)
	for _, want := range []string{"## Chat sessions on a cluster and on the dev server", "  dev server, sample 1: 12 turns", "  cluster, sample 1: 12 turns",
		"| **turns per second** |", "Server CPU per turn, cluster: postgres "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}

// A history replays as often as the replay phase asks: each replay gets its
// own copy of the events. The session's first workflow task takes its first
// message (an update accepted before the first model call), the history in
// which a replay of events an earlier replay had changed failed.
func TestReplayRepeats(t *testing.T) {
	b, err := os.ReadFile("testdata/session-3-turns.json")
	if err != nil {
		t.Fatal(err)
	}
	var hist historypb.History
	if err := protojson.Unmarshal(b, &hist); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := replay(&hist, workflow.Execution{}); err != nil {
			t.Fatalf("replay %d: %v", i+1, err)
		}
	}
}
