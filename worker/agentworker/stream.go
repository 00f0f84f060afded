package agentworker

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/worker/codec"
)

// Environment variables of the reply stream server (Options.StreamAddr,
// Options.StreamURL).
const (
	EnvStreamAddr = "TODOFLOW_STREAM_ADDR"
	EnvStreamURL  = "TODOFLOW_STREAM_URL"
)

// StreamOff is the StreamAddr of a worker that serves no reply streams.
const StreamOff = "off"

// serveStreams starts the reply stream server opts ask for (nil for
// "off") and sets the worker's identity to name it.
func serveStreams(opts *Options) (*replystream.Server, error) {
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
	dc := opts.DataConverter
	if dc == nil {
		sealer, err := codec.FromEnv()
		if err != nil {
			return nil, err
		}
		if sealer != nil {
			dc = sealer.DataConverter()
		}
	}
	url := cmp.Or(opts.StreamURL, os.Getenv(EnvStreamURL))
	if url != "" && !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("reply streams (--stream-url, %s) %q: want http://HOST:PORT", EnvStreamURL, url)
	}
	s, err := replystream.Listen(net.JoinHostPort(host, port), replystream.Options{URL: url, DataConverter: dc})
	if err != nil {
		return nil, fmt.Errorf("%w (--stream-addr, %s; %q serves none)", err, EnvStreamAddr, StreamOff)
	}
	opts.Worker.Identity = s.Identity(cmp.Or(opts.Worker.Identity, defaultIdentity()))
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && dc == nil {
		opts.Logger.Warn("Reply streams are served beyond loopback without payload encryption: whoever reaches the address and knows a session's run id reads its replies as they are written (set "+codec.EnvKey+")", "StreamAddr", addr)
	}
	opts.Logger.Info("Replies stream to watching clients from this worker", "URL", s.URL())
	return s, nil
}

// defaultIdentity is the SDK's default worker identity.
func defaultIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s@", os.Getpid(), host)
}
