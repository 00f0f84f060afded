//go:build unix

package testsuite

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/workflows"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "TestWebUIShowsTheRun: write the screenshot of the run's page to "+screenshotPath)

// screenshotPath is the README's picture of a run in the Web UI, from the package folder.
const screenshotPath = "../docs/webui-run.png"

// TestWebUIShowsTheRun loads a finished run's page in the dev server's Web UI with a
// headless chromium, as a person would open it, and finds there what todoflow puts on it:
// the static summary (the task's first line), the static details (model, limits) and the
// checklist, which the workflow keeps as its current details. The UI shows the three on
// the run's User Metadata tab, each rendered in a frame whose address carries the
// markdown (/render?content=…); the DOM holds those addresses, and the screenshot shows
// them rendered. -update-screenshot writes the screenshot to docs/ for the README.
func TestWebUIShowsTheRun(t *testing.T) {
	browser := chromium(t)
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // includes a cold build of the server
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{SearchAttributes: workflows.SearchAttributes(), Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("start dev server: %v", err)
	}
	defer srv.Stop()
	if srv.UIAddress() == "" {
		t.Fatal("the dev server has no Web UI")
	}
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := devserver.EnsureSearchAttributes(ctx, c, srv.Namespace(), workflows.SearchAttributes()); err != nil {
		t.Fatal(err)
	}
	// The worker stays up while the page loads: the UI reads the current details with a
	// query, which a worker answers, finished run or not.
	w, err := agentworker.New(c, agentworker.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	items := []string{"Read the open issues", "Group the fixes by area", "Write the release notes"}
	todos := func(statuses ...string) string {
		var list []map[string]string
		for i, s := range statuses {
			list = append(list, map[string]string{"content": items[i], "status": s})
		}
		return mustJSON(t, map[string]any{"tool_calls": []any{map[string]any{"name": "write_todos", "arguments": map[string]any{"todos": list}}}})
	}
	sc := writeScenario(t, fmt.Sprintf(`{"name": "release notes", "input": {"prompt": "Draft the release notes for v0.3\nfrom the issues closed since v0.2."},
	  "model": [%s, %s, %s, {"content": "The release notes for v0.3 are drafted."}]}`,
		todos("in_progress", "pending", "pending"), todos("completed", "in_progress", "pending"), todos("completed", "completed", "completed")))
	playCtx, stopPlay := context.WithTimeout(ctx, 2*time.Minute)
	defer stopPlay()
	out, err := scenario.Play(playCtx, c, sc, scenario.Options{WorkflowID: "release-notes-v0.3", Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	st := decodeState(t, out)
	if out.RunStatus != "completed" || len(st.Todos) != len(items) {
		t.Fatalf("the run ended %s with %d todos; want completed with %d", out.RunStatus, len(st.Todos), len(items))
	}
	d, err := c.DescribeWorkflowExecution(ctx, out.WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	runID := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	page := fmt.Sprintf("http://%s/namespaces/%s/workflows/%s/%s/user-metadata",
		srv.UIAddress(), url.PathEscape(srv.Namespace()), url.PathEscape(out.WorkflowID), runID)

	shot := filepath.Join(t.TempDir(), "webui-run.png")
	if *updateScreenshot {
		shot = screenshotPath
	}
	var frames []string
	var loaded bool
	for _, budget := range []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second} {
		dom, err := loadPage(ctx, t, browser, page, budget, shot)
		if err != nil {
			t.Fatal(err)
		}
		frames = renderedMarkdown(dom)
		if loaded = hasFrame(frames, "Done: 3/3"); loaded {
			break
		}
		t.Logf("after %s of the page's time, the checklist is not on it yet; %d frames: %q", budget, len(frames), frames)
	}
	if !loaded {
		t.Fatalf("no frame of %s shows the finished checklist; frames: %q", page, frames)
	}
	// The player sets workflows.Describe's summary and details, with the scenario's name.
	summary, details := workflows.Describe(sc.RunInput())
	for what, want := range map[string][]string{
		"the summary":         {"Draft the release notes for v0.3", summary},
		"the details":         {details, "- **Model:** `script:" + sc.Path + "`", "- **Scenario:** release notes"},
		"the current details": {"**main**: completed", "- [x] " + items[0], "- [x] " + items[1], "- [x] " + items[2], "Done: 3/3"},
	} {
		if !hasFrame(frames, want...) {
			t.Errorf("no frame of the page shows %s (%q); frames: %q", what, want, frames)
		}
	}
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("no PNG screenshot at %s: %v", shot, err)
	}
	if *updateScreenshot {
		t.Logf("wrote %s (%d bytes)", shot, len(png))
	}
}

// chromium is the browser the test drives: Debian's chromium, or another Chrome on PATH.
// The test skips, saying so, where there is none.
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

// loadPage loads page in a headless browser for budget of the page's own (virtual) time,
// which lets the single-page app fetch and render, and returns the DOM; it writes a
// screenshot to shot. A browser that hangs is killed with its helper processes.
func loadPage(ctx context.Context, t *testing.T, browser, page string, budget time.Duration, shot string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, budget+90*time.Second)
	defer cancel()
	args := []string{
		"--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,1000",
		fmt.Sprintf("--virtual-time-budget=%d", budget.Milliseconds()),
		"--screenshot=" + shot, "--dump-dom", page,
	}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // chromium refuses to run as root with its sandbox
	}
	cmd := exec.CommandContext(ctx, browser, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s loaded %s in %s (virtual time budget %s)", filepath.Base(browser), page, time.Since(start).Round(time.Millisecond), budget)
	if err != nil {
		return "", fmt.Errorf("%s: %v; its last output:\n%s", browser, err, tail(stderr.String(), 2000))
	}
	return stdout.String(), nil
}

// iframeSrc finds the address of each frame of a DOM.
var iframeSrc = regexp.MustCompile(`<iframe[^>]*\ssrc="([^"]*)"`)

// renderedMarkdown is the markdown of each frame the Web UI renders (/render?content=…).
func renderedMarkdown(dom string) []string {
	var texts []string
	for _, m := range iframeSrc.FindAllStringSubmatch(dom, -1) {
		u, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil || u.Path != "/render" {
			continue
		}
		texts = append(texts, u.Query().Get("content"))
	}
	return texts
}

// hasFrame reports whether one frame holds every one of texts.
func hasFrame(frames []string, texts ...string) bool {
	for _, f := range frames {
		all := true
		for _, text := range texts {
			all = all && strings.Contains(f, text)
		}
		if all {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
