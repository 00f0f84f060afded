package agentworker

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strings"

	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/worker/codec"
)

// Environment variables of the reply stream server (Options.StreamAddr,
// Options.StreamURL, Options.StreamCert, Options.StreamKey).
const (
	EnvStreamAddr = "TODOFLOW_STREAM_ADDR"
	EnvStreamURL  = "TODOFLOW_STREAM_URL"
	EnvStreamCert = "TODOFLOW_STREAM_CERT"
	EnvStreamKey  = "TODOFLOW_STREAM_KEY"
)

// StreamOff is the StreamAddr of a worker that serves no reply streams.
const StreamOff = "off"

// serveStreams starts the reply stream server opts ask for (nil for
// "off"), sealing its frames with dc; the plugin names it in its worker's
// identity.
func serveStreams(opts *Options, dc converter.DataConverter) (*replystream.Server, error) {
	addr := cmp.Or(opts.StreamAddr, os.Getenv(EnvStreamAddr), "127.0.0.1:0")
	if addr == StreamOff {
		opts.Logger.Info("Serving no reply streams: watching clients see replies through the heartbeats, every few seconds", "StreamAddr", addr)
		return nil, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("reply streams (--stream-addr, %s) %q: want HOST:PORT, a :PORT (127.0.0.1) or %q", EnvStreamAddr, addr, StreamOff)
	}
	if host == "" {
		host = "127.0.0.1" // a port alone is not every interface: see SECURITY.md
	}
	conf, err := streamTLS(opts)
	if err != nil {
		return nil, err
	}
	url := cmp.Or(opts.StreamURL, os.Getenv(EnvStreamURL))
	switch {
	case url != "" && conf != nil && !strings.HasPrefix(url, "https://"):
		return nil, fmt.Errorf("reply streams (--stream-url, %s) %q: want https://HOST:PORT, the server serves TLS (--stream-cert)", EnvStreamURL, url)
	case url != "" && !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://"):
		return nil, fmt.Errorf("reply streams (--stream-url, %s) %q: want http://HOST:PORT", EnvStreamURL, url)
	}
	s, err := replystream.Listen(net.JoinHostPort(host, port), replystream.Options{URL: url, TLS: conf, DataConverter: dc})
	if err != nil {
		return nil, fmt.Errorf("%w (--stream-addr, %s; %q serves none)", err, EnvStreamAddr, StreamOff)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		switch {
		case dc == nil:
			opts.Logger.Warn("Reply streams are served beyond loopback without payload encryption: whoever reaches the address and knows a session's run id reads its replies as they are written (set "+codec.EnvKey+")", "StreamAddr", addr)
		case conf == nil:
			opts.Logger.Warn("Reply streams are served beyond loopback without TLS: the frames are sealed, but whoever sees the traffic learns the run ids it asks for (set --stream-cert and --stream-key)", "StreamAddr", addr)
		}
	}
	opts.Logger.Info("Replies stream to watching clients from this worker", "URL", s.URL())
	return s, nil
}

// streamTLS is the TLS configuration of the stream server: nil without a
// certificate, an error when only one of certificate and key is given or
// they cannot be loaded.
func streamTLS(opts *Options) (*tls.Config, error) {
	cert, key := cmp.Or(opts.StreamCert, os.Getenv(EnvStreamCert)), cmp.Or(opts.StreamKey, os.Getenv(EnvStreamKey))
	switch {
	case cert == "" && key == "":
		return nil, nil
	case cert == "" || key == "":
		return nil, fmt.Errorf("reply streams' TLS: give both a certificate (--stream-cert, %s) and its key (--stream-key, %s)", EnvStreamCert, EnvStreamKey)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("reply streams' TLS (--stream-cert %s, --stream-key %s): %w", cert, key, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// defaultIdentity is the SDK's default worker identity.
func defaultIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s@", os.Getpid(), host)
}

// payloadConverter is the converter of the client the worker was given:
// opts.DataConverter, else the one TODOFLOW_PAYLOAD_KEY makes (as Dial
// does), else nil, the SDK's default. The reply streams seal their frames
// with it, and the activities decode the run's history with it.
func payloadConverter(opts Options) (converter.DataConverter, error) {
	if opts.DataConverter != nil {
		return opts.DataConverter, nil
	}
	sealer, err := codec.FromEnv()
	if err != nil || sealer == nil {
		return nil, err
	}
	return sealer.DataConverter(), nil
}
