package testsuite

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/scenario"
)

// TestMeasureModelOutage: the history events that a model outage adds to a
// run. Two one-turn sessions against modelStub, on one server and worker:
// one whose model answers at once, and one whose model answers 503 (no
// Retry-After) from its first request for the outage's length, then
// answers. The difference of their histories is what the outage cost.
// Half way through the outage the session's state (as the client reads it)
// must say the model is failing. The goal (issue 35): an outage of 10
// minutes adds at most 10 events.
//
//	TODOFLOW_MEASURE=1 TODOFLOW_OUTAGE=2m go test ./testsuite -run TestMeasureModelOutage -count=1 -v -timeout 30m
//
// TODOFLOW_OUTAGE is the outage (a Go duration; 2m when unset).
func TestMeasureModelOutage(t *testing.T) {
	measureOnly(t)
	outage := 2 * time.Minute
	if v := os.Getenv("TODOFLOW_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("TODOFLOW_OUTAGE=%q: want a positive Go duration (2m, 10m)", v)
		}
		outage = d
	}
	stub := newModelStub(t)
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startServer(t)
	s.startWorker(t, t.TempDir())

	session := func(id string, outage time.Duration) historyFigures {
		t.Helper()
		sc := &scenario.Scenario{Name: id, TimeLimitS: int((outage + 5*time.Minute) / time.Second),
			Input: api.AgentInput{Prompt: "Say hello.", Model: "openai:test-model"}}
		began := time.Now()
		if outage > 0 {
			stub.failUntil(began.Add(outage), http.StatusServiceUnavailable, "")
		}
		ch := playAsync(t, s.c, sc, id, outage+6*time.Minute)
		if outage > 0 {
			time.Sleep(outage / 2)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			st, err := tfclient.New(s.c, tfclient.Options{}).Session(id).State(ctx)
			cancel()
			switch {
			case err != nil:
				t.Errorf("%s: state half way through the outage: %v", id, err)
			case st.ModelError == nil || !st.ModelError.Retryable || st.ModelError.Attempts < 2:
				t.Errorf("%s: model_error half way through the outage = %+v; want the failing call, retried", id, st.ModelError)
			default:
				t.Logf("%s: half way through the outage, model_error %+v", id, *st.ModelError)
			}
		}
		p := <-ch
		if p.err != nil {
			t.Fatalf("%s: play: %v", id, p.err)
		}
		if p.out.RunStatus != "completed" || p.out.Reply != stubFinalText {
			t.Errorf("%s: run %s, reply %q, error %s; want completed with %q", id, p.out.RunStatus, p.out.Reply, p.out.Error, stubFinalText)
		}
		h := readHistory(t, s.c, id, nil)
		t.Logf("%s: outage %s, %d events, %d bytes, %d runs, %d CallModel scheduled; took %.1f s",
			id, outage, h.events, h.bytes, h.runs, h.modelCalls, time.Since(began).Seconds())
		return h
	}
	calm := session("outage-none", 0)
	before := len(stub.requests())
	down := session("outage", outage)
	refused := 0
	for _, r := range stub.requests()[before:] {
		if r.status == http.StatusServiceUnavailable {
			refused++
		}
	}
	added := down.events - calm.events
	perMinute := float64(added) / outage.Minutes()
	t.Logf("an outage of %s added %d events (%.1f a minute of outage; %d bytes) over %d failed attempts",
		outage, added, perMinute, down.bytes-calm.bytes, refused)
	// Retried by the server, an outage costs the same whatever its length.
	if added > 10 {
		t.Errorf("an outage of %s added %d events; want at most 10, as for one of 10 minutes", outage, added)
	}
}
