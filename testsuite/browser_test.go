//go:build unix

package testsuite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// chromium is the browser the Web UI tests drive: Debian's chromium, or another Chrome
// on PATH. The test skips, saying so, where there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH, so the Web UI cannot be loaded in a browser; install it (Debian: apt-get install chromium; .ci/run does)")
	return ""
}

// browser is a headless chromium driven over the DevTools protocol: the test loads a page
// and looks at it until what it waits for is there, however long the single-page app
// takes on a busy machine. (chromium --dump-dom with a virtual time budget needs no
// protocol, but it hung for good here under load, so a test built on it could only guess
// how long to wait.)
type browser struct {
	cmd    *exec.Cmd
	page   *websocket.Conn
	nextID int
	logMu  sync.Mutex
	log    bytes.Buffer // the browser's stderr, for failures
}

// startBrowser starts chromium with one blank page and connects to that page. The
// browser and its helper processes are killed when ctx ends or the test does.
func startBrowser(ctx context.Context, t *testing.T, path string) (*browser, error) {
	args := []string{
		"--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,1000", "--remote-debugging-port=0", "about:blank",
	}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // chromium refuses to run as root with its sandbox
	}
	b := &browser{cmd: exec.CommandContext(ctx, path, args...)}
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b.cmd.Cancel = func() error { return syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) }
	b.cmd.WaitDelay = 5 * time.Second
	stderr, err := b.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	t.Cleanup(b.close)

	// chromium says where its DevTools endpoint listens on stderr; the rest of stderr is
	// kept for failure messages.
	endpoint := make(chan string, 1)
	go func() {
		listening := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.logMu.Lock()
			b.log.WriteString(sc.Text() + "\n")
			b.logMu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				endpoint <- m[1]
			}
		}
		close(endpoint)
	}()
	var browserURL string
	select {
	case u, ok := <-endpoint:
		if !ok {
			return nil, fmt.Errorf("%s ended without a DevTools endpoint: %s", path, b.output())
		}
		browserURL = u
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("%s has not said where its DevTools endpoint is after a minute: %s", path, b.output())
	}
	u, err := url.Parse(browserURL)
	if err != nil {
		return nil, err
	}
	pageURL, err := firstPage(ctx, u.Host)
	if err != nil {
		return nil, err
	}
	b.page, _, err = websocket.Dial(ctx, pageURL, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to the page: %w", err)
	}
	b.page.SetReadLimit(64 << 20) // a page's DOM and a screenshot are far over the default 32 KiB
	return b, nil
}

// firstPage is the DevTools address of the browser's page.
func firstPage(ctx context.Context, host string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/json/list", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("list the browser's pages: %w", err)
	}
	defer resp.Body.Close()
	var targets []struct{ Type, WebSocketDebuggerURL string }
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return "", fmt.Errorf("list the browser's pages: %w", err)
	}
	for _, tg := range targets {
		if tg.Type == "page" && tg.WebSocketDebuggerURL != "" {
			return tg.WebSocketDebuggerURL, nil
		}
	}
	return "", fmt.Errorf("the browser has no page: %+v", targets)
}

// call sends one DevTools command to the page and decodes its result into out (nil: none).
func (b *browser) call(ctx context.Context, method string, params, out any) error {
	b.nextID++
	id := b.nextID
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	if err := b.page.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	for {
		_, data, err := b.page.Read(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &reply); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		if reply.ID != id {
			continue // an event, or the answer to a call that timed out
		}
		if reply.Error != nil {
			return fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(reply.Result, out)
	}
}

func (b *browser) navigate(ctx context.Context, page string) error {
	return b.call(ctx, "Page.navigate", map[string]any{"url": page}, nil)
}

// eval evaluates a JavaScript expression in the page and decodes its value into out.
func (b *browser) eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	if err := b.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("evaluate %q: %s", expr, r.ExceptionDetails.Text)
	}
	return json.Unmarshal(r.Result.Value, out)
}

// screenshot is the page as the window shows it, as PNG.
func (b *browser) screenshot(ctx context.Context) ([]byte, error) {
	var r struct{ Data string }
	if err := b.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

// output is the end of what the browser wrote on stderr.
func (b *browser) output() string {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	s := b.log.String()
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}

func (b *browser) close() {
	if b.page != nil {
		_ = b.page.CloseNow()
	}
	if b.cmd.Process != nil {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		_ = b.cmd.Wait()
	}
}
