package agentworker

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/internal/testcert"
)

// The reply stream server: on a free loopback port by default, named in
// an identity (the plugin's worker's); none with "off"; HTTPS with a certificate and its
// key; a bad address or URL, or half a certificate, refused.
func TestServeStreams(t *testing.T) {
	t.Setenv(EnvStreamAddr, "")
	t.Setenv(EnvStreamURL, "")
	t.Setenv(EnvStreamCert, "")
	t.Setenv(EnvStreamKey, "")
	quiet := slog.New(slog.DiscardHandler)
	cert, key := testcert.Write(t, t.TempDir())
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
		{name: "TLS", opts: Options{StreamCert: cert, StreamKey: key}, wantURL: "https://127.0.0.1:"},
		{name: "TLS advertised elsewhere", opts: Options{StreamCert: cert, StreamKey: key, StreamURL: "https://worker-3:7240"}, wantURL: "https://worker-3:7240"},
		{name: "TLS advertised as plain HTTP", opts: Options{StreamCert: cert, StreamKey: key, StreamURL: "http://worker-3:7240"}, wantError: "want https://HOST:PORT"},
		{name: "a certificate without its key", opts: Options{StreamCert: cert}, wantError: "give both a certificate (--stream-cert, TODOFLOW_STREAM_CERT) and its key"},
		{name: "a key without its certificate", opts: Options{StreamKey: key}, wantError: "give both"},
		{name: "a certificate that is not one", opts: Options{StreamCert: key, StreamKey: key}, wantError: "reply streams' TLS (--stream-cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvStreamAddr, tt.env)
			tt.opts.Logger = quiet
			s, err := serveStreams(&tt.opts, nil)
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
				if s != nil {
					t.Errorf("a server at %v; want none", s)
				}
				return
			}
			defer s.Close()
			id := s.Identity("1@here@")
			if !strings.HasPrefix(s.URL(), tt.wantURL) || replystream.Locate(id) != s.URL() || !strings.HasPrefix(id, "1@here@ ") {
				t.Errorf("URL %q, identity %q; want %s…, named in the identity after the one given", s.URL(), id, tt.wantURL)
			}
		})
	}
}
