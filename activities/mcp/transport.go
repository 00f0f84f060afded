package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport builds what connects to the server (a command's standard input
// and output, or a Streamable HTTP endpoint), with the references of the
// configuration replaced by their values now (secrets stay in memory only),
// and the replacer that hides those values again in error messages.
func (s *server) transport() (sdk.Transport, *strings.Replacer, error) {
	// Each expanded field's value is put back as the field was written,
	// and, after those, each variable's value as its reference: a server
	// may quote the token of "Bearer ${TOKEN}" alone.
	var vars []string // value, reference
	x, pairs, err := s.cfg.expanded(func(name string) (string, bool) {
		v, ok := os.LookupEnv(name)
		if ok && len(v) >= 4 {
			vars = append(vars, v, "${"+name+"}")
		}
		return v, ok
	})
	if err != nil {
		return nil, nil, err
	}
	redact := strings.NewReplacer(append(pairs, vars...)...)
	if s.cfg.IsHTTP() {
		u, err := url.Parse(x.URL)
		if err != nil || u.Host == "" {
			// Not the value: it may hold a token.
			return nil, nil, errors.New("url: not an absolute URL once its references are filled in")
		}
		header := make(http.Header)
		for k, v := range x.Headers {
			header.Set(k, v)
		}
		return &sdk.StreamableClientTransport{
			Endpoint:   x.URL,
			HTTPClient: &http.Client{Transport: wireRoundTripper{base: &headerTransport{header: header, origin: origin(u), base: http.DefaultTransport}}},
		}, redact, nil
	}

	var own []string
	for _, k := range slices.Sorted(maps.Keys(x.Env)) {
		own = append(own, k+"="+x.Env[k])
	}
	dir := x.Cwd
	if !filepath.IsAbs(dir) && s.dir != "" {
		dir = filepath.Join(s.dir, dir)
	}
	cmd := exec.Command(x.Command, x.Args...)
	cmd.Env = childEnv(own)
	cmd.Dir = dir
	dieWithWorker(cmd)
	cmd.Stderr = &prefixWriter{w: s.opts.Stderr, prefix: "mcp " + s.name + ": "}
	// A grandchild holding stderr open must not keep the worker waiting.
	cmd.WaitDelay = time.Second
	return wireTransport{&sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}, redact, nil
}

// headerTransport adds the configured headers to the requests for a
// Streamable HTTP server's own origin, and to no other: http.Client follows
// a redirect through the same RoundTripper, and the headers are credentials
// for the configured server, not for wherever it (or whoever took over its
// name) sends the client next. Go's client drops its own Authorization on a
// redirect to another host, but these are added afresh on every request.
type headerTransport struct {
	header http.Header
	origin string // of the configured URL, see origin
	base   http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if origin(r.URL) != t.origin {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context()) // a RoundTripper must not change the request it is given
	for k, v := range t.header {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// origin is where a URL's requests go, as browsers bound credentials:
// scheme, host and port (https on the same host is another origin than
// http, so a header bound to one is not sent in clear to the other).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), port)
}

// prefixWriter writes each line a server prints on its standard error to w,
// after prefix, so that the worker's output says which server wrote it.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

// maxLine bounds a line held while waiting for its end.
const maxLine = 64 << 10

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 && len(p.buf) < maxLine {
			break
		}
		if i < 0 {
			i = len(p.buf)
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, bytes.TrimRight(p.buf[:i], "\r"))
		p.buf = p.buf[min(i+1, len(p.buf)):]
	}
	return len(b), nil
}
