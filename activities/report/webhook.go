package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/temporal"
	"golang.org/x/net/http/httpguts"
)

// A webhook's URL comes from a run's input, which whoever may start a run
// writes; its credentials come from the worker's environment, which only the
// operator writes. What keeps the second from following the first anywhere:
//
//   - a header set goes only to the URLs its operator bound it to
//     (TODOFLOW_WEBHOOK_URLS_<NAME>, see webhookBinding);
//   - no webhook reaches the worker's own machine or the networks behind it
//     (loopback, private, link-local, metadata) unless the operator allows
//     those addresses (TODOFLOW_WEBHOOK_ALLOW_NETS, see webhookaddr.go),
//     checked on the address actually dialled;
//   - redirects are not followed, so neither check can be walked around;
//   - the receiver's answer is not recorded: its status is, its body (which
//     may quote the credentials back) is not.

// WebhookURLsEnvPrefix starts the names of the worker's environment
// variables that bind a header set to its destinations; see WebhookURLsEnv.
const WebhookURLsEnvPrefix = "TODOFLOW_WEBHOOK_URLS_"

// webhookTimeout bounds one webhook delivery, answer included.
const webhookTimeout = 10 * time.Second

// maxRetryAfter caps the delay a webhook may ask for with Retry-After, so
// that a receiver cannot park a run's reporting for days.
const maxRetryAfter = time.Hour

// maxDrain bounds what is read of an answer's body, only so that its
// connection can be used again; nothing of it is kept.
const maxDrain = 64 << 10

// WebhookHeadersEnv returns the environment variable that holds the headers
// a webhook reporter's "headers" names: TODOFLOW_WEBHOOK_HEADERS_ followed by
// the name upper-cased, every byte other than a letter or digit turned to
// '_' ("my-hook" → TODOFLOW_WEBHOOK_HEADERS_MY_HOOK). Its value is a JSON
// object of header name → value, e.g. {"Authorization": "Bearer …"}.
func WebhookHeadersEnv(name string) string { return webhookEnv(api.WebhookHeadersEnvPrefix, name) }

// WebhookURLsEnv returns the environment variable that lists where the
// header set name may be sent: TODOFLOW_WEBHOOK_URLS_ followed by the name
// as WebhookHeadersEnv writes it ("my-hook" →
// TODOFLOW_WEBHOOK_URLS_MY_HOOK). Its value is a list of http or https URLs,
// separated by commas or spaces; a reporter's URL is covered by one with
// the same scheme, host and port and a path under its path
// ("https://hooks.example.com/ops" covers https://hooks.example.com/ops/plans,
// not /opsx nor /ops/../admin; "https://hooks.example.com" the whole host).
// A header set without this variable is sent nowhere.
func WebhookURLsEnv(name string) string { return webhookEnv(WebhookURLsEnvPrefix, name) }

func webhookEnv(prefix, name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if !text.IsAlnum(rune(c)) {
			b[i] = '_'
		}
	}
	return prefix + string(b)
}

// webhookClient posts webhook reports. Its only retries are Temporal's: it
// follows no redirects (a redirected POST may turn into a GET, and a
// redirect would lead the credentials and the address check elsewhere) and
// requests are sent without GetBody, so the transport does not replay them
// either. It dials the receiver itself, never through HTTP(S)_PROXY: the
// address check must see the receiver's address, not a proxy's.
var webhookClient = &http.Client{
	Timeout: webhookTimeout,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
	Transport: &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   webhookTimeout,
			KeepAlive: 30 * time.Second,
			// At dial time, on the address resolved for this very
			// connection: a name that resolves to a public address when
			// checked and to 127.0.0.1 when used (DNS rebinding) is
			// still refused.
			ControlContext: checkDialAddr,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	},
}

// reportWebhook POSTs the event to the reporter's URL.
func reportWebhook(ctx context.Context, rec Record, ev reportEvent, cfg *api.WebhookReport) error {
	nonRetryable := func(err error, typ string) error {
		return temporal.NewNonRetryableApplicationError(err.Error(), typ, nil)
	}
	allow, err := webhookAllowNets()
	if err != nil {
		return nonRetryable(err, ErrTypeConfig)
	}
	headers, err := webhookHeaders(cfg.Headers)
	if err != nil {
		return nonRetryable(err, ErrTypeConfig)
	}
	if cfg.Headers != "" {
		binding, err := readWebhookBinding(cfg.Headers)
		if err != nil {
			return nonRetryable(err, ErrTypeConfig)
		}
		if !binding.covers(cfg.URL) {
			return nonRetryable(fmt.Errorf("webhook reporter: headers %q are not sent to %s: %s does not cover that URL "+
				"(it lists the URLs, or URL prefixes, that header set may be sent to)",
				cfg.Headers, safeURL(cfg.URL), WebhookURLsEnv(cfg.Headers)), ErrTypeForbidden)
		}
	}
	body, err := rec.line()
	if err != nil {
		return err
	}
	where := "webhook " + safeURL(cfg.URL)

	req, err := http.NewRequestWithContext(withAllowNets(ctx, allow), http.MethodPost, cfg.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nonRetryable(fmt.Errorf("%s: %w", where, err), ErrTypeConfig)
	}
	req.GetBody = nil // see webhookClient
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", headerSafe(rec.WorkflowID+"/"+rec.AgentID+"/"+ev.eventID()))

	resp, err := webhookClient.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			// Cancelled or timed out by Temporal: the attempt failed, not
			// the delivery; Temporal decides what comes next.
			return ctxErr
		}
		if refused, ok := errors.AsType[*refusedAddrError](err); ok {
			return nonRetryable(fmt.Errorf("%s: %w", where, refused), ErrTypeForbidden)
		}
		msg := fmt.Sprintf("%s: %v", where, stripURLError(err))
		return temporal.NewApplicationError(msg, ErrTypeRetryable)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))

	status := resp.StatusCode
	if status >= 200 && status <= 299 {
		return nil
	}
	// The status only: the error goes to the run's history, and a body may
	// quote what it refused, credentials included, in forms no redaction
	// can foresee (encoded, cut, reworded).
	msg := fmt.Sprintf("%s: %d %s", where, status, http.StatusText(status))
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly,
		status == http.StatusTooManyRequests, status >= 500:
		return temporal.NewApplicationErrorWithOptions(msg, ErrTypeRetryable, temporal.ApplicationErrorOptions{
			NextRetryDelay: retryAfterDelay(resp.Header.Get("Retry-After"), time.Now()),
		})
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeRejected, nil)
}

// webhookHeaders reads the headers a webhook reporter names from the
// worker's environment. Its errors name the variable, never a value.
func webhookHeaders(name string) (map[string]string, error) {
	if name == "" {
		return nil, nil
	}
	env := WebhookHeadersEnv(name)
	raw, ok := os.LookupEnv(env)
	if !ok {
		return nil, fmt.Errorf("webhook reporter: headers %q: the worker's environment has no %s "+
			`(set it to a JSON object of header names to values, e.g. {"Authorization": "Bearer …"})`, name, env)
	}
	var headers map[string]string
	if err := json.Unmarshal([]byte(raw), &headers); err != nil || headers == nil {
		return nil, fmt.Errorf("webhook reporter: headers %q: %s must hold a JSON object of header names to string values", name, env)
	}
	for h, v := range headers {
		if !httpguts.ValidHeaderFieldName(h) {
			return nil, fmt.Errorf("webhook reporter: headers %q: %s has an invalid header name %q", name, env, text.SpaceControls(h))
		}
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return nil, fmt.Errorf("webhook reporter: headers %q: %s: the value of %s has control characters", name, env, h)
		}
	}
	return headers, nil
}

// webhookBinding is where a header set may be sent: the URLs of its
// TODOFLOW_WEBHOOK_URLS_<NAME>, each covering itself and the paths under it.
type webhookBinding []*url.URL

// readWebhookBinding reads the binding of the header set name from the
// worker's environment. A header set without one is refused for every URL:
// a credential goes where its operator said, not where a run's input says.
// Errors name the variable and an entry by its place, never its text,
// which could hold a credential written where it does not belong.
func readWebhookBinding(name string) (webhookBinding, error) {
	env := WebhookURLsEnv(name)
	const how = "set it to the URLs or URL prefixes these headers may be sent to, separated by commas, " +
		"e.g. https://hooks.example.com/todoflow"
	raw, ok := os.LookupEnv(env)
	if !ok {
		return nil, fmt.Errorf("webhook reporter: headers %q are bound to no URL, so they are sent nowhere: "+
			"the worker's environment has no %s (%s)", name, env, how)
	}
	entries := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(entries) == 0 {
		return nil, fmt.Errorf("webhook reporter: headers %q are bound to no URL, so they are sent nowhere: %s is empty (%s)",
			name, env, how)
	}
	binding := make(webhookBinding, 0, len(entries))
	for i, e := range entries {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
			u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return nil, fmt.Errorf("webhook reporter: headers %q: %s: entry %d is not an http or https URL with a host "+
				"and without credentials, query or fragment", name, env, i+1)
		}
		binding = append(binding, u)
	}
	return binding, nil
}

// covers reports whether u is one of the binding's URLs or under one: the
// same scheme (a credential bound to https is not sent in clear), host and
// port, and a path equal to the entry's or below it by whole segments, after
// dot segments are resolved (as the receiver would resolve them).
func (b webhookBinding) covers(u *url.URL) bool {
	for _, e := range b {
		if e.Scheme == u.Scheme && sameHost(e.Hostname(), u.Hostname()) &&
			effectivePort(e) == effectivePort(u) && underPath(u.Path, e.Path) {
			return true
		}
	}
	return false
}

// sameHost compares host names as DNS does (case, a final dot) and
// addresses as addresses (::ffff:7f00:1 is 127.0.0.1).
func sameHost(a, b string) bool {
	if x, err := netip.ParseAddr(a); err == nil {
		y, err := netip.ParseAddr(b)
		return err == nil && x.Unmap() == y.Unmap()
	}
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// effectivePort is the port a URL is dialled on.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// underPath reports whether the URL path p is prefix or below it.
func underPath(p, prefix string) bool {
	p = path.Clean("/" + p)
	prefix = strings.TrimSuffix(path.Clean("/"+prefix), "/")
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}

// headerSafe percent-escapes the control characters a header value cannot hold.
func headerSafe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// safeURL is the URL for messages: without credentials, query or fragment.
func safeURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// stripURLError drops the *url.Error wrapper, whose text repeats the URL
// with its query.
func stripURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// retryAfterDelay reads Retry-After (seconds or an HTTP date); 0 when absent
// or unusable, at most maxRetryAfter.
func retryAfterDelay(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(n) || n <= 0 {
			return 0
		}
		if n >= maxRetryAfter.Seconds() {
			return maxRetryAfter
		}
		d = time.Duration(n * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, maxRetryAfter))
}
