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
	"sync/atomic"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model/openai"
)

// The stream phase measures what streaming a reply costs and what a user
// of `starter chat` waits for: the billable actions (the server's `action`
// counter) of a turn whose one model call streams its reply for
// streamLong, with nobody watching and with a client watching, of a turn
// whose reply comes in one piece, and of a chat turn of two model calls
// (write_todos, then a one-piece reply); and the time from the model's
// first token to the watching client.
//
// The model is a real OpenAI-compatible server in this process, reached by
// the worker process through the openai-go client (OPENAI_BASE_URL), that
// streams its reply in pieces streamGap apart and notes when it flushed
// each. The watcher is client.Session.Watch at the chat's interval, as
// `starter chat` watches; it notes when each piece first shows in a
// StreamChanged: both clocks are this process's. The baseline, measured in
// the same run, is one DescribeWorkflowExecution round trip.

const (
	streamModel = "openai:bench-stream"
	streamGap   = 200 * time.Millisecond
	streamLong  = 10 * time.Second
	// streamSettle is how long the actions are left to settle before they
	// are read, before a turn and after its reply: the server reports its
	// counters once a second (tally), the workflow task that answered is
	// counted once the server has handled its completion, and a watcher's
	// last look follows it.
	streamSettle = 2500 * time.Millisecond
)

// streamServer is the OpenAI-compatible model of the stream phase.
type streamServer struct {
	srv  *http.Server
	addr string

	pieces atomic.Int32 // how many pieces the next replies have
	calls  atomic.Int64 // tool calls made, for their ids
	// twoCalls makes a turn two model calls: the first answers the user's
	// message with a write_todos call (a tool of the workflow's own, so
	// that the turn runs no other activity), the second the tool's result
	// with the reply.
	twoCalls atomic.Bool

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
	s.pieces.Store(1)
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
	// Only the turn's own message ("two N") gets the write_todos call, and
	// the item it writes is done: a reminder the workflow adds as a user
	// message must not start the call again, nor an open item make the
	// finalization guard ask for more calls (each a model call of its own).
	if end := len(req.Messages) - 1; s.twoCalls.Load() && end >= 0 && req.Messages[end].Role == "user" && req.Messages[end].Content == last && strings.HasPrefix(last, "two ") {
		s.writeTodos(w, req.Stream, last)
		return
	}
	var pieces []string
	for i := range int(s.pieces.Load()) {
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

// writeTodos answers with one write_todos call whose item names message,
// so that each turn changes the list the run list shows.
func (s *streamServer) writeTodos(w http.ResponseWriter, stream bool, message string) {
	args, _ := json.Marshal(map[string]any{"todos": []map[string]string{{"content": "answer " + message, "status": "completed"}}})
	call := fmt.Sprintf(`{"index":0,"id":"call_%d","type":"function","function":{"name":"write_todos","arguments":%q}}`, s.calls.Add(1), args)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-b","object":"chat.completion","created":1700000000,"model":"bench-stream","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, call)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(body string) {
		fmt.Fprint(w, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1700000000,"model":"bench-stream",`+body+"}\n\n")
	}
	chunk(`"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[` + call + `]}}]`)
	chunk(`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`)
	chunk(`"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}`)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *streamServer) flushedAt(p string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.flushed[p]
	return t, ok
}

// streamTurn is what one turn of the stream phase measured.
type streamTurn struct {
	actions       actions
	first, pieces []time.Duration // watched turns: model → watcher
}

// measureStream runs reps rounds of one session on the streaming model: a
// turn whose reply streams for streamLong unwatched, the same watched, and
// a turn whose reply comes in one piece, unwatched, for reference. It
// prints the actions each took and how long the pieces took to the
// watcher.
func (e *env) measureStream(ctx context.Context, m *streamServer, reps int) error {
	s, err := e.startSession(ctx, api.AgentInput{Model: streamModel, IdleTimeoutS: 600})
	if err != nil {
		return err
	}
	defer s.end(ctx)
	long := int(streamLong/streamGap) + 1
	var unwatched, watched, instant, two []actions
	var first, all []time.Duration
	for rep := 1; rep <= reps; rep++ {
		for _, kind := range []string{"unwatched", "watched", "instant", "two"} {
			pieces, watch := long, kind == "watched"
			if kind == "instant" || kind == "two" {
				pieces = 1
			}
			m.pieces.Store(int32(pieces))
			m.twoCalls.Store(kind == "two")
			t, err := e.streamTurn(ctx, m, s, fmt.Sprintf("%s %d", kind, rep), pieces, watch)
			if err != nil {
				return err
			}
			switch kind {
			case "unwatched":
				unwatched = append(unwatched, t.actions)
			case "watched":
				watched = append(watched, t.actions)
				first, all = append(first, t.first...), append(all, t.pieces...)
			case "two":
				two = append(two, t.actions)
			default:
				instant = append(instant, t.actions)
			}
		}
	}
	var rtt []time.Duration
	for range 20 {
		start := time.Now()
		if _, err := e.c.DescribeWorkflowExecution(ctx, s.id, ""); err != nil {
			return fmt.Errorf("describe %s: %w", s.id, err)
		}
		rtt = append(rtt, time.Since(start))
	}

	fmt.Fprintf(e.out, "\nBillable actions per turn (the server's `action` counter, by action_type; medians of %d turns):\n\n", reps)
	fmt.Fprintf(e.out, "| action_type | %v reply, unwatched | %v reply, watched | one-piece reply, unwatched | two model calls (write_todos, then a one-piece reply) |\n|---|---|---|---|---|\n", streamLong, streamLong)
	all3 := [][]actions{unwatched, watched, instant, two}
	for _, typ := range types(all3...) {
		fmt.Fprintf(e.out, "| %s |", typ)
		for _, as := range all3 {
			fmt.Fprintf(e.out, " %g |", medianOf(as, func(a actions) float64 { return a[typ] }))
		}
		fmt.Fprintln(e.out)
	}
	fmt.Fprint(e.out, "| **the model calls' own** (their scheduling, heartbeats, retries) |")
	for _, as := range all3 {
		fmt.Fprintf(e.out, " **%g** |", medianOf(as, actions.modelCall))
	}
	fmt.Fprint(e.out, "\n| the whole turn |")
	for _, as := range all3 {
		fmt.Fprintf(e.out, " %g |", medianOf(as, actions.total))
	}
	fmt.Fprintf(e.out, "\n\nThe watcher: client.Session.Watch every %v (`starter chat`'s interval).\n\n", client.DefaultWatchInterval)
	fmt.Fprintf(e.out, "| %d watched turns, %d pieces each | median | max |\n|---|---|---|\n", reps, long)
	fmt.Fprintf(e.out, "| first token: flushed by the model → seen by the watcher | %s | %s |\n", ms(median(first)), ms(slices.Max(first)))
	fmt.Fprintf(e.out, "| every piece but the last | %s | %s |\n", ms(median(all)), ms(slices.Max(all)))
	fmt.Fprintf(e.out, "| baseline: one DescribeWorkflowExecution round trip | %s | %s |\n", ms(median(rtt)), ms(slices.Max(rtt)))
	return nil
}

// streamTurn sends msg and waits for its reply of pieces pieces; with
// watch, a client watches the session meanwhile. The actions are counted
// from streamSettle after the watcher's first look to streamSettle after
// the reply.
func (e *env) streamTurn(ctx context.Context, m *streamServer, s *session, msg string, pieces int, watch bool) (streamTurn, error) {
	var t streamTurn
	type sighting struct {
		text string
		at   time.Time
	}
	var seen []sighting
	stopWatch := func() {}
	if watch {
		wctx, cancel := context.WithCancel(ctx)
		evs := client.New(e.c, client.Options{}).Session(s.id).Watch(wctx, client.DefaultWatchInterval)
		ready := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			once := sync.OnceFunc(func() { close(ready) })
			for ev := range evs {
				switch ev := ev.(type) {
				case client.StreamChanged:
					seen = append(seen, sighting{ev.Text, time.Now()})
				case client.Looked:
					once()
				}
			}
			once()
		}()
		select {
		case <-ready:
		case <-ctx.Done():
			cancel()
			return t, ctx.Err()
		}
		stopWatch = func() { cancel(); <-done }
	}
	defer func() { stopWatch() }() // the one set last: a no-op once stopped below
	time.Sleep(streamSettle)
	before, err := scrapeActions(ctx, e.srv.MetricsAddress())
	if err != nil {
		return t, err
	}
	if err := s.turn(ctx, msg); err != nil {
		return t, err
	}
	time.Sleep(streamSettle)
	stopWatch()
	stopWatch = func() {}
	after, err := scrapeActions(ctx, e.srv.MetricsAddress())
	if err != nil {
		return t, err
	}
	t.actions = after.minus(before)
	if !watch {
		return t, nil
	}
	// The last piece ends the call, and shows as the message, not the
	// stream; the pieces before it are the stream's.
	for i := range pieces - 1 {
		sent, ok := m.flushedAt(piece(msg, i))
		if !ok {
			return t, fmt.Errorf("%s: piece %d was never flushed", msg, i)
		}
		at := -1
		for j, sg := range seen {
			if strings.Contains(sg.text, piece(msg, i)) {
				at = j
				break
			}
		}
		if at < 0 {
			return t, fmt.Errorf("%s: piece %d was never seen streaming", msg, i)
		}
		t.pieces = append(t.pieces, seen[at].at.Sub(sent))
		if i == 0 {
			t.first = append(t.first, seen[at].at.Sub(sent))
		}
	}
	return t, nil
}
