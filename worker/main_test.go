package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/todoflow/todoflow/internal/telemetrytest"
	"github.com/todoflow/todoflow/worker/codec"
)

// --metrics-addr serves what the client's handler is told at /metrics, and
// nothing else.
func TestServeMetrics(t *testing.T) {
	m, at, shutdown, err := serveMetrics(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	m.MetricsHandler().WithTags(map[string]string{"tool": "read_file", "outcome": "ok"}).Counter("todoflow_tool_calls").Inc(2)

	base := "http://" + at.String()
	s := telemetrytest.Get(t, base+"/metrics")
	if got := s.Sum("todoflow_tool_calls_total", map[string]string{"tool": "read_file", "outcome": "ok"}); got != 2 {
		t.Errorf("todoflow_tool_calls_total = %g, want 2; served:\n%s", got, s.Named("todoflow_tool_calls_total"))
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/debug/pprof/", http.StatusNotFound},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tt.method, base+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: %s, want %d", tt.method, tt.path, resp.Status, tt.want)
		}
	}

	shutdown()
	if _, err := http.Get(base + "/metrics"); err == nil {
		t.Errorf("the metrics server still answers after shutdown")
	}
}

func TestServeMetricsBadAddress(t *testing.T) {
	_, _, _, err := serveMetrics(context.Background(), "127.0.0.1:99999")
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("serveMetrics error = %v, want one naming --metrics-addr", err)
	}
}

// An address with a port alone binds loopback; every interface is for an
// operator who writes it out.
func TestServeMetricsBindsLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr     string
		loopback bool
	}{
		{":0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
	} {
		_, at, shutdown, err := serveMetrics(context.Background(), tt.addr)
		if err != nil {
			t.Fatalf("serveMetrics(%q): %v", tt.addr, err)
		}
		shutdown()
		if ip := at.(*net.TCPAddr).IP; ip.IsLoopback() != tt.loopback {
			t.Errorf("serveMetrics(%q) bound %s, want loopback %v", tt.addr, at, tt.loopback)
		}
	}
}

const testCodecToken = "0123456789abcdef0123"

// setCodecEnv sets the codec server's payload key and token ("" unsets).
func setCodecEnv(t *testing.T, key, token string) {
	t.Setenv(codec.EnvKey, key)
	t.Setenv(codec.EnvOldKeys, "")
	t.Setenv(codec.EnvToken, token)
}

var testPayloadKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))

// The codec server does not start where it would decrypt for strangers,
// and says which flag or variable to set.
func TestServeCodecRefuses(t *testing.T) {
	for _, tt := range []struct {
		name       string
		key, token string
		flags      codecFlags
		usage      bool     // a usage error (exit code 2)
		want       []string // in the error
	}{
		{"no payload key", "", testCodecToken, codecFlags{addr: "127.0.0.1:0"}, true, []string{"--codec-addr", codec.EnvKey}},
		{"no token", testPayloadKey, "", codecFlags{addr: "127.0.0.1:0"}, true, []string{"--codec-addr", codec.EnvToken, "--codec-insecure-loopback"}},
		{"no token, all interfaces", testPayloadKey, "", codecFlags{addr: "0.0.0.0:0"}, true, []string{"--codec-addr", codec.EnvToken}},
		{"no token, all interfaces, insecure", testPayloadKey, "", codecFlags{addr: "0.0.0.0:0", insecureLoopback: true}, true, []string{"--codec-addr 0.0.0.0:0", "not a loopback address", codec.EnvToken}},
		{"a short token", testPayloadKey, "short", codecFlags{addr: "127.0.0.1:0"}, true, []string{codec.EnvToken, "at least 16"}},
		{"a bad address", testPayloadKey, testCodecToken, codecFlags{addr: "127.0.0.1:99999"}, false, []string{"--codec-addr"}},
		{"no port", testPayloadKey, testCodecToken, codecFlags{addr: "localhost"}, false, []string{"--codec-addr", "missing port"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setCodecEnv(t, tt.key, tt.token)
			_, shutdown, err := serveCodec(context.Background(), tt.flags)
			if err == nil {
				shutdown()
				t.Fatal("serveCodec served")
			}
			var ue usageError
			if errors.As(err, &ue) != tt.usage {
				t.Errorf("usage error %v, want %v: %v", !tt.usage, tt.usage, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// The codec server as the worker serves it: the token from its
// environment, the Host it is reached by, loopback for a port alone.
func TestServeCodec(t *testing.T) {
	sealer, err := codec.New(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := sealer.Encode([]*commonpb.Payload{{Data: []byte("hello")}})
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: sealed})
	hello := base64.StdEncoding.EncodeToString([]byte("hello"))

	type request struct {
		host, auth string // host "" is the address served
		want       int
	}
	for _, tt := range []struct {
		name     string
		token    string
		flags    codecFlags
		loopback bool
		requests []request
	}{
		{"token", testCodecToken, codecFlags{addr: ":0"}, true, []request{
			{"", "", http.StatusUnauthorized},
			{"", "Bearer wrong-token-0123456789", http.StatusUnauthorized},
			{"", "Bearer " + testCodecToken, http.StatusOK},
			{"localhost", "Bearer " + testCodecToken, http.StatusOK},
			{"rebind.example", "Bearer " + testCodecToken, http.StatusMisdirectedRequest},
		}},
		{"token, all interfaces, a proxy's name", testCodecToken, codecFlags{addr: "0.0.0.0:0", hosts: []string{"codec.example.com"}}, false, []request{
			{"", "", http.StatusUnauthorized},
			{"192.0.2.1:8234", "Bearer " + testCodecToken, http.StatusOK},
			{"codec.example.com", "Bearer " + testCodecToken, http.StatusOK},
			{"rebind.example", "Bearer " + testCodecToken, http.StatusMisdirectedRequest},
		}},
		{"insecure loopback", "", codecFlags{addr: "localhost:0", insecureLoopback: true}, true, []request{
			{"", "", http.StatusOK},
			{"localhost:1234", "", http.StatusOK},
			{"rebind.example", "", http.StatusMisdirectedRequest},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setCodecEnv(t, testPayloadKey, tt.token)
			at, shutdown, err := serveCodec(context.Background(), tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			defer shutdown()
			if ip := at.(*net.TCPAddr).IP; ip.IsLoopback() != tt.loopback {
				t.Errorf("serveCodec(%q) bound %s, want loopback %v", tt.flags.addr, at, tt.loopback)
			}
			port := at.(*net.TCPAddr).Port
			for _, r := range tt.requests {
				req, _ := http.NewRequest(http.MethodPost, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port))+"/decode", bytes.NewReader(body))
				if r.host != "" {
					req.Host = r.host
				}
				if r.auth != "" {
					req.Header.Set("Authorization", r.auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				_, _ = out.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.want {
					t.Errorf("host %q, %q: status %d, want %d; answer %q", r.host, r.auth, resp.StatusCode, r.want, out.String())
				}
				if decoded := strings.Contains(out.String(), hello); decoded != (r.want == http.StatusOK) {
					t.Errorf("host %q, %q: decoded %v; answer %q", r.host, r.auth, decoded, out.String())
				}
			}
		})
	}
}

// The codec and metrics servers time out a caller who sends or reads
// slowly, or keeps an idle connection, so that none holds a connection
// (and its goroutine) for ever.
func TestHTTPServerTimeouts(t *testing.T) {
	srv := httpServer(http.NotFoundHandler())
	tests := []struct {
		name      string
		got, want time.Duration
	}{
		{"request headers", srv.ReadHeaderTimeout, readHeaderTimeout},
		{"a request", srv.ReadTimeout, readTimeout},
		{"an answer", srv.WriteTimeout, writeTimeout},
		{"an idle connection", srv.IdleTimeout, idleTimeout},
	}
	for _, tt := range tests {
		if tt.got != tt.want || tt.got <= 0 {
			t.Errorf("%s: timeout %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}

// The command line: cobra's help (exit 0), its refusals with one line and the usage
// (exit 2), the single-dash long flags of Go's flag package, and the worker's own refusal
// of a setting (exit 2, no usage).
func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		args      []string
		code      int
		firstLine string // of stderr; "" none
		out       string // in stdout
		usage     bool   // the usage follows the error
	}{
		{[]string{"-h"}, 0, "", "\n  worker [flags]\n", false},
		{[]string{"-help"}, 0, "", "--workspace-root DIR", false},
		{[]string{"--bogus"}, 2, "worker: unknown flag: --bogus", "", true},
		{[]string{"extra"}, 2, `worker: unknown command "extra" for "worker"`, "", true},
		{[]string{"-dev", "-address", "localhost:1"}, 2, "worker: --dev starts its own server on localhost:7233; drop --address", "", false},
	} {
		var stdout, stderr bytes.Buffer
		code := runCLI(tt.args, &stdout, &stderr)
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		if code != tt.code || first != tt.firstLine || !strings.Contains(stdout.String(), tt.out) || strings.HasPrefix(rest, "Usage:") != tt.usage {
			t.Errorf("worker %q: exit %d, stdout %q, stderr %q; want exit %d, %q first on stderr (then the usage: %v), %q in stdout",
				tt.args, code, stdout.String(), stderr.String(), tt.code, tt.firstLine, tt.usage, tt.out)
		}
	}
}
