package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
)

// queryCap is the server's limit on one query answer.
const queryCap = 2 << 20

// bigContent returns about n bytes of text in which every kind of
// character the JSON encoder treats apart occurs again and again: multi-byte
// runes of each width, characters escaped in two bytes and in six, and
// U+2028, which encoding/json escapes although it is valid UTF-8.
func bigContent(n int) string {
	const unit = "plain ascii é 日本 🙂 <a&b> \"q\" \\ \n\t \x01 \u2028 end. "
	s := strings.Repeat(unit, n/len(unit)+1)
	return s[:text.CutIndex(s, n)]
}

func mustSize(t *testing.T, m model.Message) int {
	t.Helper()
	n, err := encodedSize(m)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sameMessages reports the first difference between two transcripts, without
// printing megabytes of content.
func sameMessages(got, want []model.Message) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d messages, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Content != w.Content {
			at := 0
			for at < min(len(g.Content), len(w.Content)) && g.Content[at] == w.Content[at] {
				at++
			}
			return fmt.Errorf("message %d: content of %d bytes differs from the %d bytes wanted at byte %d", i, len(g.Content), len(w.Content), at)
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			return fmt.Errorf("message %d = %s, want %s", i, gj, wj)
		}
	}
	return nil
}

// readPages reads [start, end) of msgs with TranscriptPage as a reader
// would, checking each page against the protocol, and returns the messages
// put back together and the number of pages.
func readPages(t *testing.T, msgs []model.Message, start, end, maxBytes int) ([]model.Message, int) {
	t.Helper()
	limit := maxBytes
	if limit == 0 {
		limit = DefaultPageBytes
	}
	var out []model.Message
	req := PageRequest{Start: start, End: end, MaxBytes: maxBytes}
	pages := 0
	for req.Start < min(end, len(msgs)) {
		if pages++; pages > 100000 {
			t.Fatalf("no end after %d pages; last request %+v", pages, req)
		}
		p, err := TranscriptPage(msgs, req)
		if err != nil {
			t.Fatalf("TranscriptPage(%+v): %v", req, err)
		}
		if len(p.Messages) == 0 {
			t.Fatalf("TranscriptPage(%+v): empty page before the end", req)
		}
		total := 0
		for _, m := range p.Messages {
			total += mustSize(t, m)
		}
		inParts := req.ContentOffset > 0 || p.NextContentOffset > 0
		if total > limit {
			// Allowed only where nothing smaller can advance: one whole
			// message whose other fields fill the page, or a part of one rune.
			m := p.Messages[0]
			fixed := m
			fixed.Content = ""
			if len(p.Messages) != 1 || !(mustSize(t, fixed) >= limit && !inParts || utf8.RuneCountInString(m.Content) == 1) {
				t.Fatalf("TranscriptPage(%+v): %d messages of %d bytes, over %d", req, len(p.Messages), total, limit)
			}
		}
		if inParts {
			orig := msgs[req.Start].Content
			part := p.Messages[0].Content
			if len(p.Messages) != 1 || !strings.HasPrefix(orig[req.ContentOffset:], part) {
				t.Fatalf("TranscriptPage(%+v): %d messages, or the part is not the content from byte %d", req, len(p.Messages), req.ContentOffset)
			}
			if utf8.ValidString(orig) && !utf8.ValidString(part) {
				t.Fatalf("TranscriptPage(%+v): part of %d bytes from byte %d cuts a rune", req, len(part), req.ContentOffset)
			}
			switch {
			case p.Next == req.Start && p.NextContentOffset == req.ContentOffset+len(part):
			case p.Next == req.Start+1 && p.NextContentOffset == 0 && req.ContentOffset+len(part) == len(orig):
			default:
				t.Fatalf("TranscriptPage(%+v): part of %d bytes, next %d, next content byte %d", req, len(part), p.Next, p.NextContentOffset)
			}
			if req.ContentOffset == 0 {
				out = append(out, p.Messages[0])
			} else {
				out[len(out)-1].Content += part
			}
		} else {
			if p.Next != req.Start+len(p.Messages) {
				t.Fatalf("TranscriptPage(%+v): %d messages, next %d", req, len(p.Messages), p.Next)
			}
			out = append(out, p.Messages...)
		}
		req.Start, req.ContentOffset = p.Next, p.NextContentOffset
	}
	return out, pages
}

func TestTranscriptPage(t *testing.T) {
	small := []model.Message{
		{Role: model.RoleSystem, Content: "You are a test.", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleUser, Content: "Hello, 世界", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
		{Role: model.RoleTool, Content: "contents of a", ToolCallID: "c1", ToolCalls: []model.ToolCall{}},
	}
	s0, s1 := mustSize(t, small[0]), mustSize(t, small[1])
	kb200 := model.Message{Role: model.RoleTool, Content: strings.Repeat("x", 200<<10), ToolCalls: []model.ToolCall{}}
	heavy := []model.Message{kb200, kb200, kb200, kb200}

	tests := []struct {
		name     string
		msgs     []model.Message
		req      PageRequest
		want     int // messages in the page, all whole
		wantNext int
	}{
		{"all fit", small, PageRequest{Start: 0, End: 4, MaxBytes: 1 << 20}, 4, 4},
		{"bounded by end", small, PageRequest{Start: 1, End: 3}, 2, 3},
		{"end past the transcript", small, PageRequest{Start: 2, End: 99}, 2, 4},
		{"max bytes exactly two", small, PageRequest{Start: 0, End: 4, MaxBytes: s0 + s1}, 2, 2},
		{"max bytes one short of two", small, PageRequest{Start: 0, End: 4, MaxBytes: s0 + s1 - 1}, 1, 1},
		{"default max bytes", heavy, PageRequest{Start: 0, End: 4}, 2, 2}, // 400 KiB fit in 512, 600 do not
		{"empty range", small, PageRequest{Start: 2, End: 2}, 0, 2},
		{"start at the end", small, PageRequest{Start: 4, End: 9}, 0, 4},
		{"empty transcript", nil, PageRequest{Start: 0, End: 3}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := TranscriptPage(tt.msgs, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Messages) != tt.want || p.Next != tt.wantNext || p.NextContentOffset != 0 || p.Messages == nil {
				t.Fatalf("page of %d messages (nil: %t), next %d, next content byte %d; want %d whole messages, next %d",
					len(p.Messages), p.Messages == nil, p.Next, p.NextContentOffset, tt.want, tt.wantNext)
			}
			if err := sameMessages(p.Messages, tt.msgs[tt.req.Start:tt.req.Start+tt.want]); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestTranscriptPageErrors(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "ab"},
		{Role: model.RoleUser, Content: "日本"},
		{Role: model.RoleUser},
	}
	tests := []struct {
		req  PageRequest
		want string
	}{
		{PageRequest{Start: -1, End: 1}, "start must not be negative (got -1)"},
		{PageRequest{Start: 0, End: -2}, "end must not be negative (got -2)"},
		{PageRequest{Start: 0, End: 1, MaxBytes: -3}, "max_bytes must not be negative (got -3)"},
		{PageRequest{Start: 0, End: 1, ContentOffset: -4}, "content_offset must not be negative (got -4)"},
		{PageRequest{Start: 4, End: 5}, "start 4 is past the end of the transcript (3 messages)"},
		{PageRequest{Start: 2, End: 1}, "end 1 is before start 2"},
		{PageRequest{Start: 1, End: 1, ContentOffset: 1}, "content_offset 1 asks for a part of message 1"},
		{PageRequest{Start: 3, End: 4, ContentOffset: 1}, "content_offset 1 asks for a part of message 3"},
		{PageRequest{Start: 0, End: 1, ContentOffset: 2}, "content_offset 2 of message 0 is not the start of a part (its content has 2 bytes)"},
		{PageRequest{Start: 2, End: 3, ContentOffset: 1}, "content_offset 1 of message 2 is not the start of a part (its content has 0 bytes)"},
		{PageRequest{Start: 1, End: 2, ContentOffset: 1}, "content_offset 1 of message 1 is not the start of a part"}, // inside 日
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := TranscriptPage(msgs, tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("TranscriptPage(%+v) = %v, want an error containing %q", tt.req, err, tt.want)
			}
		})
	}
	bad := []model.Message{{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Arguments: json.RawMessage(`{not json`)}}}}
	if _, err := TranscriptPage(bad, PageRequest{End: 1}); err == nil || !strings.Contains(err.Error(), "transcript message 0") {
		t.Errorf("unencodable message: error %v, want one naming message 0", err)
	}
}

// A message larger than a page travels in parts that fit, and comes back
// equal.
func TestTranscriptPageParts(t *testing.T) {
	big := model.Message{Role: model.RoleTool, Name: "", Content: bigContent(3 << 20), ToolCallID: "call_7", ToolCalls: []model.ToolCall{}}
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "read the log", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, Content: "before", ToolCalls: []model.ToolCall{{ID: "call_7", Name: "read_file", Arguments: json.RawMessage(`{"path":"log"}`)}}},
		big,
		{Role: model.RoleAssistant, Content: "after", ToolCalls: []model.ToolCall{}},
	}
	got, pages := readPages(t, msgs, 0, len(msgs), 0)
	if err := sameMessages(got, msgs); err != nil {
		t.Fatal(err)
	}
	// 3 MiB of content needs at least 6 parts of 512 KiB, plus the pages
	// before and after; escaping makes it more, but not many more.
	if pages < 8 || pages > 20 {
		t.Errorf("%d pages, want between 8 and 20", pages)
	}

	// Only the span asked for, starting inside the large message's range.
	got, _ = readPages(t, msgs, 2, 3, 0)
	if err := sameMessages(got, msgs[2:3]); err != nil {
		t.Fatal(err)
	}
}

// Small pages cut the content everywhere: between runes of every width and
// never inside one, nor inside an escape.
func TestTranscriptPagePartBoundaries(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"mixed", bigContent(600)},
		{"four-byte", strings.Repeat("🙂", 100)},
		{"escapes", strings.Repeat("<\x01\u2028\n", 50)},
		{"invalid utf-8", "ok \xff\xfe é \xe2\x82 日\x80\x80\x80\x80 end"},
	} {
		content := tt.content
		t.Run(tt.name, func(t *testing.T) {
			m := model.Message{Role: model.RoleTool, ToolCallID: "c", Content: content, ToolCalls: []model.ToolCall{}}
			fixed := m
			fixed.Content = ""
			base := mustSize(t, fixed)
			for room := 1; room <= 40; room++ {
				got, _ := readPages(t, []model.Message{m}, 0, 1, base+room)
				if len(got) != 1 || got[0].Content != content {
					t.Fatalf("max bytes %d: content %q, want %q", base+room, got[0].Content, content)
				}
			}
		})
	}
}

// A message whose fields other than its content fill a page is sent whole:
// there is nothing to cut.
func TestTranscriptPageUncuttable(t *testing.T) {
	args := json.RawMessage(`{"content":"` + strings.Repeat("y", 1000) + `"}`)
	msgs := []model.Message{
		{Role: model.RoleAssistant, Content: "some text", ToolCalls: []model.ToolCall{{ID: "c", Name: "write_file", Arguments: args}}},
		{Role: model.RoleUser, Content: "next", ToolCalls: []model.ToolCall{}},
	}
	p, err := TranscriptPage(msgs, PageRequest{Start: 0, End: 2, MaxBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	if p.Next != 1 || p.NextContentOffset != 0 {
		t.Fatalf("next %d, next content byte %d; want the whole message, next 1", p.Next, p.NextContentOffset)
	}
	if err := sameMessages(p.Messages, msgs[:1]); err != nil {
		t.Fatal(err)
	}
}

func TestMessagesPage(t *testing.T) {
	msg := func(n int) model.Message {
		return model.Message{Role: model.RoleTool, Content: strings.Repeat("z", n), ToolCalls: []model.ToolCall{}}
	}
	small := []model.Message{msg(1), msg(2), msg(3), msg(4), msg(5)}
	heavy := []model.Message{msg(200 << 10), msg(200 << 10), msg(200 << 10)}
	huge := []model.Message{msg(1), msg(3 << 20), msg(1)}
	tests := []struct {
		name          string
		msgs          []model.Message
		offset, limit int
		want          []model.Message
	}{
		{"all", small, 0, 0, small},
		{"offset", small, 2, 0, small[2:]},
		{"limit", small, 1, 2, small[1:3]},
		{"limit past the end", small, 3, 10, small[3:]},
		{"offset at the end", small, 5, 0, []model.Message{}},
		{"offset past the end", small, 9, 1, []model.Message{}},
		{"capped in bytes", heavy, 0, 0, heavy[:2]},
		{"capped in bytes with a limit", heavy, 1, 3, heavy[1:3]},
		{"one large message alone", huge, 1, 0, huge[1:2]},
		{"stops before a large message", huge, 0, 0, huge[:1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MessagesPage(tt.msgs, tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("nil page; the query must answer a JSON array")
			}
			if err := sameMessages(got, tt.want); err != nil {
				t.Error(err)
			}
		})
	}
	for _, args := range [][2]int{{-1, 0}, {0, -1}} {
		if _, err := MessagesPage(small, args[0], args[1]); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(got %d, %d)", args[0], args[1])) {
			t.Errorf("MessagesPage(%d, %d) = %v, want an error naming the values", args[0], args[1], err)
		}
	}

	// A client that advances by what it got, and stops at an empty page,
	// reads everything.
	all := slices.Concat(small, heavy, huge, small)
	var got []model.Message
	for {
		page, err := MessagesPage(all, len(got), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
	}
	if err := sameMessages(got, all); err != nil {
		t.Error(err)
	}
}

// queryClient answers the transcript query as a workflow would, through
// the data converter and under the server's cap on an answer's size.
type queryClient struct {
	client.Client // other methods are not called; they panic
	// workflowID and runID are the only run that answers.
	workflowID, runID string
	msgs              []model.Message
	// answer replaces TranscriptPage, to play a misbehaving workflow.
	answer  func(PageRequest) (Page, error)
	queries int
	largest int // bytes of the largest answer
	// history is the run's history, which GetWorkflowHistory reads
	// (none: the transcript is read by query).
	history []*historypb.HistoryEvent
	// pages counts the history pages read (historyservice_test.go).
	pages int
	// late answers the first late queries with DeadlineExceeded, as the
	// server does when no worker answered in time; onQuery sees each query.
	late    int
	onQuery func()
}

func (c *queryClient) QueryWorkflow(_ context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	c.queries++
	if c.onQuery != nil {
		c.onQuery()
	}
	if c.late > 0 {
		c.late--
		return nil, serviceerror.NewDeadlineExceeded("query timed out before a worker could process it")
	}
	if workflowID != c.workflowID || runID != c.runID {
		return nil, serviceerror.NewNotFound(fmt.Sprintf("workflow %s run %s not found (this fake is %s run %s)", workflowID, runID, c.workflowID, c.runID))
	}
	dc := converter.GetDefaultDataConverter()
	in, err := dc.ToPayloads(args...)
	if err != nil {
		return nil, err
	}
	if queryType != TranscriptQuery {
		return nil, serviceerror.NewQueryFailed("unknown queryType " + queryType + ". KnownQueryTypes=[__stack_trace messages state]")
	}
	var req PageRequest
	if err := dc.FromPayloads(in, &req); err != nil {
		return nil, err
	}
	answer := c.answer
	if answer == nil {
		answer = func(r PageRequest) (Page, error) { return TranscriptPage(c.msgs, r) }
	}
	page, err := answer(req)
	if err != nil {
		return nil, serviceerror.NewQueryFailed(err.Error())
	}
	out, err := dc.ToPayloads(page)
	if err != nil {
		return nil, err
	}
	size := out.Size()
	c.largest = max(c.largest, size)
	if size > queryCap {
		return nil, serviceerror.NewInvalidArgument(fmt.Sprintf("Blob data size exceeds limit: %d bytes", size))
	}
	return client.NewValue(out), nil
}

func (c *queryClient) GetWorkflowHistory(_ context.Context, workflowID, runID string, _ bool, _ enums.HistoryEventFilterType) client.HistoryEventIterator {
	if workflowID != c.workflowID || runID != c.runID {
		return &events{err: serviceerror.NewNotFound("workflow not found")}
	}
	return &events{evs: c.history}
}

// events is a history event iterator over evs, or failing with err.
type events struct {
	evs []*historypb.HistoryEvent
	err error
}

func (e *events) HasNext() bool { return e.err != nil || len(e.evs) > 0 }

func (e *events) Next() (*historypb.HistoryEvent, error) {
	if e.err != nil {
		return nil, e.err
	}
	ev := e.evs[0]
	e.evs = e.evs[1:]
	return ev, nil
}

func TestReadTranscript(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "system", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleUser, Content: "read three files", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
			{ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"path":"b"}`)},
			{ID: "c3", Name: "read_file", Arguments: json.RawMessage(`{"path":"c"}`)},
		}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: bigContent(250 << 10), ToolCalls: []model.ToolCall{}},
		{Role: model.RoleTool, ToolCallID: "c2", Content: bigContent(3 << 20), ToolCalls: []model.ToolCall{}},
		{Role: model.RoleTool, ToolCallID: "c3", Content: bigContent(250 << 10), ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, Content: "done", ToolCalls: []model.ToolCall{}},
	}
	c := &queryClient{workflowID: "wf", runID: "run", msgs: msgs}
	a := &Activities{Client: c}
	// Two spans, as a context window sends them: the head and a tail.
	got, err := a.readTranscript(context.Background(), "wf", "run", []Span{{Start: 0, End: 2}, {Start: 3, End: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sameMessages(got, slices.Concat(msgs[0:2], msgs[3:7])); err != nil {
		t.Fatal(err)
	}
	if c.queries < 8 {
		t.Errorf("%d queries for 3.5 MiB of transcript; pages this large would not fit", c.queries)
	}
	t.Logf("%d queries, largest answer %d bytes", c.queries, c.largest)
}

// RunTool finds a call by reference in a message that comes in parts, and
// runs it with the arguments from the transcript.
func TestRunToolReadsCallInParts(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "go", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, Content: bigContent(1 << 20), ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "list_files", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "write_file", Arguments: json.RawMessage(`{"path":"out.txt","content":"from the transcript"}`)},
		}},
	}
	// The test environment's workflow and run.
	c := &queryClient{workflowID: "default-test-workflow-id", runID: "default-test-run-id", msgs: msgs}
	ws := t.TempDir()
	res, err := executeRunTool(t, &Activities{Client: c, Roots: testRoots(t, filepath.Dir(ws))}, RunToolInput{
		Workspace: ws,
		Call:      model.ToolCall{ID: "c2", Name: "write_file"},
		From:      &CallRef{Message: 1, Index: 1},
	})
	if err != nil || res.IsError {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
	if c.queries < 3 {
		t.Errorf("%d queries; a message of 1 MiB should come in parts", c.queries)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "from the transcript" {
		t.Errorf("out.txt = %q, %v; want the arguments read from the transcript", b, err)
	}
}

// A transcript query answered late (no worker answered within the call's
// time: after a worker crash, the server sends the run's queries to the dead
// worker for a while) is asked again, and the activity heartbeats while it
// waits, so that the workflow's heartbeat timeout ends only an attempt whose
// worker is lost: the load test saw a tool call fail its three attempts,
// each ended by the heartbeat timeout during the read, after a worker kill.
func TestRunToolWaitsForALateTranscript(t *testing.T) {
	defer func(d time.Duration) { heartbeatEvery = d }(heartbeatEvery)
	heartbeatEvery = 100 * time.Millisecond // the test environment has no heartbeat timeout
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "go", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"out.txt","content":"late but there"}`)},
		}},
	}
	var mu sync.Mutex // the queries and the heartbeats come from two goroutines
	var order []string
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, what)
	}
	c := &queryClient{workflowID: "default-test-workflow-id", runID: "default-test-run-id", msgs: msgs, late: 2,
		onQuery: func() { note("query") }}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	ws := t.TempDir()
	a := &Activities{Client: c, Roots: testRoots(t, filepath.Dir(ws))}
	env.RegisterActivity(a)
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { note("heartbeat") })
	val, err := env.ExecuteActivity(a.RunTool, RunToolInput{Workspace: ws, Call: model.ToolCall{ID: "c1", Name: "write_file"}, From: &CallRef{Message: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var res RunToolResult
	if err := val.Get(&res); err != nil || res.IsError {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
	if c.queries != 3 {
		t.Errorf("%d queries; want the two late ones asked again", c.queries)
	}
	mu.Lock()
	defer mu.Unlock()
	if i := slices.Index(order, "heartbeat"); i < 0 || i == len(order)-1 {
		t.Errorf("events %v; want a heartbeat while the transcript is read", order)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "late but there" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
}

func TestReadTranscriptErrors(t *testing.T) {
	msgs := []model.Message{{Role: model.RoleUser, Content: "a"}, {Role: model.RoleUser, Content: "b"}}
	tests := []struct {
		name   string
		client client.Client
		spans  []Span
		// wantType is the application error's type, non-retryable; empty
		// means a plain error, which Temporal retries.
		wantType string
		want     string
	}{
		{"no client", nil, []Span{{0, 1}}, ErrTypeModelConfig, "no Temporal client"},
		{"span past the end", &queryClient{workflowID: "wf", runID: "run", msgs: msgs}, []Span{{1, 3}}, ErrTypeTranscriptMismatch, "transcript of wf: no message at 2 (wanted up to 3)"},
		{"start past the end", &queryClient{workflowID: "wf", runID: "run", msgs: msgs}, []Span{{3, 4}}, "", "start 3 is past the end of the transcript (2 messages)"},
		{"no progress", &queryClient{workflowID: "wf", runID: "run", answer: func(r PageRequest) (Page, error) {
			return Page{Messages: msgs[:1], Next: r.Start}, nil
		}}, []Span{{0, 2}}, ErrTypeTranscriptMismatch, "has 1 messages, next 0"},
		{"part that goes back", &queryClient{workflowID: "wf", runID: "run", answer: func(r PageRequest) (Page, error) {
			if r.ContentOffset == 0 {
				return Page{Messages: msgs[:1], Next: 0, NextContentOffset: 5}, nil
			}
			return Page{Messages: msgs[:1], Next: 0, NextContentOffset: 3}, nil
		}}, []Span{{0, 1}}, ErrTypeTranscriptMismatch, "from content byte 5 has 1 messages, next 0, next content byte 3"},
		{"past the span", &queryClient{workflowID: "wf", runID: "run", answer: func(r PageRequest) (Page, error) {
			return Page{Messages: msgs, Next: 2}, nil
		}}, []Span{{0, 1}}, ErrTypeTranscriptMismatch, "has 2 messages, next 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Client: tt.client}
			_, err := a.readTranscript(context.Background(), "wf", "run", tt.spans)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("readTranscript = %v, want an error containing %q", err, tt.want)
			}
			var app *temporal.ApplicationError
			isApp := errors.As(err, &app)
			switch {
			case tt.wantType == "" && isApp:
				t.Errorf("error type %s; want a plain, retryable error", app.Type())
			case tt.wantType != "" && (!isApp || app.Type() != tt.wantType || !app.NonRetryable()):
				t.Errorf("error %#v; want a non-retryable %s", err, tt.wantType)
			}
		})
	}
}

// fitJSON must agree with encoding/json exactly: a part it sizes too large
// costs a second encoding, one too small costs pages.
func TestFitJSON(t *testing.T) {
	for _, s := range []string{bigContent(300), "ok \xff\xfe é \xe2\x82 日\x80\x80\x80\x80 end\x7f", "\u2029\u2028\"\\\b\f\r"} {
		for room := 0; room <= 200; room++ {
			want := 0 // the longest prefix between runes that encoding/json fits in room
			for n := 0; n <= len(s); n++ {
				b, _ := json.Marshal(s[:text.CutIndex(s, n)])
				if len(b)-2 <= room {
					want = text.CutIndex(s, n)
				}
			}
			if got := fitJSON(s, room); got != want {
				t.Fatalf("fitJSON(%q, %d) = %d, want %d", s, room, got, want)
			}
		}
	}
}
