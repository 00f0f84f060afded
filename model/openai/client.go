package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/todoflow/todoflow/model"
)

// DefaultBaseURL is used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Environment variables read by NewFromEnv.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// Options configures a Client.
type Options struct {
	// APIKey is sent as a bearer token. It may be empty only when BaseURL is
	// set, since local servers often need no key.
	APIKey string
	// BaseURL is the endpoint root, e.g. "http://localhost:11434/v1"; empty
	// means DefaultBaseURL.
	BaseURL string
	// HTTPClient replaces the SDK's default HTTP client, e.g. to add a proxy
	// or a test transport.
	HTTPClient *http.Client
	// Timeout bounds one request. Zero leaves the bound to the caller's
	// context, which in the worker is the activity's start-to-close timeout.
	Timeout time.Duration
}

// Client is a model.Client for Chat Completions endpoints. It is safe for
// concurrent use.
type Client struct {
	sdk oai.Client
	// baseURL is the endpoint without credentials, for error messages.
	baseURL string
	// apiKey is kept only to scrub it out of server messages.
	apiKey  string
	timeout time.Duration
}

var _ model.Client = (*Client)(nil)

// NewFromEnv builds a Client from OPENAI_API_KEY and OPENAI_BASE_URL.
func NewFromEnv() (*Client, error) {
	return New(Options{
		APIKey:  os.Getenv(EnvAPIKey),
		BaseURL: os.Getenv(EnvBaseURL),
	})
}

// New builds a Client. It fails when neither an API key nor a base URL is
// given: that is a missing configuration, not an anonymous call to OpenAI.
func New(opts Options) (*Client, error) {
	if opts.APIKey == "" && opts.BaseURL == "" {
		return nil, fmt.Errorf("openai: no API key: set %s, or set %s to an OpenAI-compatible server that needs no key", EnvAPIKey, EnvBaseURL)
	}
	base := opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("openai: invalid base URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: invalid base URL %q: want http(s)://host[:port][/path]", u.Redacted())
	}

	// Both the key and the base URL are set explicitly, even when empty, so
	// that the SDK's own reading of the environment cannot override what the
	// caller asked for (an empty key must stay empty).
	ro := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(0), // Temporal owns retries; see the package doc.
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	if opts.Timeout > 0 {
		ro = append(ro, option.WithRequestTimeout(opts.Timeout))
	}
	return &Client{
		sdk:     oai.NewClient(ro...),
		baseURL: u.Redacted(),
		apiKey:  opts.APIKey,
		timeout: opts.Timeout,
	}, nil
}

// BaseURL returns the endpoint the client talks to, without credentials.
func (c *Client) BaseURL() string { return c.baseURL }

// Complete sends one chat completion request and converts its first choice.
// It makes exactly one HTTP request; every error is a *model.Error. With
// req.Stream set the request is streamed (see completeStream).
func (c *Client) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Model == "" {
		return model.Response{}, &model.Error{Message: "openai: no model name given (use openai:<model name>)"}
	}
	params, err := buildParams(req)
	if err != nil {
		return model.Response{}, &model.Error{
			Message: fmt.Sprintf("openai: model %q: cannot build request: %v", req.Model, err),
			Err:     err,
		}
	}

	// The raw response is kept so that an error body the SDK cannot decode
	// (some servers send {"error": "text"}) can still be classified by status.
	var httpResp *http.Response
	callCtx := ctx
	if c.timeout > 0 {
		// The SDK applies its request timeout too; bounding the call here
		// as well keeps the bound independent of the SDK's retry loop.
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	if req.Stream != nil {
		return c.completeStream(ctx, callCtx, req, params)
	}
	completion, err := c.sdk.Chat.Completions.New(callCtx, params, option.WithResponseInto(&httpResp))
	if err != nil {
		return model.Response{}, c.classify(ctx, req.Model, httpResp, err)
	}
	resp, err := convertResponse(completion, req.Call)
	if err != nil {
		// An answer without choices is what an overloaded or misbehaving
		// proxy produces; asking again is the only remedy.
		return model.Response{}, &model.Error{
			Retryable: true,
			Message:   fmt.Sprintf("openai: model %q at %s: %v", req.Model, c.baseURL, err),
			Err:       err,
		}
	}
	return resp, nil
}

// errNoChoices is returned (wrapped) when a 2xx answer has no choices.
var errNoChoices = errors.New("response has no choices")
