package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
	"github.com/todoflow/todoflow/model"
)

// Fuzz targets of the conversion. `go test ./model/openai` replays their
// seeds; to search for new inputs:
//
//	go test ./model/openai -run '^$' -fuzz '^FuzzComplete$' -fuzztime 60s -parallel 2
//	go test ./model/openai -run '^$' -fuzz '^FuzzArguments$' -fuzztime 60s -parallel 2

// cannedTransport answers every request with one status and body, without
// a network: the fuzz target runs the whole Complete, SDK decoding included.
type cannedTransport struct {
	status      int
	contentType string
	body        []byte
}

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: c.status,
		Status:     http.StatusText(c.status),
		Header:     http.Header{"Content-Type": {c.contentType}},
		Body:       io.NopCloser(bytes.NewReader(c.body)),
		Request:    req,
	}, nil
}

// FuzzComplete answers a Complete call with any body, as a 2xx answer or as
// an error status. The call returns a Response or a *model.Error, never
// panics; an error's message is clear, short, valid UTF-8 and free of the
// key; a Response's tool calls all have an id and arguments that are a JSON
// object or, for text that is not one, that text as a JSON string, which
// goes back to the model as the model sent it.
func FuzzComplete(f *testing.F) {
	for _, body := range []string{
		completion(`{"role":"assistant","content":"Hello."}`),
		completion(`{"role":"assistant","content":null,"refusal":"I can't help with that."}`),
		completion(`{"role":"assistant","content":null,"tool_calls":[` +
			`{"id":"call_abc","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"main.go\"}"}},` +
			`{"id":"call_def","type":"function","function":{"name":"todo_read","arguments":""}}]}`),
		completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"path=main.go"}}]}`),
		completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"path\":"}}]}`),
		completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{"a":1}}}]}`),
		completion(`{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"[1,2]"}}]}`),
		completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"custom","custom":{"name":"g","input":"raw text"}}]}`),
		`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m","choices":[]}`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":"many"}}`,
		`{"error":{"message":"Incorrect API key provided: sk-test-****6789.","type":"invalid_request_error","code":"invalid_api_key"}}`,
		`{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`,
		`{"message":"vLLM says no","code":400}`,
		`{"detail":[{"loc":["body"],"msg":"field required"}]}`,
		`<html><body>502 Bad Gateway</body></html>`,
		``,
		`null`,
	} {
		for _, status := range []uint16{200, 400, 401, 429, 503} {
			f.Add(status, []byte(body), uint8(1), status == 503 && strings.HasPrefix(body, "<"))
		}
	}
	f.Fuzz(func(t *testing.T, status uint16, body []byte, call uint8, html bool) {
		// A 2xx answer or an error status; a 3xx without a Location is
		// no answer a server gives.
		code := int(status)
		if code < 200 || code >= 600 || code >= 300 && code < 400 {
			code = 200 + code%100
		}
		contentType := "application/json"
		if html {
			contentType = "text/html; charset=utf-8"
		}
		c, err := New(Options{APIKey: testKey, BaseURL: "http://model.invalid/v1",
			HTTPClient: &http.Client{Transport: cannedTransport{code, contentType, body}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Complete(context.Background(), model.Request{Model: "m", Call: int(call) + 1})
		if err != nil {
			checkModelError(t, code, err)
			return
		}
		if code >= 400 {
			t.Fatalf("status %d answered with %+v", code, resp)
		}
		checkResponse(t, resp)
	})
}

func checkModelError(t *testing.T, code int, err error) {
	t.Helper()
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("status %d: error %T %v is not a *model.Error", code, err, err)
	}
	// What the server said is quoted as it is: only what the client adds
	// must be clear, so the server's part is left out of the check.
	own, _, _ := strings.Cut(me.Message, "(server said:")
	fuzzcheck.Message(t, "Complete", own)
	if !utf8.ValidString(me.Message) {
		t.Fatalf("status %d: message is not valid UTF-8 (a workflow failure must be): %q", code, me.Message)
	}
	if strings.Contains(me.Message, testKey) || keyLike.MatchString(me.Message) {
		t.Fatalf("status %d: message shows the key or one like it: %q", code, me.Message)
	}
	if len(me.Message) > maxServerMessage+200 {
		t.Fatalf("status %d: message of %d bytes, want the server's part cut to %d: %.200q…", code, len(me.Message), maxServerMessage, me.Message)
	}
}

func checkResponse(t *testing.T, resp model.Response) {
	t.Helper()
	for i, tc := range resp.ToolCalls {
		if tc.ID == "" {
			t.Fatalf("tool call %d has no id: %+v", i, tc)
		}
		args := bytes.TrimSpace(tc.Arguments)
		if !json.Valid(args) || len(args) == 0 || args[0] != '{' && args[0] != '"' {
			t.Fatalf("tool call %d: arguments %q are neither a JSON object nor a JSON string", i, tc.Arguments)
		}
	}
	// What the activity returns is stored in history as JSON and read back.
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatalf("the response does not marshal: %v", err)
	}
	var back model.Response
	if err := json.Unmarshal(b, &back); err != nil || back.Content != resp.Content || len(back.ToolCalls) != len(resp.ToolCalls) {
		t.Fatalf("the response does not come back from JSON: %v\n%s", err, b)
	}
}

// FuzzArguments checks the round trip of a tool call's argument text: what
// a model sends, kept as JSON in the transcript, is sent back to the model as
// it was sent (an object without its surrounding spaces, nothing as {}).
func FuzzArguments(f *testing.F) {
	for _, s := range []string{`{"path": "main.go"}`, ``, `  `, `path=main.go`, `{"path":`, `[1,2]`, `"quoted"`,
		`{"a": "<b> & c"}`, " {\"a\":1}\n", `{"a":1} trailing`, `null`, "caf\u00e9", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			// Decoding the response body has already replaced broken
			// UTF-8: the SDK never hands such text over.
			return
		}
		args := normalizeArguments(text)
		if !json.Valid(args) {
			t.Fatalf("normalizeArguments(%q) = %q, not JSON", text, args)
		}
		want := text
		switch trimmed := strings.TrimSpace(text); {
		case trimmed == "":
			want = "{}"
		case trimmed[0] == '{' && json.Valid([]byte(trimmed)):
			want = trimmed
		}
		if got := argumentsText(args); got != want {
			t.Fatalf("argumentsText(normalizeArguments(%q)) = %q, want %q", text, got, want)
		}
	})
}
