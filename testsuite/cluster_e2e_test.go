package testsuite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/internal/localcluster"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// The tests of this file run todoflow on the production topology of deploy/cluster.sh:
// PostgreSQL and temporal-server as four processes, the configuration docker-compose.yml
// runs. They are opt-in (TODOFLOW_CLUSTER=1): a cold build of the server takes about ten
// minutes, and PostgreSQL may have to be installed first.

// cluster is one started by deploy/cluster.sh, in a folder of its own.
type cluster struct{ localcluster.Cluster }

const clusterScript = "../deploy/cluster.sh"

// startCluster brings a cluster up for the test and down when it ends. It skips, saying
// why in one line, unless TODOFLOW_CLUSTER is set; once it is set, a machine that cannot
// run one (cluster.sh's exit code 3: PostgreSQL cannot be installed, no Go) fails the test
// (localcluster.Gate). dynamic adds server
// settings to this cluster's dynamic config ("key=value", as devserver.Options.DynamicConfig
// takes them), through cluster.sh's TODOFLOW_CLUSTER_DYNAMIC_CONFIG.
func startCluster(t *testing.T, dynamic ...string) *cluster {
	t.Helper()
	cl := newCluster(t, dynamic...)
	cl.up(t)
	return cl
}

// newCluster is a cluster in a folder of its own, to be brought up (up), and down when
// the test ends if it has settings by then; it skips as startCluster does.
func newCluster(t *testing.T, dynamic ...string) *cluster {
	t.Helper()
	localcluster.Gate(t, localcluster.Requested(), nil)
	if testing.Short() {
		t.Skip("end-to-end test against a Temporal cluster; skipped with -short")
	}
	lc, err := localcluster.New(clusterScript) // not t.TempDir: PostgreSQL's user must reach it
	if err != nil {
		t.Fatal(err)
	}
	cl, dir := &cluster{*lc}, lc.Dir
	if len(dynamic) > 0 {
		var yaml strings.Builder
		for _, kv := range dynamic {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("dynamic config %q: want key=value", kv)
			}
			fmt.Fprintf(&yaml, "%s:\n  - value: %s\n    constraints: {}\n", k, v)
		}
		file := filepath.Join(dir, "test-dynamicconfig.yaml")
		if err := os.WriteFile(file, []byte(yaml.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cl.Env = append(cl.Env, "TODOFLOW_CLUSTER_DYNAMIC_CONFIG="+file)
	}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, "cluster.env")); err == nil {
			if out, err := cl.run(context.Background(), t, "down"); err != nil {
				t.Errorf("cluster.sh down: %v\n%s", err, out)
			}
		}
		if t.Failed() {
			t.Logf("the cluster's folder is kept for its logs: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return cl
}

// up brings the cluster up, failing the test where it does not come up (localcluster.Gate).
func (cl *cluster) up(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute) // a cold build included
	defer cancel()
	start := time.Now()
	err := cl.Up(ctx, func(line string) { t.Log(line) })
	localcluster.Gate(t, localcluster.Requested(), err)
	t.Logf("cluster up at %s in %s", cl.Address, time.Since(start).Round(100*time.Millisecond))
}

// run runs cluster.sh COMMAND DIR ARGS..., logging its lines as they come (a build
// takes minutes); it returns its output, stderr included.
func (cl *cluster) run(ctx context.Context, t *testing.T, command string, args ...string) (string, error) {
	return cl.Run(ctx, func(line string) { t.Log(line) }, command, args...)
}

// kill sends SIGKILL to one of the server's services, or to PostgreSQL's postmaster
// ("postgres"), and waits until it is gone.
func (cl *cluster) kill(t *testing.T, service string) {
	t.Helper()
	pid, err := cl.PID(service)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s (pid %d): %v", service, pid, err)
	}
	waitFor(t, 10*time.Second, service+" to be gone", func() bool { return !processRuns(pid) })
}

// processRuns says whether process pid runs: it exists and is no zombie (killed, not yet
// reaped by its parent).
func processRuns(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// dial connects to the cluster's default namespace, which has todoflow's search
// attributes (cluster.sh created them).
func (cl *cluster) dial(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: cl.Address, Namespace: "default", Logger: quiet{}})
	if err != nil {
		t.Fatalf("dial %s: %v", cl.Address, err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := devserver.EnsureSearchAttributes(ctx, c, "default", api.SearchAttributes()); err != nil {
		t.Fatal(err)
	}
	return c
}

// temporal runs the stock temporal CLI (the one cluster.sh uses) against the cluster's
// default namespace, and returns its output, stderr included.
func (cl *cluster) temporal(ctx context.Context, args ...string) (string, error) {
	bin := os.Getenv("TODOFLOW_TEMPORAL_CLI")
	if bin == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(dir, "todoflow", "temporal-cli-v1.5.1", "temporal")
	}
	args = append(args, "--address", cl.Address, "--namespace", "default",
		"--disable-config-file", "--disable-config-env", "--command-timeout", "20s")
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("temporal %s: %w: %s", strings.Join(args[:min(len(args), 3)], " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// TestClusterHistoryRestart plays the plan scenario (05) on the cluster with two
// workers, SIGKILLs the history service while a model call is in flight, and starts it
// again a few seconds later: the run finishes as its scenario expects. It logs how long
// the session took, from the restart, to its next step.
func TestClusterHistoryRestart(t *testing.T) {
	cl := startCluster(t)
	c := cl.dial(t)

	// Scenario 05, its fourth model call (after the approval) 2 s long: the kill finds
	// it in flight, and it ends while history is down.
	sc := scenarioVariant(t, "05_plan_with_approval.json", func(m map[string]any) {
		m["model"].([]any)[3].(map[string]any)["delay_ms"] = 2000
	})
	s := &server{c: c}
	for range 2 {
		s.startWorkerWith(t, agentworker.Options{StateDir: t.TempDir(), ScriptDir: filepath.Dir(sc.Path)})
	}
	id := "cluster-history-" + time.Now().Format("150405.000000")
	result := playAsync(t, c, sc, id, 3*time.Minute)

	var before api.State
	waitFor(t, 60*time.Second, "the run's model call after the approval", func() bool {
		st, ok := queryState(context.Background(), c, id)
		if ok && st.ModelCalls == 4 && modelCallRunning(c, id) {
			before = st
			return true
		}
		return false
	})
	killed := time.Now()
	cl.kill(t, "history")
	t.Logf("history killed (SIGKILL) during model call 4")
	time.Sleep(4 * time.Second)
	restart := time.Now()
	if out, err := cl.run(context.Background(), t, "restart", "history"); err != nil {
		t.Fatalf("cluster.sh restart history: %v\n%s", err, out)
	}
	ready := time.Now()

	step := func(st api.State) string {
		return fmt.Sprintf("%s/%d/%d", st.Status, st.ModelCalls, st.EventsTotal)
	}
	var next time.Time
	waitFor(t, 2*time.Minute, "the session's next step after the restart", func() bool {
		st, ok := queryState(context.Background(), c, id)
		if ok && step(st) != step(before) {
			next = time.Now()
			return true
		}
		return false
	})
	t.Logf("history down %s; cluster.sh restart took %s; the session's next step came %s after the restart began (%s after history was up)",
		restart.Sub(killed).Round(time.Millisecond), ready.Sub(restart).Round(time.Millisecond),
		next.Sub(restart).Round(time.Millisecond), next.Sub(ready).Round(time.Millisecond))

	res := <-result
	if res.err != nil {
		t.Fatalf("play: %v", res.err)
	}
	t.Logf("the run completed %s after the restart began; %d model call attempt(s) timed out (a completion lost while history was down)",
		time.Since(restart).Round(time.Millisecond), interruptedModelCalls(t, c, id))
	checkExpect(t, sc, res.out)
}
