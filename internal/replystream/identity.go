package replystream

import (
	"net"
	"net/url"
	"os"
	"strings"
)

// osHostname is os.Hostname; a variable for tests.
var osHostname = os.Hostname

// The fields a worker identity gets: where its streams are served, and the
// machine it runs on (for loopback URLs).
const (
	streamField = " stream="
	hostField   = " host="
)

// Identity is the worker identity base with the server's URL added, for
// worker.Options.Identity: the Temporal server shows it with each activity
// the worker runs.
func (s *Server) Identity(base string) string {
	host, _ := osHostname()
	return base + streamField + s.url + hostField + strings.ReplaceAll(host, " ", "_")
}

// Locate is the stream URL a worker identity names: "" when it names none,
// or when its URL is a loopback one and the worker runs on another machine
// (that address would reach this machine's own loopback instead).
func Locate(identity string) string {
	_, rest, ok := strings.Cut(identity, streamField)
	if !ok {
		return ""
	}
	raw, host, _ := strings.Cut(rest, hostField)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	if isLoopback(u.Hostname()) {
		mine, err := osHostname()
		if err != nil || strings.ReplaceAll(mine, " ", "_") != strings.TrimSpace(host) {
			return ""
		}
	}
	return raw
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
