package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/internal/text"
)

// ReporterConfig is one entry of a workflow input's `reporters` list (jaato's
// reporter_type + reporter_config): {"type": "console"|"file"|"webhook",
// "config": {...}}.
//
//   - console: no config; each event is one line in the worker's log.
//   - file: {"path": "plans.log"}; each event is appended as a JSON line to
//     <worker state folder>/reports/<session key>/<path>: a file of the
//     run's own session (session.go), which no other session's run can
//     name. The path must be relative and stay inside that folder.
//   - webhook: {"url": "https://…", "headers": "NAME"}; each event is POSTed
//     as JSON. headers (optional) names a JSON object of header → value in
//     the worker's environment variable TODOFLOW_WEBHOOK_HEADERS_<NAME> (see
//     package activities/report), so that credentials stay on the worker and
//     out of workflow history; they are sent only to the URLs the worker's
//     TODOFLOW_WEBHOOK_URLS_<NAME> binds them to. The worker checks both when
//     it delivers (Validate cannot: it runs in workflow code, which must not
//     read the environment), and refuses addresses on its own machine and
//     private networks unless TODOFLOW_WEBHOOK_ALLOW_NETS allows them.
type ReporterConfig struct {
	Type   string          `json:"type"`
	Config json.RawMessage `json:"config,omitempty"`
	// RetryWindowS bounds, in seconds, how long one event is retried before
	// it counts as failed; 0 means DefaultRetryWindow.
	RetryWindowS int `json:"retry_window_s,omitempty"`
}

// RetryWindow is how long one event is retried.
func (r ReporterConfig) RetryWindow() time.Duration {
	if r.RetryWindowS <= 0 {
		return DefaultReportRetryWindow
	}
	return time.Duration(r.RetryWindowS) * time.Second
}

// FileReport is a file reporter's config, parsed.
type FileReport struct {
	Path string
}

// WebhookReport is a webhook reporter's config, parsed.
type WebhookReport struct {
	URL     *url.URL
	Headers string // a name, see report.WebhookHeadersEnv; "" for none
}

// reporterFields are the config fields each reporter type accepts.
var reporterFields = map[string][]string{
	ReporterConsole: nil,
	ReporterFile:    {"path"},
	ReporterWebhook: {"url", "headers"},
}

// Validate checks a reporter config without I/O, so that a workflow can
// refuse a bad `reporters` entry at its start rather than at its first event.
func (r ReporterConfig) Validate() error {
	if r.RetryWindowS < 0 || r.RetryWindow() > MaxReportRetryWindow {
		return fmt.Errorf("%s reporter: retry_window_s is %d: want 1 to %d seconds (default %d)",
			r.Type, r.RetryWindowS, int(MaxReportRetryWindow.Seconds()), int(DefaultReportRetryWindow.Seconds()))
	}
	_, _, err := r.Parse()
	return err
}

// Parse checks the config and returns it parsed, as its type has it: a
// file reporter's or a webhook's (both nil for the console).
func (r ReporterConfig) Parse() (*FileReport, *WebhookReport, error) {
	known, ok := reporterFields[r.Type]
	if !ok {
		if r.Type == "" {
			return nil, nil, errors.New(`reporter: "type" is required (console, file or webhook)`)
		}
		return nil, nil, fmt.Errorf("reporter: unknown type %q (want console, file or webhook)", r.Type)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s reporter: %s", r.Type, fmt.Sprintf(format, args...))
	}

	fields := map[string]json.RawMessage{}
	if raw := bytes.TrimSpace(r.Config); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
			return nil, nil, fail("config must be a JSON object")
		}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			if len(known) == 0 {
				return nil, nil, fail("unknown config field %q (a %s reporter takes no config)", name, r.Type)
			}
			return nil, nil, fail("unknown config field %q (known: %s)", name, strings.Join(known, ", "))
		}
	}
	// str reads an optional string field; ok is false when it is absent or null.
	str := func(name string) (string, bool, error) {
		raw, present := fields[name]
		if !present || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, fail("%q must be a string", name)
		}
		return s, true, nil
	}

	switch r.Type {
	case ReporterFile:
		p, ok, err := str("path")
		if err != nil {
			return nil, nil, err
		}
		if !ok || p == "" {
			return nil, nil, fail(`"path" is required (a file in the session's reports folder on the worker)`)
		}
		if err := checkReportPath(p); err != nil {
			return nil, nil, fail("path %q: %v", p, err)
		}
		return &FileReport{Path: filepath.Clean(filepath.FromSlash(p))}, nil, nil

	case ReporterWebhook:
		raw := strings.TrimSpace(string(fields["headers"]))
		if strings.HasPrefix(raw, "{") {
			return nil, nil, fail(`"headers" must name a set of headers in the worker's configuration, not hold them: ` +
				`workflow inputs are stored in workflow history, where credentials must not be. ` +
				`Put the headers, as a JSON object, in the worker's environment variable ` +
				WebhookHeadersEnvPrefix + `<NAME> and set "headers" to NAME`)
		}
		headers, named, err := str("headers")
		if err != nil {
			return nil, nil, fail(`"headers" must be a string naming the worker's environment variable ` +
				WebhookHeadersEnvPrefix + `<NAME> that holds the headers`)
		}
		if named && !strings.ContainsFunc(headers, text.IsAlnum) {
			return nil, nil, fail(`"headers" must be a name with letters or digits (it selects the worker's environment variable %s<NAME>)`,
				WebhookHeadersEnvPrefix)
		}
		if len(headers) > 100 {
			return nil, nil, fail(`"headers" name is too long (at most 100 bytes)`)
		}
		s, ok, err := str("url")
		if err != nil {
			return nil, nil, err
		}
		if !ok || s == "" {
			return nil, nil, fail(`"url" is required`)
		}
		u, err := url.Parse(s)
		if err != nil {
			return nil, nil, fail(`"url" is not a valid URL`)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, nil, fail(`"url" must be an absolute http or https URL, got %q`, u.Redacted())
		}
		if u.Host == "" || u.Hostname() == "" {
			return nil, nil, fail(`"url" has no host: %q`, u.Redacted())
		}
		if u.User != nil {
			return nil, nil, fail(`"url" must not carry credentials (workflow inputs are stored in workflow history): `+
				`put an Authorization header in the worker's environment variable %s<NAME> and set "headers" to NAME`,
				WebhookHeadersEnvPrefix)
		}
		return nil, &WebhookReport{URL: u, Headers: headers}, nil
	}
	return nil, nil, nil // console
}

// checkReportPath refuses paths that are absolute or leave the session's
// reports folder: a workflow input must not choose arbitrary files on the
// worker, nor another session's.
func checkReportPath(p string) error {
	switch {
	case strings.ContainsRune(p, 0):
		return errors.New("contains a NUL byte")
	case filepath.IsAbs(p), strings.HasPrefix(p, "/"), strings.HasPrefix(p, `\`), filepath.VolumeName(p) != "":
		return errors.New("must be relative to the session's reports folder, not absolute")
	case !filepath.IsLocal(filepath.FromSlash(p)):
		return errors.New(`must stay inside the session's reports folder (no ".." leading out of it)`)
	case filepath.Clean(filepath.FromSlash(p)) == ".", strings.HasSuffix(p, "/"), strings.HasSuffix(p, `\`):
		return errors.New("must name a file, not a folder")
	}
	return nil
}

// Reporter types, as jaato's reporter_type names them.
const (
	ReporterConsole = "console"
	ReporterFile    = "file"
	ReporterWebhook = "webhook"
)

// Bounds of a reporter's retry window per event.
const (
	DefaultReportRetryWindow = 2 * time.Minute
	MaxReportRetryWindow     = time.Hour
)

// WebhookHeadersEnvPrefix starts the names of the worker's environment
// variables that hold webhook headers; see WebhookHeadersEnv.
const WebhookHeadersEnvPrefix = "TODOFLOW_WEBHOOK_HEADERS_"
