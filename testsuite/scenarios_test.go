package testsuite

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/scenario"
)

// TestScenarios plays every scenario in testdata/scenarios against a real
// server and worker and checks its "expect" list: jq expressions on what
// `starter run --json` prints (docs/testing.md, Scenarios).
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := scenario.Play(ctx, s.c, sc, scenario.Options{Progress: testWriter{t}})
			if err != nil {
				t.Fatalf("play: %v", err)
			}
			checkExpect(t, sc, out)
		})
	}
}

// checkExpect evaluates the scenario's jq expressions on the output.
func checkExpect(t *testing.T, sc *scenario.Scenario, out *scenario.Output) {
	t.Helper()
	if len(sc.Expect) == 0 {
		t.Fatal("scenario has no expectations")
	}
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Fatal("jq is needed to check scenario expectations (apt-get install -y jq)")
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range sc.Expect {
		got, err := exec.Command(jq, "-r", "("+e+") | if . == true then \"ok\" else \"no\" end", path).Output()
		if err != nil || strings.TrimSpace(string(got)) != "ok" {
			t.Errorf("expectation failed: %s", e)
		}
	}
	if t.Failed() {
		t.Logf("output: %s", data)
	}
}
