package agentworker

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/internal/replystream"
)

// The reply stream server: on a free loopback port by default, named in
// the worker's identity; none with "off"; a bad address or URL refused.
func TestServeStreams(t *testing.T) {
	t.Setenv(EnvStreamAddr, "")
	t.Setenv(EnvStreamURL, "")
	quiet := slog.New(slog.DiscardHandler)
	tests := []struct {
		name      string
		opts      Options
		env       string // EnvStreamAddr
		wantURL   string // a prefix; "" for no server
		wantError string
	}{
		{name: "default", wantURL: "http://127.0.0.1:"},
		{name: "a port alone binds loopback", opts: Options{StreamAddr: ":0"}, wantURL: "http://127.0.0.1:"},
		{name: "from the environment", env: "off"},
		{name: "off", opts: Options{StreamAddr: StreamOff}},
		{name: "advertised elsewhere", opts: Options{StreamURL: "http://worker-3:7240"}, wantURL: "http://worker-3:7240"},
		{name: "no port", opts: Options{StreamAddr: "localhost"}, wantError: "want HOST:PORT"},
		{name: "not http", opts: Options{StreamURL: "ftp://worker-3"}, wantError: "want http://HOST:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvStreamAddr, tt.env)
			tt.opts.Logger = quiet
			tt.opts.Worker.Identity = "1@here@"
			s, err := serveStreams(&tt.opts)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("serveStreams: %v; want an error saying %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantURL == "" {
				if s != nil || tt.opts.Worker.Identity != "1@here@" {
					t.Errorf("a server at %v, identity %q; want none, the identity as it was", s, tt.opts.Worker.Identity)
				}
				return
			}
			defer s.Close()
			if !strings.HasPrefix(s.URL(), tt.wantURL) || replystream.Locate(tt.opts.Worker.Identity) != s.URL() ||
				!strings.HasPrefix(tt.opts.Worker.Identity, "1@here@ ") {
				t.Errorf("URL %q, identity %q; want %s…, named in the identity after the one given", s.URL(), tt.opts.Worker.Identity, tt.wantURL)
			}
		})
	}
}
