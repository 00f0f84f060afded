package localcluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a T that records what Gate asked of it instead of stopping the test.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

// A test skips only where the cluster tests were not asked for: once they were, a machine
// without PostgreSQL fails it, with cluster.sh's reason, instead of letting it pass as a skip.
func TestGate(t *testing.T) {
	unavailable := fmt.Errorf("%w: cluster: PostgreSQL cannot be installed", ErrUnavailable)
	broken := errors.New("cluster.sh up: exit status 1: cluster: the server did not start")
	for _, tc := range []struct {
		name      string
		requested bool
		upErr     error
		want      string // "run", "skip" or "fail"
		reason    string // in the skip's or the failure's message
	}{
		{"not asked, available", false, nil, "skip", RequestVar + "=1"},
		{"not asked, unavailable", false, unavailable, "skip", RequestVar + "=1"},
		{"not asked, broken", false, broken, "skip", RequestVar + "=1"},
		{"asked, available", true, nil, "run", ""},
		{"asked, unavailable", true, unavailable, "fail", "PostgreSQL cannot be installed"},
		{"asked, broken", true, broken, "fail", "the server did not start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			Gate(&r, tc.requested, tc.upErr)
			got, msg := "run", ""
			switch {
			case r.skipped != "" && r.failed != "":
				t.Fatalf("both skipped (%q) and failed (%q)", r.skipped, r.failed)
			case r.skipped != "":
				got, msg = "skip", r.skipped
			case r.failed != "":
				got, msg = "fail", r.failed
			}
			if got != tc.want {
				t.Fatalf("Gate(requested=%v, %v): %s (%q); want %s", tc.requested, tc.upErr, got, msg, tc.want)
			}
			if !strings.Contains(msg, tc.reason) {
				t.Errorf("the %s says %q; want it to give %q", got, msg, tc.reason)
			}
		})
	}
}
