package todo

// The table of the workflow's own tools: one entry per tool (its name, its
// kind, its argument struct, a valid call and what runs it). The model's
// view of a tool is made of the entry: its description is tools/<name>.txt,
// its schema the argument struct, generated into tools/schemas.json by
// `go generate` (./internal/genschemas; a test there holds the file current).
// This package stays free of dependencies: the schemas are read from the
// embedded file, and the arguments are read by the tools' own loose readers
// (planArgs, ParseWrite), whose refusals are worded for the model.

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:generate go run ./internal/genschemas

// Names of the todo tools the model sees (docs/tools.md).
const (
	ToolWrite = "write_todos"
	ToolRead  = "todo_read"
	ToolPause = "todo_pause"
)

// Names of the plan and cross-agent tools the model sees (docs/tools.md).
const (
	ToolCreatePlan             = "createPlan"
	ToolStartPlan              = "startPlan"
	ToolSetStepStatus          = "setStepStatus"
	ToolAddStep                = "addStep"
	ToolGetPlanStatus          = "getPlanStatus"
	ToolCompletePlan           = "completePlan"
	ToolSubscribe              = "subscribeToTasks"
	ToolUnsubscribe            = "unsubscribe"
	ToolListSubscriptions      = "listSubscriptions"
	ToolAddDependentStep       = "addDependentStep"
	ToolCompleteStepWithOutput = "completeStepWithOutput"
	ToolGetBlockedSteps        = "getBlockedSteps"
	ToolGetTaskEvents          = "getTaskEvents"
	// ToolSpawnSubagent and ToolCancelSubagent are run by the workflow (a
	// child workflow started or cancelled); only their ToolDefs live here.
	ToolSpawnSubagent  = "spawn_subagent"
	ToolCancelSubagent = "cancel_subagent"
)

// Kind says what runs a tool of the table.
type Kind int

const (
	// KindNone: not a tool of the table (a worker's tool).
	KindNone Kind = iota
	// KindList: a tool of the todo list, run by Apply.
	KindList
	// KindPlan: a plan or cross-agent tool, run by ApplyPlan.
	KindPlan
	// KindAgent: a tool the workflow runs itself (a child workflow); only
	// its definition lives here.
	KindAgent
)

// A Tool is an entry of the table of the workflow's own tools.
type Tool struct {
	Name string
	Kind Kind
	// Args is a zero value of the tool's argument struct: the fields' json
	// tags name the arguments, jsonschema tags describe them, and schema
	// tags add constraints ("enum=a|b", "minItems=1", "items.enum=...",
	// space-separated, rendered in the order named; items and description
	// come last unless named).
	Args any
	// Example is a valid call, quoted when the arguments are refused ("{}"
	// when empty).
	Example string

	list func(st *State, args json.RawMessage, s Settings, same int) Result
	plan func(ps *PlanState, a planArgs, approvalRequired bool) PlanOutcome
}

// Table returns the workflow's own tools, in the order the model is offered them.
func Table() []Tool { return append([]Tool(nil), table...) }

var (
	table []Tool
	// planToolNames are the tools ApplyPlan runs, in the table's order.
	planToolNames []string
	// defs are the tools' definitions, in the table's order.
	defs []ToolDef
)

//go:embed tools
var toolFiles embed.FS

func init() {
	table = []Tool{
		{Name: ToolWrite, Kind: KindList, Args: writeTodosArgs{}, list: writeTool},
		{Name: ToolRead, Kind: KindList, Args: noArgs{}, list: func(st *State, _ json.RawMessage, _ Settings, _ int) Result {
			return Result{Content: ReadView(st.Todos)}
		}},
		{Name: ToolPause, Kind: KindList, Args: todoPauseArgs{}, list: pauseTool},

		{Name: ToolCreatePlan, Kind: KindPlan, Args: createPlanArgs{}, plan: func(ps *PlanState, a planArgs, approvalRequired bool) PlanOutcome {
			return PlanOutcome{Result: ps.createPlan(a, approvalRequired)}
		},
			Example: `{"title": "Fix the login bug", "steps": ["Reproduce it", "Fix it", "Add a test"]}`},
		{Name: ToolStartPlan, Kind: KindPlan, Args: startPlanArgs{}, plan: (*PlanState).startPlan,
			Example: `{"message": "Shall I go ahead?"}`},
		{Name: ToolSetStepStatus, Kind: KindPlan, Args: setStepStatusArgs{}, plan: result((*PlanState).setStepStatus),
			Example: `{"step_id": "step_1", "status": "completed", "result": "What was done"}`},
		{Name: ToolAddStep, Kind: KindPlan, Args: addStepArgs{}, plan: result((*PlanState).addStep),
			Example: `{"description": "Update the docs", "after_step_id": "step_2"}`},
		{Name: ToolGetPlanStatus, Kind: KindPlan, Args: noArgs{}, plan: result((*PlanState).getPlanStatus)},
		{Name: ToolCompletePlan, Kind: KindPlan, Args: completePlanArgs{}, plan: result((*PlanState).completePlan),
			Example: `{"status": "completed", "summary": "What was achieved"}`},
		{Name: ToolSubscribe, Kind: KindPlan, Args: subscribeArgs{}, plan: result((*PlanState).subscribe),
			Example: `{"event_types": ["step_completed"], "agent_id": "researcher"}`},
		{Name: ToolUnsubscribe, Kind: KindPlan, Args: unsubscribeArgs{}, plan: result((*PlanState).unsubscribe),
			Example: `{"subscription_id": "sub_1"}`},
		{Name: ToolListSubscriptions, Kind: KindPlan, Args: noArgs{}, plan: result((*PlanState).listSubscriptions)},
		{Name: ToolAddDependentStep, Kind: KindPlan, Args: addDependentStepArgs{}, plan: result((*PlanState).addDependentStep),
			Example: `{"description": "Review the results", "depends_on": [{"agent_id": "implementer", "step_id": "step_1"}]}`},
		{Name: ToolCompleteStepWithOutput, Kind: KindPlan, Args: completeStepWithOutputArgs{}, plan: result((*PlanState).completeStepWithOutput),
			Example: `{"step_id": "step_1", "output": {"passed": true}, "result": "What was done"}`},
		{Name: ToolGetBlockedSteps, Kind: KindPlan, Args: getBlockedStepsArgs{}, plan: result((*PlanState).getBlockedSteps)},
		{Name: ToolGetTaskEvents, Kind: KindPlan, Args: getTaskEventsArgs{}, plan: result((*PlanState).getTaskEvents),
			Example: `{"event_types": ["step_completed"], "limit": 20}`},

		{Name: ToolSpawnSubagent, Kind: KindAgent, Args: spawnSubagentArgs{}},
		{Name: ToolCancelSubagent, Kind: KindAgent, Args: cancelSubagentArgs{}},
	}
	var schemas map[string]json.RawMessage
	if err := json.Unmarshal(readToolFile("schemas.json"), &schemas); err != nil {
		panic(fmt.Sprintf("todo: tools/schemas.json: %v", err))
	}
	for _, t := range table {
		if t.Kind == KindPlan {
			planToolNames = append(planToolNames, t.Name)
		}
		desc := strings.TrimSuffix(string(readToolFile(t.Name+".txt")), "\n")
		defs = append(defs, ToolDef{Name: t.Name, Description: desc, Parameters: schemas[t.Name]})
	}
}

func readToolFile(name string) []byte {
	b, err := toolFiles.ReadFile("tools/" + name)
	if err != nil {
		panic(fmt.Sprintf("todo: the table's tools need %v", err))
	}
	return b
}

// result adapts a plan tool that answers with a Result alone.
func result(f func(*PlanState, planArgs) Result) func(*PlanState, planArgs, bool) PlanOutcome {
	return func(ps *PlanState, a planArgs, _ bool) PlanOutcome { return PlanOutcome{Result: f(ps, a)} }
}

// lookup returns the table's entry for name.
func lookup(name string) (Tool, bool) {
	for _, t := range table {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// KindOf says what runs the tool called name: KindNone for a worker's tool.
func KindOf(name string) Kind {
	t, _ := lookup(name)
	return t.Kind
}

// IsTool reports whether name is one of the todo tools.
func IsTool(name string) bool { return KindOf(name) == KindList }

// IsPlanTool reports whether name is one of the 13 plan and cross-agent tools
// that ApplyPlan runs (spawn_subagent is not: the workflow runs it).
func IsPlanTool(name string) bool { return KindOf(name) == KindPlan }

// Tools returns the todo tools for an agent with settings s, none when the
// todo list is disabled.
func Tools(s Settings) []ToolDef {
	if !s.Enabled {
		return nil
	}
	out := definitions(KindList)
	if s.ToolDescription != "" {
		out[0].Description = s.ToolDescription // write_todos
	}
	return out
}

// PlanTools returns the plan tools. The six core tools and the seven
// cross-agent ones are always offered: subscriptions and dependencies also
// work between sibling agents, so an agent that cannot spawn still needs
// them. includeAgents adds spawn_subagent's and cancel_subagent's
// definitions, for agents allowed to start children.
func PlanTools(includeAgents bool) []ToolDef {
	out := definitions(KindPlan)
	if includeAgents {
		out = append(out, definitions(KindAgent)...)
	}
	return out
}

// definitions returns the definitions of the tools of kind k, in order.
func definitions(k Kind) []ToolDef {
	var out []ToolDef
	for i, t := range table {
		if t.Kind == k {
			out = append(out, defs[i])
		}
	}
	return out
}

// The argument structs, one per tool; tools without arguments take noArgs.

type noArgs struct{}

type writeTodosArgs struct {
	Todos []struct {
		ID       string `json:"id,omitempty" jsonschema:"Stable identifier; when left out, the item's 1-based position (or the next number no other item uses)."`
		Content  string `json:"content" jsonschema:"What to do, in a short sentence."`
		Status   string `json:"status" schema:"enum=pending|in_progress|completed|cancelled|blocked"`
		Priority string `json:"priority,omitempty" schema:"enum=high|medium|low"`
	} `json:"todos" jsonschema:"The complete checklist." schema:"description items"`
}

type todoPauseArgs struct {
	Reason string `json:"reason" jsonschema:"Why you cannot go on, for the user." schema:"minLength=1 maxLength=500"`
}

type createPlanArgs struct {
	Title string   `json:"title" jsonschema:"What the plan achieves."`
	Steps []string `json:"steps" jsonschema:"The steps in order, one short sentence each." schema:"minItems=1 maxItems=100"`
}

type startPlanArgs struct {
	Message string `json:"message,omitempty" jsonschema:"A note for the user who approves the plan."`
}

type setStepStatusArgs struct {
	StepID string `json:"step_id" jsonschema:"The step, e.g. step_1."`
	Status string `json:"status" schema:"enum=in_progress|completed|failed|skipped"`
	Result string `json:"result,omitempty" jsonschema:"What was done (completed) or why the step was skipped."`
	Error  string `json:"error,omitempty" jsonschema:"Why the step failed."`
}

type addStepArgs struct {
	Description string `json:"description" jsonschema:"What the step does."`
	AfterStepID string `json:"after_step_id,omitempty" jsonschema:"Insert after this step; at the end when left out."`
}

type completePlanArgs struct {
	Status  string `json:"status" schema:"enum=completed|failed|cancelled"`
	Summary string `json:"summary,omitempty" jsonschema:"The outcome in a sentence or two."`
}

type subscribeArgs struct {
	AgentID    string   `json:"agent_id,omitempty" jsonschema:"Only this agent's events; leave out or \"*\" for any agent."`
	EventTypes []string `json:"event_types" schema:"minItems=1 items.enum=plan_created|plan_started|plan_completed|plan_failed|plan_cancelled|step_added|step_started|step_completed|step_failed|step_skipped|step_blocked|step_unblocked"`
	PlanID     string   `json:"plan_id,omitempty"`
	StepID     string   `json:"step_id,omitempty"`
}

type unsubscribeArgs struct {
	SubscriptionID string `json:"subscription_id" jsonschema:"The id subscribeToTasks returned, e.g. sub_1."`
}

type addDependentStepArgs struct {
	Description string `json:"description,omitempty" jsonschema:"A new step to add (leave out step_id)."`
	StepID      string `json:"step_id,omitempty" jsonschema:"An existing step to make wait (leave out description)."`
	AfterStepID string `json:"after_step_id,omitempty" jsonschema:"Where to insert the new step; at the end when left out."`
	DependsOn   []struct {
		AgentID string `json:"agent_id"`
		StepID  string `json:"step_id"`
	} `json:"depends_on" jsonschema:"The other agents' steps to wait for." schema:"minItems=1 maxItems=16"`
	Provides string `json:"provides,omitempty" jsonschema:"A name for this step's output, for agents that wait on it."`
}

type completeStepWithOutputArgs struct {
	StepID string          `json:"step_id"`
	Output json.RawMessage `json:"output" jsonschema:"Structured result for the agents waiting on this step."`
	Result string          `json:"result,omitempty" jsonschema:"What was done, in a sentence."`
}

type getBlockedStepsArgs struct {
	PlanID string `json:"plan_id,omitempty" jsonschema:"Defaults to your current plan."`
}

type getTaskEventsArgs struct {
	AgentID    string   `json:"agent_id,omitempty"`
	EventTypes []string `json:"event_types,omitempty" schema:"items.enum=plan_created|plan_started|plan_completed|plan_failed|plan_cancelled|step_added|step_started|step_completed|step_failed|step_skipped|step_blocked|step_unblocked"`
	Limit      int      `json:"limit,omitempty" jsonschema:"At most this many events (default 20), the latest ones." schema:"minimum=1 maximum=100"`
	AfterEvent int      `json:"after_event,omitempty" jsonschema:"Only events with a larger event_id." schema:"minimum=0"`
}

type spawnSubagentArgs struct {
	AgentID string          `json:"agent_id" jsonschema:"A short unique name for the subagent, e.g. implementer." schema:"pattern=^[A-Za-z0-9_-]{1,64}$"`
	Task    string          `json:"task" jsonschema:"What the subagent must do, with everything it needs to know."`
	Tools   []string        `json:"tools,omitempty" jsonschema:"The tools it may use; all of yours when left out."`
	Model   string          `json:"model,omitempty" jsonschema:"The model it runs on; yours when left out."`
	Todo    json.RawMessage `json:"todo,omitempty" jsonschema:"Its todo settings (the todo part of a workflow input)."`
}

type cancelSubagentArgs struct {
	AgentID string `json:"agent_id" jsonschema:"The agent_id you gave spawn_subagent."`
	Reason  string `json:"reason,omitempty" jsonschema:"Why, for the record: the steps waiting on it fail with this reason."`
}
