//go:build unix

package testsuite

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "TestWebUIShowsTheRun: write the screenshot of the run's page to "+screenshotPath)

// screenshotPath is the README's picture of a run in the Web UI, from the package folder.
const screenshotPath = "../docs/webui-run.png"

// TestWebUIShowsTheRun loads a finished run's page in the dev server's Web UI with a
// headless chromium, as a person would open it, and finds there what todoflow puts on it:
// the static summary (the task's first line), the static details (model, limits) and the
// checklist, which the workflow keeps as its current details, headed by the session's first
// message (the heading a continued run, which has no summary, still shows). The UI shows the three on
// the run's User Metadata tab, each rendered from markdown in a frame of its own whose
// address carries the markdown (/render?content=…); the test reads both the addresses and
// the frames' text. -update-screenshot writes the page's screenshot to docs/ for the
// README and docs/observability.md.
func TestWebUIShowsTheRun(t *testing.T) {
	browser := chromium(t)
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // includes a cold build of the server
	defer cancel()
	srv, c := startWebUIServer(ctx, t)

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

	b, err := startBrowser(ctx, t, browser)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := b.navigate(ctx, page); err != nil {
		t.Fatal(err)
	}
	// The page is there once the checklist's frame is, and every frame has rendered.
	var frames []frame
	for {
		err := b.eval(ctx, framesJS, &frames)
		markdown(frames)
		if err == nil && hasFrame(frames, "3 of 3 done") && rendered(frames) {
			break
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("after %s, %s shows no rendered checklist (%v); frames: %+v\nthe browser's output: %s",
				time.Since(start).Round(time.Second), page, err, frames, b.output())
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%s showed the run's page in %s", browser, time.Since(start).Round(time.Millisecond))

	// The player sets api.Describe's summary and details, with the scenario's name.
	summary, details := api.Describe(sc.RunInput())
	for what, want := range map[string][]string{
		"the summary":         {"Draft the release notes for v0.3", summary},
		"the details":         {details, "- **Model:** `script:" + sc.Path + "`", "- **Scenario:** release notes"},
		"the current details": {"**Completed**\n", "### Draft the release notes for v0.3", "**main**: completed", "- [x] " + items[0], "- [x] " + items[1], "- [x] " + items[2], "3 of 3 done"},
	} {
		if !hasFrame(frames, want...) {
			t.Errorf("no frame of the page shows %s (%q); frames: %+v", what, want, frames)
		}
	}
	// And the browser rendered the checklist's markdown: items, not markup.
	for _, f := range frames {
		if strings.Contains(f.Markdown, "3 of 3 done") {
			for _, it := range items {
				if !strings.Contains(f.Text, "[x] "+it) || strings.Contains(f.Text, "- [x]") {
					t.Errorf("the checklist's frame reads %q; want the item %q rendered", f.Text, it)
				}
			}
		}
	}

	// Nothing the frames show is cut at their height: the UI sizes a frame
	// to its body without the body's margins (api.FrameEnd).
	var cut []string
	if err := b.eval(ctx, cutJS, &cut); err != nil {
		t.Fatal(err)
	}
	if len(cut) > 0 {
		t.Errorf("the Web UI's frames cut off %q", cut)
	}

	png, err := b.screenshot(ctx)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("no PNG screenshot of the page: %v", err)
	}
	if *updateScreenshot {
		if err := os.WriteFile(screenshotPath, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", screenshotPath, len(png))
	}
}

// frame is one frame of the page: the markdown the Web UI renders in it
// (/render?content=…) and the text it shows.
type frame struct {
	Src      string `json:"src"`
	Text     string `json:"text"`
	Markdown string `json:"-"`
}

// framesJS lists the page's frames; the Web UI serves them itself, so their documents
// are readable.
const framesJS = `Array.from(document.querySelectorAll("iframe")).map(f => ({
	src: f.getAttribute("src") || "",
	text: (f.contentDocument && f.contentDocument.readyState === "complete" && f.contentDocument.body) ? f.contentDocument.body.innerText : ""
}))`

// cutJS lists the text of the blocks of the page's frames that end below
// their frame's height: lines an operator cannot see (the frames do not
// scroll). An empty paragraph (api.FrameEnd) is not text.
const cutJS = `Array.from(document.querySelectorAll("iframe")).flatMap(f => {
	const d = f.contentDocument;
	if (!d || !d.body) return [];
	return Array.from(d.body.querySelectorAll("p, li, h1, h2, h3, h4, pre, td"))
		.filter(e => e.innerText.replace(/\u00a0/g, "").trim() !== "" && e.getBoundingClientRect().bottom > f.clientHeight)
		.map(e => e.innerText);
})`

// markdown fills each frame's Markdown from its address.
func markdown(frames []frame) {
	for i, f := range frames {
		if u, err := url.Parse(f.Src); err == nil && u.Path == "/render" {
			frames[i].Markdown = u.Query().Get("content")
		}
	}
}

// rendered reports whether every frame of the Web UI's shows text.
func rendered(frames []frame) bool {
	for _, f := range frames {
		if f.Markdown != "" && strings.TrimSpace(f.Text) == "" {
			return false
		}
	}
	return len(frames) > 0
}

// hasFrame reports whether one frame's markdown holds every one of texts.
func hasFrame(frames []frame, texts ...string) bool {
	for _, f := range frames {
		all := f.Markdown != ""
		for _, text := range texts {
			all = all && strings.Contains(f.Markdown, text)
		}
		if all {
			return true
		}
	}
	return false
}

// startWebUIServer starts a dev server with its Web UI (with the server
// settings dynamic) and a worker on it, stopped when t ends. The worker
// stays up while a page loads: the UI reads the current details with a
// query, which a worker answers, finished run or not.
func startWebUIServer(ctx context.Context, t *testing.T, dynamic ...string) (*devserver.Server, client.Client) {
	t.Helper()
	srv, err := devserver.Start(ctx, devserver.Options{SearchAttributes: api.SearchAttributes(), Progress: testWriter{t}, DynamicConfig: dynamic})
	if err != nil {
		t.Fatalf("start dev server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	if srv.UIAddress() == "" {
		t.Fatal("the dev server has no Web UI")
	}
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := devserver.EnsureSearchAttributes(ctx, c, srv.Namespace(), api.SearchAttributes()); err != nil {
		t.Fatal(err)
	}
	w, err := agentworker.New(c, agentworker.Options{ScriptDir: "/", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return srv, c
}
