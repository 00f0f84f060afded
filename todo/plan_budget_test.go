package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestPlanCaps(t *testing.T) {
	text := func(n int) string { return strings.Repeat("x", n) }
	steps := func(n, size int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = text(size)
		}
		b, _ := json.Marshal(list)
		return string(b)
	}
	refs := func(n int) string {
		list := make([]Ref, n)
		for i := range list {
			list[i] = Ref{AgentID: fmt.Sprintf("a%d", i), StepID: "step_1"}
		}
		b, _ := json.Marshal(list)
		return string(b)
	}
	tests := []struct {
		name       string
		tool, args string
		want       string // "" for accepted
	}{
		{"most steps", ToolCreatePlan, `{"title":"T","steps":` + steps(MaxPlanSteps, 10) + `}`, ""},
		{"a step too many", ToolCreatePlan, `{"title":"T","steps":` + steps(MaxPlanSteps+1, 10) + `}`, `"steps" has 101 steps: a plan has at most 100`},
		{"longest step", ToolCreatePlan, `{"title":"T","steps":` + steps(1, MaxPlanTextBytes) + `}`, ""},
		{"a step too long", ToolCreatePlan, `{"title":"T","steps":` + steps(1, MaxPlanTextBytes+1) + `}`, `"steps[0]" is 2001 bytes: at most 2000`},
		{"title too long", ToolCreatePlan, `{"title":"` + text(MaxPlanTextBytes+1) + `","steps":["a"]}`, `"title" is 2001 bytes`},
		{"the largest new plan", ToolCreatePlan, `{"title":"` + text(MaxPlanTextBytes) + `","steps":` + steps(MaxPlanSteps, MaxPlanTextBytes) + `}`, ""},
		{"result too long", ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"` + text(MaxPlanTextBytes+1) + `"}`, `"result" is 2001 bytes`},
		{"output too large", ToolCompleteStepWithOutput, `{"step_id":"step_1","result":"r","output":{"o":"` + text(MaxStepOutputBytes) + `"}}`, `"output" is 4104 bytes of JSON: at most 4096`},
		{"largest output", ToolCompleteStepWithOutput, `{"step_id":"step_1","result":"r","output":{"o":"` + text(MaxStepOutputBytes-8) + `"}}`, ""},
		{"most dependencies", ToolAddDependentStep, `{"description":"d","depends_on":` + refs(MaxStepDeps) + `}`, ""},
		{"a dependency too many", ToolAddDependentStep, `{"description":"d","depends_on":` + refs(MaxStepDeps+1) + `}`, `names 17 steps: a step may wait on at most 16`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := planStarted(t, "main", "first", "second")
			if tt.tool == ToolCreatePlan {
				ps = NewPlanState("main")
			}
			if tt.want == "" {
				planOKCall(t, ps, tt.tool, tt.args)
				if n := PlanBytes(ps.Plan); n > MaxPlanBytes {
					t.Errorf("the plan takes %d bytes, over MaxPlanBytes (%d)", n, MaxPlanBytes)
				}
				return
			}
			planRefused(t, ps, tt.tool, tt.args, tt.want)
		})
	}

	t.Run("a step past the most", func(t *testing.T) {
		ps := NewPlanState("main")
		planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":`+steps(MaxPlanSteps, 10)+`}`)
		planRefused(t, ps, ToolAddStep, `{"description":"one more"}`, "has 100 steps, the most a plan may have")
		planRefused(t, ps, ToolAddDependentStep, `{"description":"one more","depends_on":`+refs(1)+`}`, "has 100 steps")
	})
	t.Run("dependencies of a step added in parts", func(t *testing.T) {
		ps := planStarted(t, "main", "first")
		planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_1","depends_on":`+refs(MaxStepDeps)+`}`)
		planRefused(t, ps, ToolAddDependentStep, `{"step_id":"step_1","depends_on":[{"agent_id":"other","step_id":"step_9"}]}`,
			"step_1 would wait on 17 steps, and a step may wait on at most 16")
	})
}

// However a model spends its calls, a plan never takes more than
// MaxPlanBytes: results fill it, and the outputs its steps wait for are
// counted before they come.
func TestPlanBytesStayWithinTheirCap(t *testing.T) {
	long := strings.Repeat("r", MaxPlanTextBytes-100)
	ps := NewPlanState("main")
	b, _ := json.Marshal(slicesOf(60, strings.Repeat("s", 500)))
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":`+string(b)+`}`)
	planOKCall(t, ps, ToolStartPlan, `{}`)
	refused := 0
	for i := range 200 {
		var out PlanOutcome
		switch i % 3 {
		case 0:
			out = planApply(t, ps, ToolAddDependentStep, fmt.Sprintf(`{"description":%q,"depends_on":[{"agent_id":"p%d","step_id":"step_1"}]}`, long, i))
		case 1:
			out = planApply(t, ps, ToolSetStepStatus, fmt.Sprintf(`{"step_id":"step_%d","status":"in_progress","result":%q}`, 1+i%60, long))
		default:
			out = planApply(t, ps, ToolAddStep, fmt.Sprintf(`{"description":%q}`, long))
		}
		if out.Result.IsError {
			if !strings.Contains(out.Result.Content, "past the 262144 a plan may take") && !strings.Contains(out.Result.Content, "the most a plan may have") {
				t.Fatalf("call %d refused for another reason: %s", i, out.Result.Content)
			}
			refused++
		}
		if n := PlanBytes(ps.Plan); n > MaxPlanBytes {
			t.Fatalf("after call %d the plan takes %d bytes, over MaxPlanBytes (%d)", i, n, MaxPlanBytes)
		}
	}
	if refused == 0 {
		t.Error("no call was refused: the test did not reach the cap")
	}
}

func slicesOf(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// The schemas the model reads give the same caps the tools enforce.
func TestPlanSchemasStateTheCaps(t *testing.T) {
	for _, tt := range []struct {
		tool, field string
		want        int
	}{
		{ToolCreatePlan, "steps", MaxPlanSteps},
		{ToolAddDependentStep, "depends_on", MaxStepDeps},
	} {
		d, _ := lookupDef(tt.tool)
		var s struct {
			Properties map[string]struct {
				MaxItems int `json:"maxItems"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatal(err)
		}
		if got := s.Properties[tt.field].MaxItems; got != tt.want {
			t.Errorf("%s: maxItems %d, want %d", tt.field, got, tt.want)
		}
	}
}

func TestSubscriptionsAreCapped(t *testing.T) {
	ps := NewPlanState("main")
	for i := range MaxSubscriptions {
		planOKCall(t, ps, ToolSubscribe, fmt.Sprintf(`{"event_types":["step_completed"],"agent_id":"a%d"}`, i))
	}
	planRefused(t, ps, ToolSubscribe, `{"event_types":["step_completed"],"agent_id":"one-more"}`, "you have 32 subscriptions, the most an agent may have")
	planOKCall(t, ps, ToolUnsubscribe, `{"subscription_id":"sub_1"}`)
	planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed"],"agent_id":"one-more"}`)
}
