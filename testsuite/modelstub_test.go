package testsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/model/openai"
)

// Answers of a modelStub when nothing more specific was asked for.
const (
	stubFinalText   = "Done."
	stubSummaryText = "Summary of the conversation so far."
)

// modelStub is an OpenAI-compatible Chat Completions endpoint for end-to-end
// tests of how the agent copes with a model server: it answers from a script,
// records what it was sent, and fails on demand the ways real servers fail
// (an outage with Retry-After, a request too long for the model, one-off
// errors). Faults can be set while a run is in progress; all methods are safe
// for concurrent use, since the worker calls from its own goroutines.
//
// A request that offers no tools is a summarisation call in our design: it is
// recorded apart (summaryRequests) and answered with summaryText, without
// consuming the script, so that a summary in the middle of a run does not
// shift the agent's scripted answers.
type modelStub struct {
	srv *httptest.Server

	mu sync.Mutex
	// answers are assistant message objects in the wire format, e.g.
	// {"role":"assistant","content":null,"tool_calls":[...]}; agent call N
	// that the stub accepts gets answers[N-1]. Refused requests consume
	// nothing, so a retried call gets the answer its first attempt would
	// have had.
	answers []string
	next    int
	// finalText is the content answered once the script is used up.
	finalText string
	// summaryText answers summarisation calls.
	summaryText string

	agentReqs   []stubRequest
	summaryReqs []stubRequest

	// Faults, checked in this order: failNext, failUntil, contextLimit.
	nextFails      int
	nextStatus     int
	nextBody       string
	downUntil      time.Time
	downStatus     int
	downRetryAfter string
	maxBody        int
	// streamEvery, when set, streams a text answer to a request that asks
	// for a stream, a word at a time, this long apart (streamSlowly).
	streamEvery time.Duration
}

// stubRequest is one request the stub received and what it answered.
type stubRequest struct {
	body   map[string]any // the decoded JSON request
	header http.Header    // its headers (Authorization carries the API key)
	size   int            // the body's length in bytes
	status int            // the HTTP status of the answer
	at     time.Time      // when it arrived
}

// newModelStub serves a modelStub on loopback until the test ends. answers
// are its script (see modelStub.answers).
func newModelStub(t testing.TB, answers ...string) *modelStub {
	t.Helper()
	s := &modelStub{answers: answers, finalText: stubFinalText, summaryText: stubSummaryText}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

// baseURL is what OPENAI_BASE_URL (or openai.Options.BaseURL) should be set to.
func (s *modelStub) baseURL() string { return s.srv.URL + "/v1" }

// failUntil answers every request with status and an OpenAI error body until
// t, with a Retry-After header when retryAfter is not empty: an outage or a
// rate limit. A zero t ends the outage at once.
func (s *modelStub) failUntil(t time.Time, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downUntil, s.downStatus, s.downRetryAfter = t, status, retryAfter
}

// contextLimit refuses a request whose body is longer than bytes as OpenAI
// refuses one that does not fit the model's context window: 400 with the
// code context_length_exceeded. Zero or less lifts the limit.
func (s *modelStub) contextLimit(bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxBody = bytes
}

// failNext answers the next n requests, of any kind, with status and body;
// an empty body becomes an OpenAI error body.
func (s *modelStub) failNext(n int, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFails, s.nextStatus, s.nextBody = n, status, body
}

// setFinalText changes what agent calls get once the script is used up.
func (s *modelStub) setFinalText(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finalText = text
}

// setSummaryText changes what summarisation calls are answered.
func (s *modelStub) setSummaryText(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summaryText = text
}

// streamSlowly streams the text answers of the requests that ask for a
// stream ("stream": true), a word every every, as Server-Sent Events, until
// the whole text is sent or the client goes; zero answers in one piece.
func (s *modelStub) streamSlowly(every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streamEvery = every
}

// requests returns the agent's calls (the requests that offered tools) in
// the order they arrived, refused ones included.
func (s *modelStub) requests() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRequest(nil), s.agentReqs...)
}

// summaryRequests returns the summarisation calls (the requests that
// offered no tools) in the order they arrived, refused ones included.
func (s *modelStub) summaryRequests() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRequest(nil), s.summaryReqs...)
}

func (s *modelStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeOpenAIError(w, http.StatusNotFound, nil,
			fmt.Sprintf("modelStub serves POST /v1/chat/completions, not %s %s", r.Method, r.URL.Path), "invalid_request_error", "")
		return
	}
	data, err := io.ReadAll(r.Body)
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(data, &body)
	}
	if err != nil {
		writeOpenAIError(w, http.StatusBadRequest, nil, "modelStub: request body is not a JSON object: "+err.Error(), "invalid_request_error", "")
		return
	}
	tools, _ := body["tools"].([]any)
	summary := len(tools) == 0

	// Decide and record under the lock, so that concurrent requests and
	// fault changes see one order of events; answer outside it.
	s.mu.Lock()
	rec := stubRequest{body: body, header: r.Header.Clone(), size: len(data), at: time.Now()}
	var answer func()
	switch now := time.Now(); {
	case s.nextFails > 0:
		s.nextFails--
		status, text := s.nextStatus, s.nextBody
		rec.status = status
		answer = func() {
			if text == "" {
				writeOpenAIError(w, status, nil, "modelStub: failNext: "+http.StatusText(status), "server_error", "")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, text)
		}
	case now.Before(s.downUntil):
		status, until, retry := s.downStatus, s.downUntil, s.downRetryAfter
		rec.status = status
		answer = func() {
			h := http.Header{}
			if retry != "" {
				h.Set("Retry-After", retry)
			}
			writeOpenAIError(w, status, h,
				fmt.Sprintf("modelStub: %s until %s", http.StatusText(status), until.Format(time.RFC3339Nano)), "server_error", "")
		}
	case s.maxBody > 0 && len(data) > s.maxBody:
		rec.status = http.StatusBadRequest
		// Tokens are counted as four bytes, roughly what English text takes.
		msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.",
			s.maxBody/4, (len(data)+3)/4)
		answer = func() {
			writeOpenAIError(w, http.StatusBadRequest, nil, msg, "invalid_request_error", "context_length_exceeded")
		}
	default:
		rec.status = http.StatusOK
		var msg string
		switch {
		case summary:
			msg = assistantText(s.summaryText)
		case s.next < len(s.answers):
			msg = s.answers[s.next]
			s.next++
		default:
			msg = assistantText(s.finalText)
		}
		n := len(s.agentReqs) + len(s.summaryReqs) + 1
		answer = func() { writeCompletion(w, n, msg, len(data)) }
		var m struct {
			Content   string            `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		}
		if stream, _ := body["stream"].(bool); stream && s.streamEvery > 0 && json.Unmarshal([]byte(msg), &m) == nil && len(m.ToolCalls) == 0 {
			every := s.streamEvery
			answer = func() { writeStreamed(w, r, n, m.Content, every) }
		}
	}
	if summary {
		s.summaryReqs = append(s.summaryReqs, rec)
	} else {
		s.agentReqs = append(s.agentReqs, rec)
	}
	s.mu.Unlock()
	answer()
}

// assistantText is a final assistant message with text content.
func assistantText(text string) string {
	b, _ := json.Marshal(map[string]any{"role": "assistant", "content": text})
	return string(b)
}

// writeCompletion answers with a chat.completion holding message. Usage is
// counted as four bytes a token, so that tests can see usage grow.
func writeCompletion(w http.ResponseWriter, n int, message string, size int) {
	finish := "stop"
	var m struct {
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	if json.Unmarshal([]byte(message), &m) == nil && len(m.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-stub-%d","object":"chat.completion","created":1,"model":"stub",`+
		`"choices":[{"index":0,"message":%s,"finish_reason":%q}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}}`,
		n, message, finish, (size+3)/4, (size+3)/4+1)
}

// writeStreamed answers with text as chat.completion.chunk events, a word
// every every, and stops when the client goes.
func writeStreamed(w http.ResponseWriter, r *http.Request, n int, text string, every time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-stub-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "stub",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	for i, word := range strings.SplitAfter(text, " ") {
		if i > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
			}
		}
		send(map[string]any{"role": "assistant", "content": word}, nil)
	}
	send(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// writeOpenAIError answers with OpenAI's error shape, which the SDK decodes.
func writeOpenAIError(w http.ResponseWriter, status int, h http.Header, message, typ, code string) {
	for k, v := range h {
		w.Header()[k] = v
	}
	e := map[string]any{"message": message, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// TestModelStub checks the stub with the client the worker uses, so that
// what end-to-end tests provoke is what a real server would: it needs no
// Temporal server and runs with -short.
func TestModelStub(t *testing.T) {
	tools := []model.ToolSpec{{Name: "write_todos", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}}
	user := []model.Message{{Role: model.RoleUser, Content: "hi"}}
	newClient := func(t *testing.T, s *modelStub) *openai.Client {
		t.Helper()
		c, err := openai.New(openai.Options{BaseURL: s.baseURL(), APIKey: "sk-test"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// call makes one agent call (with tools) or, with summary, one
	// summarisation call (without).
	call := func(c *openai.Client, msgs []model.Message, summary bool) (model.Response, error) {
		req := model.Request{Model: "stub-model", Messages: msgs, Tools: tools, Call: 1}
		if summary {
			req.Tools = nil
		}
		return c.Complete(context.Background(), req)
	}
	wantModelError := func(t *testing.T, err error) *model.Error {
		t.Helper()
		var me *model.Error
		if !errors.As(err, &me) {
			t.Fatalf("error = %v, want a *model.Error", err)
		}
		return me
	}

	t.Run("scripted answers, then the final text", func(t *testing.T) {
		s := newModelStub(t,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"write_todos","arguments":"{}"}}]}`,
			`{"role":"assistant","content":"Scripted."}`)
		s.setFinalText("All done.")
		c := newClient(t, s)
		var got []string
		for range 3 {
			resp, err := call(c, user, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) > 0 {
				got = append(got, "tool:"+resp.ToolCalls[0].Name)
			} else {
				got = append(got, resp.Content)
			}
		}
		if want := []string{"tool:write_todos", "Scripted.", "All done."}; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("answers %q, want %q", got, want)
		}
		reqs := s.requests()
		if len(reqs) != 3 || reqs[0].body["model"] != "stub-model" || reqs[0].size == 0 || reqs[0].status != http.StatusOK {
			t.Errorf("recorded %+v, want 3 answered requests for stub-model", reqs)
		}
	})

	t.Run("summaries are answered apart", func(t *testing.T) {
		s := newModelStub(t, `{"role":"assistant","content":"Scripted."}`)
		s.setSummaryText("The story so far.")
		c := newClient(t, s)
		resp, err := call(c, user, true)
		if err != nil || resp.Content != "The story so far." {
			t.Fatalf("summary call = %q, %v; want the summary text", resp.Content, err)
		}
		// The script was not consumed by the summary.
		if resp, err := call(c, user, false); err != nil || resp.Content != "Scripted." {
			t.Fatalf("agent call = %q, %v; want the first scripted answer", resp.Content, err)
		}
		if n, m := len(s.summaryRequests()), len(s.requests()); n != 1 || m != 1 {
			t.Errorf("%d summary and %d agent requests recorded, want 1 and 1", n, m)
		}
	})

	t.Run("503 window with Retry-After", func(t *testing.T) {
		s := newModelStub(t, `{"role":"assistant","content":"After the outage."}`)
		c := newClient(t, s)
		until := time.Now().Add(200 * time.Millisecond)
		s.failUntil(until, http.StatusServiceUnavailable, "2")
		for range 2 {
			_, err := call(c, user, false)
			me := wantModelError(t, err)
			if !me.Retryable || me.StatusCode != 503 || me.RetryAfter != 2*time.Second {
				t.Errorf("error = %+v, want a retryable 503 asking for 2s", me)
			}
		}
		time.Sleep(time.Until(until))
		// The refused calls consumed nothing: the first answer comes now.
		if resp, err := call(c, user, false); err != nil || resp.Content != "After the outage." {
			t.Fatalf("after the window: %q, %v", resp.Content, err)
		}
		var statuses []int
		for _, r := range s.requests() {
			statuses = append(statuses, r.status)
		}
		if fmt.Sprint(statuses) != "[503 503 200]" {
			t.Errorf("statuses %v, want [503 503 200]", statuses)
		}
	})

	t.Run("context limit", func(t *testing.T) {
		s := newModelStub(t)
		c := newClient(t, s)
		s.contextLimit(2000)
		long := []model.Message{{Role: model.RoleUser, Content: strings.Repeat("word ", 500)}}
		for _, summary := range []bool{false, true} {
			_, err := call(c, long, summary)
			me := wantModelError(t, err)
			if !me.ContextOverflow || me.Retryable || me.StatusCode != 400 {
				t.Errorf("summary=%v: error = %+v, want a non-retryable 400 context overflow", summary, me)
			}
			if !strings.Contains(me.Message, "maximum context length is 500 tokens") {
				t.Errorf("message %q does not give the limit", me.Message)
			}
		}
		if _, err := call(c, user, false); err != nil {
			t.Errorf("a short request: %v", err)
		}
		s.contextLimit(0)
		if _, err := call(c, long, false); err != nil {
			t.Errorf("after lifting the limit: %v", err)
		}
		if r := s.requests()[0]; r.size <= 2000 || r.status != 400 {
			t.Errorf("first request recorded with size %d, status %d; want over 2000, 400", r.size, r.status)
		}
	})

	t.Run("failNext", func(t *testing.T) {
		s := newModelStub(t, `{"role":"assistant","content":"Finally."}`)
		c := newClient(t, s)
		s.failNext(2, http.StatusInternalServerError, `{"error":{"message":"boom","type":"server_error"}}`)
		for i := range 2 {
			_, err := call(c, user, i == 1)
			if me := wantModelError(t, err); !me.Retryable || me.StatusCode != 500 || !strings.Contains(me.Message, "boom") {
				t.Errorf("call %d: error = %+v, want a retryable 500 saying boom", i+1, me)
			}
		}
		if resp, err := call(c, user, false); err != nil || resp.Content != "Finally." {
			t.Fatalf("third call = %q, %v", resp.Content, err)
		}
	})

	// Faults change while calls are in flight, as they will during a run;
	// run with -race.
	t.Run("concurrent use", func(t *testing.T) {
		s := newModelStub(t)
		c := newClient(t, s)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for range 5 {
					_, _ = call(c, user, i%2 == 0)
				}
			})
		}
		wg.Go(func() {
			for i := range 20 {
				s.failNext(1, http.StatusBadGateway, "")
				s.failUntil(time.Now().Add(time.Millisecond), http.StatusTooManyRequests, "1")
				s.contextLimit(i * 10)
				s.setSummaryText(fmt.Sprint(i))
			}
		})
		wg.Wait()
		if n := len(s.requests()) + len(s.summaryRequests()); n != 40 {
			t.Errorf("%d requests recorded, want 40", n)
		}
	})
}
