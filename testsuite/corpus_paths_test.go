package testsuite

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/workflows"
)

// corpusPaths are the paths of AgentWorkflow's command sequence that the
// recorded corpus covers, each with the mark (see marks) that proves it in
// the histories of the case that records it. TestRecordHistories checks
// every case it plays against this table, so that a case that stops taking
// its path (a timing that changed, a scenario edited) fails its recording
// instead of leaving the corpus with a hole.
var corpusPaths = []struct{ path, mark, by string }{
	{"the todo loop, ended by end_session", "signal end_session", "01_write_todos_lifecycle"},
	{"a pause and its resume", "signal resume", "04_pause_and_resume"},
	{"a plan approval", "update approve_plan", "05_plan_with_approval"},
	{"a subagent that finishes", "child completed", "06a_subagent_finishes_first"},
	{"a subagent that fails", "child failed", "06d_subagent_fails"},
	{"pause and resume in a subagent, answered at the root", "tree_hand resume", "06f_paused_child_resumed_at_root"},
	{"the runtime continuation setting", "update set_continuation", "07_every_guard"},
	{"the workspace's host, asked once by a local activity", "local activity WorkspaceHost", "07_every_guard"},
	{"messages by update and signal, across continue-as-new", "update send_message", "08_chat_continue_as_new"},
	{"messages by update and signal, across continue-as-new", "signal user_message", "08_chat_continue_as_new"},
	{"messages by update and signal, across continue-as-new", "continued as new", "08_chat_continue_as_new"},
	{"reporters", "scheduled Report", "09_plan_reporters"},
	{"tool approvals", "update approve_tool", "10_tool_approval"},
	{"compaction in parts", "summary in parts", "11_compaction"},
	{"continue-as-new with a summary", "continued as new with a context_summary", "11_compaction"},
	{"compaction in one call", "summary in one call", "12_compact_context"},
	{"compact_context", "update compact_context", "12_compact_context"},
	{"child cancel (cancel_subagent)", "child canceled", "13_cancel_subagent"},
	{"a plan approval in a subagent, answered at the root", "tree_hand approve_plan", "14_subagent_approvals"},
	{"a tool approval in a subagent, answered at the root", "tree_hand approve_tool", "14_subagent_approvals"},
	{"child timeout", "child timed out", "15_subagent_timeout"},
	{"child cancel (subagent_grace_s over after end_session)", "timer fired: subagent grace", "16_subagent_grace"},
	{"child cancel (subagent_grace_s over after end_session)", "child canceled", "16_subagent_grace"},
	{"continue-as-new with a summary written for the carry", "continued as new after a summary", "17_carry_summary"},
	{"a workspace named by the input, checked on the worker", "local activity CheckWorkspace", "18_shared_workspace"},
	{"a workspace on shared storage: tools on any worker", "scheduled RunTool on the workflow's queue", "18_shared_workspace"},
	{"end_session ends a plan-approval wait; the turn goes on", "model call after end_session", "19_end_session_in_plan_wait"},
	{"a model call retried by the server", "CallModel retried by the server", "20_model_retry"},
	{"a failed turn and retry_turn", "update retry_turn", "21_failed_turn_retry"},
	{"a context overflow teaches the limit and compacts", "failed CallModel: ContextLengthExceeded", "22_context_overflow"},
	{"host refusal", "failed RunToolOnHost: ToolNotHost", "23_host_gone_and_back"},
	{"host gone", "timed out RunTool: ScheduleToStart", "23_host_gone_and_back"},
	{"the host back", "completed RunTool", "23_host_gone_and_back"},
	{"reporter drain at the end of the run", "timer started: reporters drain", "24_reporter_drain"},
	{"the idle timeout ends a session", "timer fired: idle timeout", "25_idle_timeout"},
	{"a wait with a child running hands over; the continuation adopts the child", "continued as new with children running", "27_child_adopted"},
	{"an adopted child's end reaches the continuation", "signal tree_end", "27_child_adopted"},
	{"a turn handed over in its wait on a blocked step", "continued as new in a turn's blocked wait", "06b_subagent_finishes_last"},
	{"a tool call's wait for approval handed over, none of its response's calls run", "continued as new in a tool call's approval wait", "10_tool_approval"},
	{"a plan's wait for approval handed over; the verdict comes as a message", "continued as new in a plan's approval wait", "14_subagent_approvals"},
	{"a held call's wait for approval handed over, the response's other calls answered", "continued as new in a held call's approval wait", "31_held_call_handover"},
	{"an adopted child that the server ends at its deadline", "timer fired: deadline of subagent importer", "28_adopted_child_timeout"},
	{"a chat turn handed over in its wait; its caller follows it with turn_reply", "continued as new owing a turn's reply", "29_chat_turn_reply"},
	{"a chat turn handed over in its wait; its caller follows it with turn_reply", "update turn_reply", "29_chat_turn_reply"},
	{"a session that ends with a handed-over turn's reply not taken waits for its caller", "timer started: replies drain", "30_late_turn_reply"},
	{"a busy turn handed over between two steps, with messages queued behind it", "continued as new between a turn's steps", "32_busy_turn_handover"},
	{"a busy turn handed over between two steps, with messages queued behind it", "continued as new with messages queued", "32_busy_turn_handover"},
	{"interrupt cancels the model call in flight; the session goes on", "update interrupt", "33_interrupt"},
	{"an adopted child cancelled (cancel_subagent): by a request to its workflow id", "cancel asked of another workflow", "34_cancel_adopted_child"},
	{"an adopted child cancelled (cancel_subagent): by a request to its workflow id", "canceled", "34_cancel_adopted_child"},
	{"a root cancelled with a child running: the child is cancelled with it", "cancel requested", "35_cancel_root_with_children"},
	{"a root cancelled with a child running: the child is cancelled with it", "cancel asked of another workflow", "35_cancel_root_with_children"},
	{"a root cancelled with a child running: the child is cancelled with it", "canceled", "35_cancel_root_with_children"},
	{"compact_context whose summary does not fit: answered, the session goes on", "failed CallModel (summary): ContextLengthExceeded", "26_compact_context_overflow"},
}

// checkPaths fails the test for every path of corpusPaths whose case was
// recorded (its marks are in recordedMarks) without showing the path's mark.
func checkPaths(t *testing.T, recordedMarks map[string][]string) {
	t.Helper()
	for _, p := range corpusPaths {
		got, ok := recordedMarks[p.by]
		if ok && !slices.Contains(got, p.mark) {
			t.Errorf("%s: no history of %s shows %q; its marks: %s", p.path, p.by, p.mark, strings.Join(got, "; "))
		}
	}
}

// TestRecordedCorpusShowsItsPaths reads the histories kept in
// testdata/histories and checks that each case's show the marks of the
// paths corpusPaths says it covers. It needs no server: a corpus recorded
// with a case that did not take its path fails here too, not only when it
// was recorded, and so does a case without histories (added since the
// corpus was last recorded, or its files deleted): its paths would go
// unreplayed.
func TestRecordedCorpusShowsItsPaths(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	byCase := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := marks(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name, _, _ := strings.Cut(historyName(f), "@")
		byCase[name] = append(byCase[name], ms...)
	}
	for _, rc := range recordedCases() {
		if _, ok := byCase[rc.name]; !ok {
			t.Errorf("%s has no recorded history: record the corpus again (TestRecordHistories -record)", rc.name)
		}
	}
	checkPaths(t, byCase)
}

// marks reads a recorded history (JSON, as scenario.History exports it,
// from a worker that does not encrypt) into the sorted set of what happened
// in it, in words that corpusPaths can name: "update retry_turn",
// "CallModel retried by the server", "failed RunToolOnHost: ToolNotHost",
// "child timed out", "summary in parts", "tree_hand approve_tool", ...
func marks(data []byte) ([]string, error) {
	hist, err := client.HistoryFromJSON(strings.NewReader(string(data)), client.HistoryJSONOptions{})
	if err != nil {
		return nil, err
	}
	r := &markReader{dc: converter.GetDefaultDataConverter(), activity: map[int64]string{}, timer: map[int64]string{}}
	set := map[string]bool{}
	for _, ev := range hist.GetEvents() {
		ms, err := r.read(ev)
		if err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", ev.GetEventId(), ev.GetEventType(), err)
		}
		for _, m := range ms {
			set[m] = true
		}
	}
	return slices.Sorted(maps.Keys(set)), nil
}

// markReader reads the events of one history in order, remembering what
// later events refer to.
type markReader struct {
	dc       converter.DataConverter
	activity map[int64]string // scheduled event id -> activity type, "CallModel (summary)" for a summarising call
	timer    map[int64]string // started event id -> summary
	lastCall string           // the kind of the latest model call: "agent" or "summary"
	ended    bool             // end_session was received
}

// read is what one event says: none, one or more marks.
func (r *markReader) read(ev *historypb.HistoryEvent) ([]string, error) {
	dc := r.dc
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := ev.GetActivityTaskScheduledEventAttributes()
		typ := a.GetActivityType().GetName()
		r.activity[ev.GetEventId()] = typ
		switch {
		case typ == api.ToolActivity && a.GetTaskQueue().GetName() == api.TaskQueue:
			return []string{"scheduled RunTool on the workflow's queue"}, nil
		case typ != api.ModelCallActivity:
			return []string{"scheduled " + typ}, nil
		}
		// Only the field that tells a summarising call: an activity's
		// input may change without re-recording (workflows/doc.go).
		var in struct {
			Summarize *activities.Summarize `json:"summarize"`
		}
		if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
			return nil, err
		}
		if in.Summarize == nil {
			r.lastCall = "agent"
			if r.ended {
				return []string{"scheduled CallModel", "model call after end_session"}, nil
			}
			return []string{"scheduled CallModel"}, nil
		}
		r.lastCall = "summary"
		r.activity[ev.GetEventId()] = typ + " (summary)"
		if in.Summarize.MaxBytes > 0 { // only the parts of a long stretch are bounded
			return []string{"summary in parts"}, nil
		}
		return []string{"summary in one call"}, nil
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
		// Retries leave no events of their own: the attempt that
		// ended the activity is in its started event.
		if a := ev.GetActivityTaskStartedEventAttributes(); a.GetAttempt() > 1 {
			return []string{r.activity[a.GetScheduledEventId()] + " retried by the server"}, nil
		}
		return nil, nil
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		return []string{"completed " + r.activity[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]}, nil
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
		a := ev.GetActivityTaskFailedEventAttributes()
		return []string{fmt.Sprintf("failed %s: %s", r.activity[a.GetScheduledEventId()], a.GetFailure().GetApplicationFailureInfo().GetType())}, nil
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		a := ev.GetActivityTaskTimedOutEventAttributes()
		kind := a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType() // ScheduleToStart, ...
		return []string{fmt.Sprintf("timed out %s: %s", r.activity[a.GetScheduledEventId()], kind)}, nil
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		m := ev.GetMarkerRecordedEventAttributes()
		if m.GetMarkerName() != "LocalActivity" {
			return []string{"marker " + m.GetMarkerName()}, nil
		}
		var data struct{ ActivityType string }
		if err := dc.FromPayloads(m.GetDetails()["data"], &data); err != nil {
			return nil, err
		}
		return []string{"local activity " + data.ActivityType}, nil
	case enumspb.EVENT_TYPE_TIMER_STARTED:
		var summary string
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			if err := dc.FromPayload(p, &summary); err != nil {
				return nil, err
			}
		}
		r.timer[ev.GetEventId()] = summary
		return []string{"timer started: " + summary}, nil
	case enumspb.EVENT_TYPE_TIMER_FIRED:
		return []string{"timer fired: " + r.timer[ev.GetTimerFiredEventAttributes().GetStartedEventId()]}, nil
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
		return []string{"update " + ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName()}, nil
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
		a := ev.GetWorkflowExecutionSignaledEventAttributes()
		if a.GetSignalName() == api.EndSessionSignal {
			r.ended = true
		}
		if a.GetSignalName() != workflows.HandSignal {
			return []string{"signal " + a.GetSignalName()}, nil
		}
		var h workflows.Handed
		if err := dc.FromPayloads(a.GetInput(), &h); err != nil {
			return nil, err
		}
		switch {
		case h.Resume != nil:
			return []string{"tree_hand resume"}, nil
		case h.Approve != nil:
			return []string{"tree_hand approve_plan"}, nil
		case h.ApproveTool != nil:
			return []string{"tree_hand approve_tool"}, nil
		}
		return []string{"signal " + workflows.HandSignal}, nil
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		var in api.AgentInput
		if err := dc.FromPayloads(ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput(), &in); err != nil {
			return nil, err
		}
		out := []string{"continued as new"}
		var c *workflows.Carry
		if len(in.Carry) > 0 {
			c = new(workflows.Carry)
			if err := json.Unmarshal(in.Carry, c); err != nil {
				return nil, fmt.Errorf("the carry: %w", err)
			}
		}
		if c != nil && slices.ContainsFunc(c.Window.Messages, func(m model.Message) bool { return m.Name == api.NameContextSummary }) {
			out = append(out, "continued as new with a context_summary")
		}
		if c != nil && c.Tree != nil && len(c.Tree.Running) > 0 {
			out = append(out, "continued as new with children running")
		}
		if c != nil && len(c.Inbox.Queue) > 0 && c.Inbox.Queue[0].Blocked != nil {
			switch b := c.Inbox.Queue[0].Blocked; {
			case b.Approval:
				out = append(out, "continued as new in a plan's approval wait")
			case b.Tools:
				out = append(out, "continued as new in a tool call's approval wait")
			case len(b.Held) > 0:
				out = append(out, "continued as new in a held call's approval wait")
			case b.Next:
				out = append(out, "continued as new between a turn's steps")
			default:
				out = append(out, "continued as new in a turn's blocked wait")
			}
		}
		if c != nil && slices.ContainsFunc(c.Inbox.Queue, func(m workflows.Inbound) bool { return m.Blocked == nil }) {
			out = append(out, "continued as new with messages queued")
		}
		if c != nil && len(c.Inbox.Queue) > 0 && c.Inbox.Queue[0].ReplyTo != "" {
			out = append(out, "continued as new owing a turn's reply")
		}
		if r.lastCall == "summary" {
			// No agent call between the summary and the handover: it was
			// written for the carry.
			out = append(out, "continued as new after a summary")
		}
		return out, nil
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
		return []string{"child completed"}, nil
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
		return []string{"child failed"}, nil
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
		return []string{"child canceled"}, nil
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
		return []string{"child timed out"}, nil
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
		return []string{"timed out"}, nil
	case enumspb.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
		return []string{"cancel asked of another workflow"}, nil
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
		return []string{"cancel requested"}, nil
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
		return []string{"canceled"}, nil
	}
	return nil, nil
}

// corpusFigures is how the docs state the corpus's size: "(108 files, 5.9
// MB, from 40 cases".
var corpusFigures = regexp.MustCompile(`\((\d+) files, (\d+(?:\.\d)?) MB, from (\d+) cases`)

// The corpus's figures in the docs are the corpus's: its files, their size
// in MB (one decimal) and the cases recorded. A re-recording or a new case
// that changes them fails here until the text says so. The docs are read
// wherever the figures are (README.md, or the pages under docs/).
func TestDocsStateTheCorpusFigures(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	var size int64
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += info.Size()
	}
	want := fmt.Sprintf("(%d files, %.1f MB, from %d cases", len(files), float64(size)/1e6, len(recordedCases()))
	docs, _ := filepath.Glob("../docs/*.md")
	var found []string
	for _, doc := range append([]string{"../README.md"}, docs...) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range corpusFigures.FindAllString(string(data), -1) {
			found = append(found, m)
			if m != want {
				t.Errorf("%s says %q of the corpus; it is %q", doc, m, want)
			}
		}
	}
	if len(found) == 0 {
		t.Errorf("no page of the docs states the corpus's figures; want %q in README.md or docs/", want)
	}
}
