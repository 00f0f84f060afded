package testsuite

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The chat names a rate limit as what it is, in tmux against a real server
// and a real openai-go client: while the provider answers 429, the line says
// so and when the next attempt is (the server retries the call at the time
// Retry-After gives), not "the model is failing"; when the limit lifts, the
// reply comes and the line is gone.
func TestChatRateLimitLine(t *testing.T) {
	stub := newModelStub(t, assistantText("Here is the answer, after the wait."))
	stub.failUntil(time.Now().Add(time.Hour), http.StatusTooManyRequests, "5")
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	const limit = 90 * time.Second
	tm.start("limit", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--model", "openai:test-model")
	tm.waitFor("limit", limit, askFirst)
	tm.keys("limit", "what is the answer?", "Enter")

	screen := tm.waitFor("limit", limit, "the model provider answers 429; retrying at ")
	if strings.Contains(screen, "the model is failing") {
		t.Errorf("a rate limit reads as a failing model:\n%s", screen)
	}
	stub.failUntil(time.Time{}, 0, "")
	tm.waitFor("limit", limit, "Here is the answer, after the wait.")
	tm.waitScreen("limit", limit, "the 429 line gone", func(string) bool {
		return !strings.Contains(tm.visible("limit"), "answers 429")
	})
}
