package codec

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const testToken = "0123456789abcdef-token"

// What answers carry: payload bytes in base64, as protojson writes them.
var (
	helloJSON     = base64.StdEncoding.EncodeToString([]byte(`"hello"`))
	encryptedJSON = base64.StdEncoding.EncodeToString([]byte(Encoding))
)

// sealedBody is a /decode request of one sealed "hello".
func sealedBody(t *testing.T, c *Codec) []byte {
	t.Helper()
	sealed, err := c.Encode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"hello"`)}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: sealed})
	return body
}

// unsized hides a body's length, so that the client sends it chunked.
type unsized struct{ io.Reader }

// call sends one request and returns the answer and its body.
func call(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func TestHandler(t *testing.T) {
	c := mustCodec(t, key(1))
	srv := httptest.NewServer(Handler(c, Options{Origins: DefaultOrigins, Token: testToken, Hosts: []string{"127.0.0.1", "codec.internal"}}))
	defer srv.Close()
	body := sealedBody(t, c)
	many, _ := protojson.Marshal(&commonpb.Payloads{Payloads: make([]*commonpb.Payload, MaxPayloads+1)})

	for _, tt := range []struct {
		name    string
		method  string // POST unless given
		path    string // /decode unless given
		host    string // the server's address unless given
		auth    string // the Authorization header; "right" for the token
		origin  string
		body    io.Reader // body unless given
		want    int
		wantOut string // in the answer's body
		wantHdr map[string]string
	}{
		{name: "no token", want: http.StatusUnauthorized, wantHdr: map[string]string{"WWW-Authenticate": realm}},
		{name: "wrong token", auth: "Bearer " + testToken + "x", want: http.StatusUnauthorized,
			wantHdr: map[string]string{"WWW-Authenticate": realm + `, error="invalid_token"`}},
		{name: "a prefix of the token", auth: "Bearer " + testToken[:8], want: http.StatusUnauthorized},
		{name: "the token, not as a bearer", auth: "Basic " + testToken, want: http.StatusUnauthorized},
		{name: "an empty bearer", auth: "Bearer ", want: http.StatusUnauthorized},
		{name: "right token", auth: "right", want: http.StatusOK, wantOut: helloJSON},
		{name: "scheme in lower case", auth: "bearer " + testToken, want: http.StatusOK, wantOut: helloJSON},
		{name: "encode", path: "/encode", auth: "right", want: http.StatusOK, wantOut: encryptedJSON},
		{name: "a namespace's path", path: "/default/decode", auth: "right", want: http.StatusOK, wantOut: helloJSON},
		{name: "GET", method: http.MethodGet, auth: "right", want: http.StatusNotFound},
		{name: "no token for GET either", method: http.MethodGet, want: http.StatusUnauthorized},

		// DNS rebinding: a page's own name pointed at this machine.
		{name: "host not served", host: "rebind.example:8234", auth: "right", want: http.StatusMisdirectedRequest},
		{name: "host not served, no token", host: "rebind.example", want: http.StatusMisdirectedRequest},
		{name: "host an IP not served", host: "10.1.2.3:8234", auth: "right", want: http.StatusMisdirectedRequest},
		{name: "host localhost", host: "localhost:8234", auth: "right", want: http.StatusOK},
		{name: "host IPv6 loopback", host: "[::1]:8234", auth: "right", want: http.StatusOK},
		{name: "host listed", host: "Codec.Internal.:443", auth: "right", want: http.StatusOK},
		{name: "a listed name's subdomain", host: "x.codec.internal", auth: "right", want: http.StatusMisdirectedRequest},

		{name: "allowed origin", origin: "http://localhost:8233", auth: "right", want: http.StatusOK,
			wantHdr: map[string]string{"Access-Control-Allow-Origin": "http://localhost:8233"}},
		{name: "allowed origin, no token", origin: "http://localhost:8233", want: http.StatusUnauthorized,
			wantHdr: map[string]string{"Access-Control-Allow-Origin": "http://localhost:8233"}},
		{name: "other origin", origin: "http://evil.example", auth: "right", want: http.StatusForbidden},
		{name: "opaque origin", origin: "null", auth: "right", want: http.StatusForbidden},
		{name: "preflight without a token", method: http.MethodOptions, origin: "http://127.0.0.1:8233", want: http.StatusNoContent,
			wantHdr: map[string]string{"Access-Control-Allow-Origin": "http://127.0.0.1:8233", "Access-Control-Allow-Headers": "Content-Type, X-Namespace, Authorization"}},
		{name: "preflight from another origin", method: http.MethodOptions, origin: "http://evil.example", want: http.StatusNoContent,
			wantHdr: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "preflight for another host", method: http.MethodOptions, host: "rebind.example", origin: "http://localhost:8233", want: http.StatusMisdirectedRequest},

		{name: "body over the limit", auth: "right", body: bytes.NewReader(make([]byte, MaxBodyBytes+1)), want: http.StatusRequestEntityTooLarge},
		{name: "chunked body over the limit", auth: "right", body: unsized{bytes.NewReader(make([]byte, MaxBodyBytes+1))}, want: http.StatusRequestEntityTooLarge},
		{name: "body over the limit, no token", body: bytes.NewReader(make([]byte, MaxBodyBytes+1)), want: http.StatusUnauthorized},
		{name: "too many payloads", auth: "right", body: bytes.NewReader(many), want: http.StatusBadRequest, wantOut: "more than 1000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			method, path, reqBody := tt.method, tt.path, tt.body
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = "/decode"
			}
			if reqBody == nil {
				reqBody = bytes.NewReader(body)
			}
			req, _ := http.NewRequest(method, srv.URL+path, reqBody)
			req.Header.Set("Content-Type", "application/json")
			if tt.host != "" {
				req.Host = tt.host
			}
			switch tt.auth {
			case "":
			case "right":
				req.Header.Set("Authorization", "Bearer "+testToken)
			default:
				req.Header.Set("Authorization", tt.auth)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
				req.Header.Set("Access-Control-Request-Method", "POST")
			}
			resp, out := call(t, req)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; answer %q", resp.StatusCode, tt.want, out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("answer %q, want it to contain %q", out, tt.wantOut)
			}
			for k, v := range tt.wantHdr {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if tt.want != http.StatusOK && strings.Contains(out, helloJSON) {
				t.Errorf("a refused request was answered with the plain text: %q", out)
			}
		})
	}
}

// The decoded answer is the payload as it was before sealing.
func TestHandlerDecodes(t *testing.T) {
	c := mustCodec(t, key(1))
	srv := httptest.NewServer(Handler(c, Options{Token: testToken}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(sealedBody(t, c)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, out := call(t, req)
	var got commonpb.Payloads
	if err := protojson.Unmarshal([]byte(out), &got); err != nil || resp.StatusCode != http.StatusOK || len(got.Payloads) != 1 || string(got.Payloads[0].Data) != `"hello"` {
		t.Fatalf("decode answered %d %s (%v)", resp.StatusCode, out, err)
	}
}

// Without a token (a loopback address, by the operator's choice) the other
// checks still hold.
func TestHandlerWithoutToken(t *testing.T) {
	c := mustCodec(t, key(1))
	srv := httptest.NewServer(Handler(c, Options{Origins: DefaultOrigins}))
	defer srv.Close()
	for _, tt := range []struct {
		host string
		want int
	}{
		{"", http.StatusOK},
		{"localhost:1", http.StatusOK},
		{"rebind.example", http.StatusMisdirectedRequest},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(sealedBody(t, c)))
		if tt.host != "" {
			req.Host = tt.host
		}
		if resp, out := call(t, req); resp.StatusCode != tt.want {
			t.Errorf("host %q: status %d, want %d; answer %q", tt.host, resp.StatusCode, tt.want, out)
		}
	}
}

func TestHostSet(t *testing.T) {
	for _, tt := range []struct {
		hosts []string
		host  string
		want  bool
	}{
		{nil, "localhost", true},
		{nil, "LOCALHOST:8234", true},
		{nil, "127.0.0.2:8234", true},
		{nil, "[::1]", true},
		{nil, "[::ffff:127.0.0.1]:1", true},
		{nil, "", false},
		{nil, "example.com", false},
		{nil, "10.0.0.5", false},
		{[]string{""}, "", false},
		{[]string{"10.0.0.5"}, "10.0.0.5:8234", true},
		{[]string{"10.0.0.5"}, "10.0.0.6:8234", false},
		{[]string{"0.0.0.0"}, "10.0.0.6:8234", true},
		{[]string{"::"}, "[2001:db8::1]:8234", true},
		{[]string{"0.0.0.0"}, "rebind.example", false},
		{[]string{"codec.example.com"}, "codec.example.com.", true},
		{[]string{"[2001:db8::1]"}, "[2001:DB8::1]:8234", true},
	} {
		if got := newHostSet(tt.hosts).allows(tt.host); got != tt.want {
			t.Errorf("hosts %q allow %q = %v, want %v", tt.hosts, tt.host, got, tt.want)
		}
	}
}
