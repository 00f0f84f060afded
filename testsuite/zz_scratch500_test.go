package testsuite

import (
	"net/http"
	"os"
	"testing"
	"time"
)

func TestScratchPlain500(t *testing.T) {
	if os.Getenv("TODOFLOW_SCRATCH") == "" {
		t.Skip()
	}
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	h := newHook(t, func(int) (int, string) { return http.StatusInternalServerError, "" })
	sc := writeScenario(t, webhookScenario(t, h.URL, ""))
	sc.TimeLimitS = 900
	start := time.Now()
	out, st := play(t, s.c, sc, 15*time.Minute)
	t.Logf("took %s run_status %s reporters %+v events %d requests %d", time.Since(start), out.RunStatus, st.Reporters, len(st.Events), len(h.requests()))
	for _, r := range h.requests() {
		t.Logf("%s %s", r.At.Format("15:04:05.000"), r.Key)
	}
}
