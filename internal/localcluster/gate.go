package localcluster

import (
	"errors"
	"fmt"
	"os"
)

// RequestVar asks for the tests that run on a cluster: TODOFLOW_CLUSTER=1. They are
// opt-in (a cold build of the server takes minutes); CI sets it.
const RequestVar = "TODOFLOW_CLUSTER"

// Requested says whether RequestVar asks for the cluster tests.
func Requested() bool { return os.Getenv(RequestVar) != "" }

// T is the part of testing.TB that Gate uses.
type T interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// Gate skips or fails a test that needs a cluster, given whether the cluster tests were
// asked for (Requested) and what bringing one up returned (nil where it came up, or before
// trying). It skips only where they were not asked for. Where they were, a machine that
// cannot run a cluster (ErrUnavailable) fails the test with its reason like any other
// error: a run that asked for the cluster tests, as CI does, cannot pass by skipping them.
func Gate(t T, requested bool, upErr error) {
	t.Helper()
	switch {
	case !requested:
		t.Skip("production topology (deploy/cluster.sh): set " + RequestVar + "=1 to run it")
	case errors.Is(upErr, ErrUnavailable):
		t.Fatal(fmt.Sprintf("%v (%s is set: a machine that cannot run a cluster fails the test)", upErr, RequestVar))
	case upErr != nil:
		t.Fatal(upErr)
	}
}
