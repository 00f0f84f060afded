package replystream

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Key names a running model call: the workflow and the run it belongs to,
// and its activity id.
type Key struct {
	WorkflowID string
	RunID      string
	ActivityID string
}

// Path is where a Server serves its streams.
const Path = "/v1/reply"

// DefaultMaxWatchers bounds the streams a Server serves at once unless
// Options say otherwise.
const DefaultMaxWatchers = 64

// DefaultMaxPerCall bounds the streams of one call a Server serves at once
// unless Options say otherwise: a session has a few watchers (a chat, a
// `starter watch`), and one caller who knows a run id must not take every
// slot of the server from the watchers of the other sessions.
const DefaultMaxPerCall = 4

// Timeouts of the server: a request's headers must come within
// headerTimeout, each write must be taken within writeTimeout, and a quiet
// stream gets a keep-alive line every keepAlive.
const (
	headerTimeout = 5 * time.Second
	writeTimeout  = 10 * time.Second
	keepAlive     = 15 * time.Second
	idleTimeout   = 30 * time.Second
)

// Options configure a Server.
type Options struct {
	// URL is the server's address as clients reach it ("http://host:port");
	// empty means http:// and the address listened on, with the machine's
	// name for an unspecified host (0.0.0.0).
	URL string
	// TLS, when set, makes Listen serve HTTPS with it (its Certificates),
	// and the default URL https://. Without it streams are plaintext on
	// the wire: sealed by DataConverter when payloads are, readable by
	// whoever sees the traffic when not.
	TLS *tls.Config
	// DataConverter makes each frame's payload: the worker client's own,
	// so that frames are sealed when payloads are (TODOFLOW_PAYLOAD_KEY).
	// nil means the SDK's default.
	DataConverter converter.DataConverter
	// MaxWatchers bounds the streams served at once; 0 means
	// DefaultMaxWatchers.
	MaxWatchers int
	// MaxPerCall bounds the streams of one call served at once; 0 means
	// DefaultMaxPerCall.
	MaxPerCall int
}

// Server serves the replies of the calls it was told of (Open) while they
// run.
type Server struct {
	url     string
	dc      converter.DataConverter
	slots   chan struct{}
	perCall int
	http    *http.Server
	done    chan struct{} // closed by Close: every stream ends

	mu    sync.Mutex
	calls map[string]*served // by callID
	once  sync.Once
}

type served struct {
	runID    string
	reply    *Reply
	watchers int // streams of it being served
}

// callID is the key of k's call in Server.calls: a call runs once at a
// time under its workflow id and activity id.
func callID(k Key) string { return k.WorkflowID + "\x00" + k.ActivityID }

// Listen serves on addr ("host:port"; port 0 picks one) until Close.
func Listen(addr string, o Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("reply streams: %w", err)
	}
	scheme := "http://"
	if o.TLS != nil {
		ln, scheme = tls.NewListener(ln, o.TLS), "https://"
	}
	if o.URL == "" {
		o.URL = scheme + advertised(ln.Addr().(*net.TCPAddr))
	}
	s := NewServer(o)
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// NewServer is a Server that listens nowhere yet: serve its handler (the
// Server itself) with Serve or a server of your own.
func NewServer(o Options) *Server {
	if o.DataConverter == nil {
		o.DataConverter = converter.GetDefaultDataConverter()
	}
	if o.MaxWatchers <= 0 {
		o.MaxWatchers = DefaultMaxWatchers
	}
	if o.MaxPerCall <= 0 {
		o.MaxPerCall = DefaultMaxPerCall
	}
	s := &Server{url: o.URL, dc: o.DataConverter, slots: make(chan struct{}, o.MaxWatchers), perCall: o.MaxPerCall,
		done: make(chan struct{}), calls: map[string]*served{}}
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    8 << 10,
	}
	return s
}

// advertised is the host:port clients reach a listener on: its own, or the
// machine's name for an unspecified address.
func advertised(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		if h, err := osHostname(); err == nil && h != "" {
			host = h
		}
	}
	return net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// URL is where clients reach the server.
func (s *Server) URL() string { return s.url }

// Close stops serving: the streams being served end (their watchers fall
// back to what the Temporal server shows), and no call is served again.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.done) })
	return s.http.Close()
}

// Open serves the reply of the call k until the reply ends.
func (s *Server) Open(k Key, call int) *Reply {
	r := NewReply(call)
	id := callID(k)
	r.onEnd = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c := s.calls[id]; c != nil && c.reply == r {
			delete(s.calls, id)
		}
	}
	s.mu.Lock()
	s.calls[id] = &served{runID: k.RunID, reply: r}
	s.mu.Unlock()
	return r
}

// watch is the reply of k, if it runs here, for one more watcher of it:
// release ends the watch. status says why there is none: 404 for a call
// that does not run here (or another run id), 503 for a call that has as
// many watchers as it may (MaxPerCall), or a server that has (MaxWatchers).
func (s *Server) watch(k Key) (reply *Reply, release func(), status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[callID(k)]
	switch {
	case c == nil || subtle.ConstantTimeCompare([]byte(c.runID), []byte(k.RunID)) != 1:
		return nil, nil, http.StatusNotFound
	case c.watchers >= s.perCall:
		return nil, nil, http.StatusServiceUnavailable
	}
	select {
	case s.slots <- struct{}{}:
	default:
		return nil, nil, http.StatusServiceUnavailable
	}
	c.watchers++
	return c.reply, func() {
		s.mu.Lock()
		c.watchers--
		s.mu.Unlock()
		<-s.slots
	}, http.StatusOK
}

// ServeHTTP serves GET Path?workflow_id=…&run_id=…&activity_id=…: the
// call's reply as server-sent events, until the call ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	reply, release, status := s.watch(Key{WorkflowID: q.Get("workflow_id"), RunID: q.Get("run_id"), ActivityID: q.Get("activity_id")})
	switch status {
	case http.StatusNotFound:
		http.Error(w, "no such call runs here", status)
		return
	case http.StatusServiceUnavailable:
		http.Error(w, "too many watchers", status)
		return
	}
	defer release()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	// An error is a watcher gone or too slow to read: it reconnects if it
	// wants to, and gets the reply so far again.
	_ = s.stream(r.Context(), w, reply)
}

// stream writes the reply's frames to w until the reply ends.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, reply *Reply) error {
	rc := http.NewResponseController(w)
	write := func(line string) error {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := fmt.Fprint(w, line); err != nil {
			return err
		}
		return rc.Flush()
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	from, first := -1, true
	for {
		f, changed := reply.next(from)
		if first || f.Text != "" || f.End {
			data, err := s.encode(f)
			if err != nil {
				return err
			}
			if err := write("data: " + data + "\n\n"); err != nil {
				return err
			}
			first, from = false, f.At+len(f.Text)
		}
		if f.End {
			return nil
		}
		select {
		case <-changed:
		case <-tick.C:
			if err := write(":\n\n"); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return nil
		}
	}
}

// encode is f as a payload of the data converter, in base64.
func (s *Server) encode(f Frame) (string, error) {
	p, err := s.dc.ToPayload(f)
	if err != nil {
		return "", fmt.Errorf("reply stream frame: %w", err)
	}
	b, err := proto.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("reply stream frame: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
