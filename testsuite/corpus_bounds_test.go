package testsuite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/workflows"
)

// Every payload of every recorded history is within the cap of its kind
// (workflows/bounds.go): the corpus covers every path of the workflow, so a
// path that grows a payload past its cap fails here, with the kind and the
// history named. It needs no server.
func TestCorpusPayloadsWithinCaps(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	caps := map[string]int{
		"activity input":        workflows.MaxActivityInputBytes,
		"activity result":       workflows.MaxActivityResultBytes,
		"continue-as-new input": workflows.MaxCarryBytes,
		"signal":                workflows.MaxSignalBytes,
		"update argument":       workflows.MaxActivityInputBytes,
		"child workflow result": workflows.MaxActivityResultBytes,
		"run input":             workflows.MaxCarryBytes,
	}
	largest := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hist, err := client.HistoryFromJSON(strings.NewReader(string(data)), client.HistoryJSONOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, ev := range hist.GetEvents() {
			var kind string
			var size int
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				kind, size = "run input", proto.Size(ev.GetWorkflowExecutionStartedEventAttributes().GetInput())
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				kind, size = "activity input", proto.Size(ev.GetActivityTaskScheduledEventAttributes().GetInput())
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				kind, size = "activity result", proto.Size(ev.GetActivityTaskCompletedEventAttributes().GetResult())
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				kind, size = "continue-as-new input", proto.Size(ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput())
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				kind, size = "signal", proto.Size(ev.GetWorkflowExecutionSignaledEventAttributes().GetInput())
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
				kind, size = "update argument", proto.Size(ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetArgs())
			case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
				kind, size = "child workflow result", proto.Size(ev.GetChildWorkflowExecutionCompletedEventAttributes().GetResult())
			default:
				continue
			}
			largest[kind] = max(largest[kind], size)
			if size > caps[kind] {
				t.Errorf("%s, event %d: a %s of %d bytes, over its cap of %d", filepath.Base(f), ev.GetEventId(), kind, size, caps[kind])
			}
		}
	}
	t.Logf("the largest payload of each kind in %d histories: %v", len(files), largest)
}
