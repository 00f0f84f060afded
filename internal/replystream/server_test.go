package replystream

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/internal/testcert"
	"github.com/todoflow/todoflow/worker/codec"
)

// follower follows a stream in the background and keeps what it got.
type follower struct {
	mu   sync.Mutex
	a    Assembled
	err  error
	done chan struct{}
}

func follow(t *testing.T, s *Server, k Key, o ...Options) *follower {
	t.Helper()
	dc := s.dc
	if len(o) > 0 {
		dc = o[0].DataConverter
	}
	f := &follower{done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	go func() {
		defer close(f.done)
		err := Follow(ctx, s.URL(), k, dc, func(fr Frame) {
			f.mu.Lock()
			f.a.Apply(fr)
			f.mu.Unlock()
		})
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
	}()
	return f
}

func (f *follower) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.a.Text
}

// waitText waits until the follower has want.
func (f *follower) waitText(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.text() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the follower has %q, want %q", f.text(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *follower) wait(t *testing.T) (Assembled, error) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.a, f.err
}

func listen(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var call = Key{WorkflowID: "chat/researcher", RunID: "0b7f3c52-9a1e-4d8e-8f6a-2c1d5e4b3a21", ActivityID: "7"}

// A watcher that comes after the call has begun gets the reply so far in
// its first frame, then the rest as it is written, then the end.
func TestLateWatcherGetsTheReplySoFar(t *testing.T) {
	s := listen(t, Options{})
	r := s.Open(call, 4)
	r.Add("The fix ")
	r.Add("is in ")
	f := follow(t, s, call)
	f.waitText(t, "The fix is in ")
	r.Add("auth.go.")
	f.waitText(t, "The fix is in auth.go.")
	r.End()
	a, err := f.wait(t)
	if err != nil || !a.End || a.Call != 4 || a.Text != "The fix is in auth.go." {
		t.Errorf("the stream ended with %+v, %v; want the whole reply of call 4, ended", a, err)
	}
	// Two watchers at once, one of them late, read the same text.
	k2 := Key{WorkflowID: "w", RunID: "r", ActivityID: "1"}
	r2 := s.Open(k2, 1)
	r2.Add("long ")
	first := follow(t, s, k2)
	first.waitText(t, "long ")
	r2.Add(strings.Repeat("long ", MaxBytes/2-1))
	second := follow(t, s, k2)
	for !strings.HasSuffix(second.text(), "long ") {
		time.Sleep(5 * time.Millisecond)
	}
	r2.Add("end")
	r2.End()
	a1, err1 := first.wait(t)
	a2, err2 := second.wait(t)
	if err1 != nil || err2 != nil || a1 != a2 || !strings.HasSuffix(a1.Text, "long end") || a1.Cut+len(a1.Text) != 5*(MaxBytes/2)+3 {
		t.Errorf("two watchers: %d bytes cut %d (%v) and %d bytes cut %d (%v); want the same tail of the reply",
			len(a1.Text), a1.Cut, err1, len(a2.Text), a2.Cut, err2)
	}
}

// A caller that does not name a running call exactly gets nothing: a
// wrong run id, another activity, an ended call, another path or method.
func TestStreamRefused(t *testing.T) {
	s := listen(t, Options{})
	r := s.Open(call, 1)
	r.Add("secret plans")
	for name, k := range map[string]Key{
		"wrong run id":      {WorkflowID: call.WorkflowID, RunID: "0b7f3c52-9a1e-4d8e-8f6a-2c1d5e4b3a22", ActivityID: call.ActivityID},
		"no run id":         {WorkflowID: call.WorkflowID, ActivityID: call.ActivityID},
		"another activity":  {WorkflowID: call.WorkflowID, RunID: call.RunID, ActivityID: "8"},
		"another workflow":  {WorkflowID: "chat", RunID: call.RunID, ActivityID: call.ActivityID},
		"the run id's case": {WorkflowID: call.WorkflowID, RunID: strings.ToUpper(call.RunID), ActivityID: call.ActivityID},
	} {
		_, err := follow(t, s, k).wait(t)
		if !errors.Is(err, ErrEnded) {
			t.Errorf("%s: %v; want ErrEnded (404)", name, err)
		}
	}
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, Path + "?workflow_id=chat%2Fresearcher&run_id=" + call.RunID + "&activity_id=7", http.StatusMethodNotAllowed},
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/v1/reply/x", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tt.method, s.URL()+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %s, want %d", tt.method, tt.path, resp.Status, tt.status)
		}
	}
	r.End()
	if _, err := follow(t, s, call).wait(t); !errors.Is(err, ErrEnded) {
		t.Errorf("an ended call: %v; want ErrEnded (404)", err)
	}
}

// With a sealing data converter, the frames are sealed: a follower with
// the key reads them, one without reads nothing.
func TestStreamSealed(t *testing.T) {
	sealer, err := codec.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	s := listen(t, Options{DataConverter: sealer.DataConverter()})
	r := s.Open(call, 1)
	r.Add("secret plans")
	withKey := follow(t, s, call)
	withKey.waitText(t, "secret plans")
	_, err = follow(t, s, call, Options{}).wait(t) // the SDK's default converter
	if err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("a follower without the key: %v; want a frame it cannot read", err)
	}
	r.End()
}

// The server serves at most MaxWatchers streams at once, and Close ends
// the ones it serves.
func TestStreamBounds(t *testing.T) {
	s := listen(t, Options{MaxWatchers: 1})
	r := s.Open(call, 1)
	r.Add("x")
	first := follow(t, s, call)
	first.waitText(t, "x")
	_, err := follow(t, s, call).wait(t)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a second watcher: %v; want 503", err)
	}
	_ = s.Close()
	if _, err := first.wait(t); err == nil {
		t.Error("a stream cut by Close ended without an error; want one (the call has not ended)")
	}
}

// One call's watchers take at most MaxPerCall of the server's slots (issue
// 36: one caller who knew a run id opened 64 streams and took them all):
// the next watcher of that call is refused with 503, and a watcher of
// another call is still served.
func TestStreamPerCallCap(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		perCall int
	}{
		{"the default", Options{}, DefaultMaxPerCall},
		{"the operator's", Options{MaxPerCall: 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := listen(t, tt.opts)
			r := s.Open(call, 1)
			r.Add("x")
			for range tt.perCall {
				follow(t, s, call).waitText(t, "x")
			}
			if _, err := follow(t, s, call).wait(t); err == nil || !strings.Contains(err.Error(), "503") {
				t.Errorf("watcher %d of one call: %v; want 503", tt.perCall+1, err)
			}
			other := Key{WorkflowID: "other", RunID: "r", ActivityID: "1"}
			o := s.Open(other, 1)
			o.Add("y")
			follow(t, s, other).waitText(t, "y")
			r.End()
			o.End()
		})
	}
}

// With a certificate, the server serves HTTPS: a follower that trusts the
// certificate (TODOFLOW_STREAM_CA) reads the stream, one that does not and
// a plaintext one read nothing.
func TestStreamTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := testcert.Write(t, dir)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s := listen(t, Options{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %q, want https://127.0.0.1:…", s.URL())
	}
	r := s.Open(call, 1)
	r.Add("secret plans")
	defer r.End()
	tests := []struct {
		name    string
		ca      string // TODOFLOW_STREAM_CA
		base    string
		wantErr string // "": reads the stream
	}{
		{"a follower that trusts the certificate", certFile, s.URL(), ""},
		{"a follower that does not", "", s.URL(), "certificate"},
		{"a plaintext follower", certFile, "http://" + strings.TrimPrefix(s.URL(), "https://"), "400 Bad Request"},
		{"a follower whose CA file is not one", keyFile, s.URL(), "holds no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvCA, tt.ca)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan string, 1)
			err := Follow(ctx, tt.base, call, nil, func(f Frame) {
				got <- f.Text
				cancel() // one frame is enough
			})
			if tt.wantErr == "" {
				if text := <-got; text != "secret plans" {
					t.Errorf("read %q, want the reply", text)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Follow: %v; want an error saying %q", err, tt.wantErr)
			}
		})
	}
}

// deadlineWriter is a ResponseWriter that records the write deadlines set
// on it, as http.ResponseController sets them.
type deadlineWriter struct {
	header    http.Header
	deadlines []time.Time
	writes    int
}

func (w *deadlineWriter) Header() http.Header { return w.header }
func (w *deadlineWriter) WriteHeader(int)     {}
func (w *deadlineWriter) Flush()              {}
func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.writes++
	return len(p), nil
}
func (w *deadlineWriter) SetWriteDeadline(t time.Time) error {
	w.deadlines = append(w.deadlines, t)
	return nil
}

// A slow or silent caller holds no stream for ever: the server times out a
// request's headers and an idle connection, and each frame's write must be
// taken within writeTimeout.
func TestStreamServerTimeouts(t *testing.T) {
	s := NewServer(Options{})
	tests := []struct {
		name      string
		got, want time.Duration
	}{
		{"request headers", s.http.ReadHeaderTimeout, headerTimeout},
		{"an idle connection", s.http.IdleTimeout, idleTimeout},
	}
	for _, tt := range tests {
		if tt.got != tt.want || tt.got <= 0 {
			t.Errorf("%s: timeout %s, want %s", tt.name, tt.got, tt.want)
		}
	}
	r := NewReply(1)
	r.Add("some text")
	r.End()
	w := &deadlineWriter{header: http.Header{}}
	before := time.Now()
	if err := s.stream(context.Background(), w, r); err != nil {
		t.Fatal(err)
	}
	if w.writes == 0 || len(w.deadlines) != w.writes {
		t.Fatalf("%d writes, %d deadlines; want a deadline before each write", w.writes, len(w.deadlines))
	}
	for i, d := range w.deadlines {
		if d.Before(before.Add(writeTimeout)) || d.After(time.Now().Add(writeTimeout)) {
			t.Errorf("write %d: deadline %s after the start, want %s", i+1, d.Sub(before), writeTimeout)
		}
	}
}
