package codec

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// DefaultOrigins are the Web UI origins of the embedded dev server.
var DefaultOrigins = []string{"http://localhost:8233", "http://127.0.0.1:8233"}

// EnvToken is the environment variable that holds the codec server's
// bearer token, which its callers send as "Authorization: Bearer <token>".
// It is read from the environment rather than a flag so that it does not
// show in the process list.
const EnvToken = "TODOFLOW_CODEC_TOKEN"

// MaxBodyBytes is the largest request body the codec server reads (8 MiB).
// The Temporal server refuses payloads over 2 MB by default and a request
// carries one field's payloads in JSON, where their bytes grow by a third
// in base64: this takes a few of the largest, and bounds what one caller
// can make the worker hold.
const MaxBodyBytes = 8 << 20

// MaxPayloads is the most payloads one request may carry. The Web UI and
// the temporal CLI send one field's payloads at a time, a handful; sealing
// adds a nonce, a tag and metadata to even an empty payload, so without a
// limit one request of empty payloads would make an answer many times its
// size.
const MaxPayloads = 1000

// realm names the codec server in its WWW-Authenticate challenges.
const realm = `Bearer realm="todoflow codec server"`

// Options say who may call the codec server.
type Options struct {
	// Origins are the Web UI origins (scheme://host:port) browsers may call
	// it from. A browser's request from another origin is refused, so that
	// a page elsewhere cannot even make the server work; callers that are
	// not browsers send no origin.
	Origins []string

	// Token is the bearer token every request but a CORS preflight must
	// carry (browsers send preflights without credentials). Empty asks for
	// none: anyone who reaches the server can then decrypt, so serve it so
	// on a loopback address only.
	Token string

	// Hosts are the names and addresses callers reach the server by, ports
	// aside: a request's Host must be one of them, so that a web page
	// cannot reach the server through a name of its own that it points at
	// this machine (DNS rebinding), and read the answers as its own. An
	// unspecified address (0.0.0.0, ::) stands for any IP address, which no
	// page can rebind. Loopback names (localhost, 127.0.0.1, ::1) are always
	// accepted, for the same reason, and so that an SSH tunnel works.
	Hosts []string
}

// Handler is the codec server the Web UI calls to show encrypted payloads
// (its "Codec Server endpoint" setting): POST /encode and /decode with
// JSON payloads, as the SDK's converter.NewPayloadCodecHTTPHandler serves
// them. It checks, in this order: the Host (421 Misdirected Request), the
// browser's origin (403; a preflight from an allowed origin is answered
// without a token and decodes nothing), the token (401 with a
// WWW-Authenticate challenge), the body's size (413) and the number of
// payloads (400).
func Handler(c *Codec, o Options) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(limited{c})
	hosts := newHostSet(o.Hosts)
	want := sha256.Sum256([]byte(o.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.allows(r.Host) {
			http.Error(w, "codec server: this server is not reached by that host name", http.StatusMisdirectedRequest)
			return
		}
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(o.Origins, origin)
		w.Header().Add("Vary", "Origin")
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
		}
		if r.Method == http.MethodOptions {
			// Without the Allow-Origin header a disallowed origin's browser
			// stops here.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if origin != "" && !allowed {
			http.Error(w, "codec server: origin not allowed", http.StatusForbidden)
			return
		}
		if o.Token != "" {
			tok, ok := bearer(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", realm)
				http.Error(w, "codec server: a bearer token is required", http.StatusUnauthorized)
				return
			}
			// Digests compare in constant time whatever the lengths.
			got := sha256.Sum256([]byte(tok))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
				http.Error(w, "codec server: wrong bearer token", http.StatusUnauthorized)
				return
			}
		}
		if !limitBody(w, r) {
			return
		}
		codec.ServeHTTP(w, r)
	})
}

// bearer is the request's bearer token, if it has one.
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	return tok, true
}

// limitBody reads r's body up to MaxBodyBytes and puts it back for the
// SDK's handler, which would answer an overlong body with 400, not 413; it
// answers the request and reports false when the body is too long or
// unreadable.
func limitBody(w http.ResponseWriter, r *http.Request) bool {
	tooLong := fmt.Sprintf("codec server: request body over %d bytes", MaxBodyBytes)
	if r.ContentLength > MaxBodyBytes {
		http.Error(w, tooLong, http.StatusRequestEntityTooLarge)
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		http.Error(w, tooLong, http.StatusRequestEntityTooLarge)
		return false
	case err != nil:
		http.Error(w, fmt.Sprintf("codec server: read request body: %v", err), http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// limited refuses a request of more than MaxPayloads payloads before it
// seals or opens any of them.
type limited struct{ c *Codec }

func (l limited) Encode(p []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if err := checkCount(p); err != nil {
		return nil, err
	}
	return l.c.Encode(p)
}

func (l limited) Decode(p []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if err := checkCount(p); err != nil {
		return nil, err
	}
	return l.c.Decode(p)
}

func checkCount(p []*commonpb.Payload) error {
	if len(p) > MaxPayloads {
		return fmt.Errorf("codec server: %d payloads in one request, more than %d", len(p), MaxPayloads)
	}
	return nil
}

// hostSet is the Host names and addresses a codec server accepts.
type hostSet struct {
	names map[string]bool // lower case; IP addresses in netip's form
	anyIP bool            // an unspecified address was given
}

func newHostSet(hosts []string) hostSet {
	s := hostSet{names: map[string]bool{}}
	for _, h := range hosts {
		h = hostname(h)
		if h == "" {
			continue
		}
		if ip, err := netip.ParseAddr(h); err == nil {
			s.anyIP = s.anyIP || ip.IsUnspecified()
			h = ip.Unmap().String()
		}
		s.names[h] = true
	}
	return s
}

func (s hostSet) allows(hostport string) bool {
	h := hostname(hostport)
	if h == "" {
		return false
	}
	if h == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || s.anyIP || s.names[ip.String()]
	}
	return s.names[h]
}

// hostname is the host of a Host header or address, port and IPv6
// brackets removed, in lower case and without a final dot.
func hostname(hostport string) string {
	h := strings.TrimSpace(hostport)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	} else {
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
