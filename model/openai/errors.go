package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
)

// maxServerMessage bounds how much of an error body ends up in a message:
// a proxy's HTML error page is no use in a workflow history.
const maxServerMessage = 500

// classify turns an SDK error into a *model.Error. httpResp is the last HTTP
// response, when there was one.
func (c *Client) classify(ctx context.Context, modelName string, httpResp *http.Response, err error) *model.Error {
	status, header, serverMsg, code := 0, http.Header(nil), "", ""
	var apiErr *oai.Error
	switch {
	case errors.As(err, &apiErr):
		status, serverMsg, code = apiErr.StatusCode, apiErr.Message, apiErr.Code
		if apiErr.Response != nil {
			header = apiErr.Response.Header
			if serverMsg == "" {
				var bodyCode string
				serverMsg, bodyCode = errorFromBody(apiErr.Response.Body)
				if code == "" {
					code = bodyCode
				}
			}
		}
	case httpResp != nil && httpResp.StatusCode >= 400:
		// The SDK could not decode the error body into its own shape, but
		// the status is what decides retryability.
		status, header = httpResp.StatusCode, httpResp.Header
		serverMsg, code = errorFromBody(httpResp.Body)
	}

	where := fmt.Sprintf("openai: model %q at %s", modelName, c.baseURL)
	if status == 0 {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return &model.Error{
				Retryable: true,
				Message:   fmt.Sprintf("%s: request abandoned: %v", where, ctxErr),
				Err:       err,
			}
		}
		// Connection refused, DNS, TLS, timeouts, unreadable bodies: the
		// server may come back, so let Temporal try again.
		if errors.Is(err, context.DeadlineExceeded) && c.timeout > 0 {
			return &model.Error{
				Retryable: true,
				Message:   fmt.Sprintf("openai: %s did not answer within %v", c.baseURL, c.timeout),
				Err:       err,
			}
		}
		if httpResp != nil && httpResp.StatusCode < 400 {
			// An answer whose body is no chat completion: a proxy's page,
			// a cut-off body. Said so, in words: the SDK's error names Go
			// types.
			return &model.Error{
				Retryable:  true,
				StatusCode: httpResp.StatusCode,
				Message:    fmt.Sprintf("%s: the answer (HTTP %d) is not a chat completion: %s", where, httpResp.StatusCode, bodyProblem(httpResp, err)),
				Err:        err,
			}
		}
		return &model.Error{
			Retryable: true,
			Message:   fmt.Sprintf("openai: cannot get an answer from %s: %v", c.baseURL, err),
			Err:       err,
		}
	}

	serverMsg = shorten(c.redact(serverMsg))
	if serverMsg == "" {
		serverMsg = cmp.Or(http.StatusText(status), "no message")
	}
	line := statusLine(status)
	e := &model.Error{StatusCode: status, Err: err}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Message = fmt.Sprintf("%s: %s: check %s (server said: %s)", where, line, EnvAPIKey, serverMsg)
	case contextOverflow(status, code, serverMsg):
		// Not retryable: the same request would be refused again. The flag
		// tells the agent that a shorter transcript would be accepted.
		e.ContextOverflow = true
		e.Message = fmt.Sprintf("%s: %s: the request does not fit the model's context window (server said: %s)", where, line, serverMsg)
	case retryableStatus(status):
		e.Retryable = true
		e.RetryAfter = retryAfter(header, time.Now())
		e.Message = fmt.Sprintf("%s: %s: %s", where, line, serverMsg)
	default:
		e.Message = fmt.Sprintf("%s: %s: %s", where, line, serverMsg)
	}
	return e
}

// statusLine is "429 Too Many Requests", or the bare number for a status
// without a name.
func statusLine(status int) string {
	if text := http.StatusText(status); text != "" {
		return fmt.Sprintf("%d %s", status, text)
	}
	return strconv.Itoa(status)
}

// bodyProblem says why a successful answer's body could not be read as a
// chat completion, in words: the SDK's error names Go types.
func bodyProblem(resp *http.Response, err error) string {
	if _, ok := errors.AsType[*json.SyntaxError](err); ok {
		return "its body is not valid JSON"
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		if te.Field == "" {
			return fmt.Sprintf("its body is a JSON %s, not an object", te.Value)
		}
		return fmt.Sprintf("its field %s holds a JSON %s", te.Field, te.Value)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "its body ends too early"
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "json") {
		return fmt.Sprintf("its content type is %q, not JSON", shorten(ct))
	}
	return shorten(strings.TrimPrefix(err.Error(), "error parsing response json: "))
}

// retryableStatus reports whether an HTTP status is worth another attempt:
// timeouts, conflicts, rate limits and server errors are, as in the SDK's own
// retry policy that is switched off here.
func retryableStatus(status int) bool {
	switch {
	case status == http.StatusRequestTimeout,
		status == http.StatusConflict,
		status == http.StatusTooManyRequests,
		status >= 500:
		return true
	}
	return false
}

// retryAfter reads the delay the server asked for. retry-after-ms is
// preferred because it is more precise; Retry-After may hold seconds or an
// HTTP date. It returns 0 when there is no usable header.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if d, ok := parseDelay(v, time.Millisecond); ok {
			return d
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if d, ok := parseDelay(v, time.Second); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// parseDelay parses a non-negative number of units; fractions are allowed
// because some servers send "1.5".
func parseDelay(v string, unit time.Duration) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	d := f * float64(unit)
	if d > math.MaxInt64 {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(d), true
}

// codeContextLengthExceeded is the OpenAI error code of a request that does
// not fit the model's context window; servers that copy OpenAI's error shape
// (Azure OpenAI among them) send it too.
const codeContextLengthExceeded = "context_length_exceeded"

// contextOverflowWording matches how OpenAI-compatible servers that send no
// such code say that a request is too long for the model. They agree on no
// code and no wording, so this is a list of the phrases in use:
//
//	OpenAI, vLLM, Mistral: "This model's maximum context length is 8192 tokens"
//	vLLM:                  "... is longer than the model's context length (4096)",
//	                       "... is longer than the maximum model length of 4096"
//	llama.cpp server:      "the request exceeds the available context size"
//	Ollama:                "input length exceeds maximum context length",
//	                       "prompt too long; exceeded max context length by 12 tokens"
//	OpenAI Responses:      "Your input exceeds the context window of this model"
//	Anthropic-compatible:  "prompt is too long: 210000 tokens > 200000 maximum"
//	others:                "too many tokens"
var contextOverflowWording = regexp.MustCompile(`(?i)` +
	`maximum context length` +
	`|longer than the (?:model's )?(?:context length|maximum model length)` +
	`|exceed(?:s|ed)? (?:the )?(?:available |max(?:imum)? )?context (?:length|size|window)` +
	`|context (?:length|size|window) (?:exceeded|limit exceeded)` +
	`|prompt is too long` +
	`|too many tokens` +
	`|context_length_exceeded`)

// contextOverflow reports whether an error answer says the request does not
// fit the model's context window. Only 400 (what OpenAI and most compatible
// servers send) and 413 (what some proxies in front of them send) count: a
// rate limit that mentions tokens is a reason to wait, not to shorten.
func contextOverflow(status int, code, message string) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
		return false
	}
	return code == codeContextLengthExceeded || contextOverflowWording.MatchString(message)
}

// errorFromBody extracts a readable message, and the error code when there
// is one, from an error body whose shape the SDK did not recognise.
// Compatible servers disagree: vLLM sends {"message": ...} at the top level,
// others {"error": "text"} or FastAPI's {"detail": ...}; anything else is
// shown as (shortened) text. Only a code that is a string is returned: vLLM
// puts the HTTP status there as a number.
func errorFromBody(body io.Reader) (message, code string) {
	if body == nil {
		return "", ""
	}
	data, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return "", ""
	}
	var shaped struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &shaped) == nil {
		var inner struct {
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		}
		innerOK := json.Unmarshal(shaped.Error, &inner) == nil
		code = stringCode(shaped.Code)
		if code == "" && innerOK {
			code = stringCode(inner.Code)
		}
		if shaped.Message != "" {
			return shaped.Message, code
		}
		var s string
		if json.Unmarshal(shaped.Error, &s) == nil && s != "" {
			return s, code
		}
		if innerOK && inner.Message != "" {
			return inner.Message, code
		}
		if json.Unmarshal(shaped.Detail, &s) == nil && s != "" {
			return s, code
		}
		if len(shaped.Detail) > 0 {
			return shorten(string(shaped.Detail)), code
		}
	}
	return shorten(strings.TrimSpace(string(data))), code
}

// stringCode returns a JSON error code when it is a string, "" otherwise.
func stringCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// shorten makes a server's text fit a message: valid UTF-8 (a Temporal
// failure's message must be) and at most maxServerMessage bytes, the mark of
// the cut included, so that shortening twice changes nothing.
func shorten(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxServerMessage {
		return s
	}
	const mark = "…"
	return text.Cut(s, maxServerMessage-len(mark)) + mark
}

// keyLike matches OpenAI-style secret keys. OpenAI's 401 message quotes a
// masked form of the key that was sent; even a partial key does not belong in
// a workflow history.
var keyLike = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-*.]+`)

// redact removes the configured key and anything that looks like a key.
func (c *Client) redact(s string) string {
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}
