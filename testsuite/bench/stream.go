package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model/openai"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/workflows"
)

// The stream phase measures what a user of `starter chat` waits for: the
// time from a model's first token to a client that watches the session.
//
// The model is a real OpenAI-compatible server in this process, reached by
// the worker process through the openai-go client (OPENAI_BASE_URL), that
// streams its reply in pieces a fixed interval apart and notes when it
// flushed each. The watcher polls DescribeWorkflowExecution, as the chat
// client does, and notes when each piece first shows in the running
// CallModel's heartbeat details: both clocks are this process's. The
// baseline, measured in the same run, is that poll's own round trip.

const (
	streamModel  = "openai:bench-stream"
	streamPieces = 8
	streamGap    = 200 * time.Millisecond
	streamPoll   = 10 * time.Millisecond
)

// streamServer is the OpenAI-compatible model of the stream phase.
type streamServer struct {
	srv  *http.Server
	addr string

	mu      sync.Mutex
	flushed map[string]time.Time // piece text → when it was flushed
}

// startStreamServer starts the model and points this process's
// environment at it, which the worker processes started after inherit.
func startStreamServer() (*streamServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &streamServer{addr: ln.Addr().String(), flushed: map[string]time.Time{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = s.srv.Serve(ln) }()
	os.Setenv(openai.EnvBaseURL, "http://"+s.addr+"/v1")
	os.Setenv(openai.EnvAPIKey, "bench")
	return s, nil
}

func (s *streamServer) close() { _ = s.srv.Close() }

// piece is the text of piece i of a reply to message; unique, so that the
// watcher knows which piece it sees.
func piece(message string, i int) string { return fmt.Sprintf("[%s: piece %d] ", message, i) }

func (s *streamServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	// The reply names the last user message, so that each turn's pieces
	// differ.
	last := "?"
	for _, m := range req.Messages {
		if text, ok := m.Content.(string); ok && m.Role == "user" {
			last = text
		}
	}
	var pieces []string
	for i := range streamPieces {
		pieces = append(pieces, piece(last, i))
	}
	chunk := func(body string) string {
		return `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1700000000,"model":"bench-stream",` + body + "}\n\n"
	}
	text := func(t string) string {
		b, _ := json.Marshal(t)
		return chunk(`"choices":[{"index":0,"delta":{"content":` + string(b) + `}}]`)
	}
	if !req.Stream {
		b, _ := json.Marshal(strings.Join(pieces, ""))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-b","object":"chat.completion","created":1700000000,"model":"bench-stream","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	for i, p := range pieces {
		if i > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(streamGap):
			}
		}
		fmt.Fprint(w, text(p))
		if fl != nil {
			fl.Flush()
		}
		s.mu.Lock()
		s.flushed[p] = time.Now()
		s.mu.Unlock()
	}
	fmt.Fprint(w, chunk(`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]`))
	fmt.Fprint(w, chunk(`"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}`))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *streamServer) flushedAt(p string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.flushed[p]
	return t, ok
}

// measureStream runs turns turns of one session on the streaming model and
// prints how long each piece took from the model to the watcher.
func (e *env) measureStream(ctx context.Context, m *streamServer, turns int) error {
	s, err := e.startSession(ctx, workflows.AgentInput{Model: streamModel, IdleTimeoutS: 600})
	if err != nil {
		return err
	}
	defer s.end(ctx)
	dc := converter.GetDefaultDataConverter()
	var first, all, rtt []time.Duration
	for turn := 1; turn <= turns; turn++ {
		msg := fmt.Sprintf("turn %d", turn)
		done := make(chan error, 1)
		go func() { done <- s.turn(ctx, msg) }()
		seen := map[int]time.Time{}
	watch:
		for {
			select {
			case err := <-done:
				if err != nil {
					return err
				}
				break watch
			case <-time.After(streamPoll):
			}
			start := time.Now()
			d, err := e.c.DescribeWorkflowExecution(ctx, s.id, "")
			if err != nil {
				return fmt.Errorf("describe %s: %w", s.id, err)
			}
			now := time.Now()
			rtt = append(rtt, now.Sub(start))
			for _, pa := range d.GetPendingActivities() {
				var rs activities.ReplyStream
				if pa.GetActivityType().GetName() != activities.CallModelName || pa.GetHeartbeatDetails() == nil ||
					dc.FromPayloads(pa.GetHeartbeatDetails(), &rs) != nil {
					continue
				}
				for i := range streamPieces {
					if _, ok := seen[i]; !ok && strings.Contains(rs.Text, piece(msg, i)) {
						// Halfway through the poll: the piece arrived
						// at the server at some point during it.
						seen[i] = start.Add(now.Sub(start) / 2)
					}
				}
			}
		}
		// The last piece ends the call, and shows as the message, not the
		// stream; the pieces before it are the stream's.
		for i := range streamPieces - 1 {
			at, ok := seen[i]
			sent, sok := m.flushedAt(piece(msg, i))
			if !ok || !sok {
				return fmt.Errorf("turn %d: piece %d was never seen streaming (flushed: %v)", turn, i, sok)
			}
			all = append(all, at.Sub(sent))
			if i == 0 {
				first = append(first, at.Sub(sent))
			}
		}
	}
	fmt.Fprintf(e.out, "\n| | median | max |\n|---|---|---|\n")
	fmt.Fprintf(e.out, "| first token: flushed by the model → seen by the watcher | %s | %s |\n", ms(median(first)), ms(slices.Max(first)))
	fmt.Fprintf(e.out, "| every piece but the last | %s | %s |\n", ms(median(all)), ms(slices.Max(all)))
	fmt.Fprintf(e.out, "| baseline: one DescribeWorkflowExecution round trip | %s | %s |\n", ms(median(rtt)), ms(slices.Max(rtt)))
	fmt.Fprintf(e.out, "\nFirst token over the poll's round trip: %.1f (the worker sends heartbeats at most every %v: agentworker.StreamInterval).\n",
		float64(median(first))/float64(max(median(rtt), time.Microsecond)), agentworker.StreamInterval)
	return nil
}
