package todo

// The plan and cross-agent tools as the model sees them: names,
// descriptions and JSON schemas (CONTRACT.md).

import (
	"encoding/json"
)

// Names of the plan and cross-agent tools the model sees (CONTRACT.md).
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
	// ToolSpawnSubagent is executed by the workflow (it starts a child
	// workflow); only its ToolDef lives here.
	ToolSpawnSubagent = "spawn_subagent"
)

// planToolNames are the tools ApplyPlan runs, in the order PlanTools lists them.
var planToolNames = []string{
	ToolCreatePlan, ToolStartPlan, ToolSetStepStatus, ToolAddStep, ToolGetPlanStatus, ToolCompletePlan,
	ToolSubscribe, ToolUnsubscribe, ToolListSubscriptions, ToolAddDependentStep,
	ToolCompleteStepWithOutput, ToolGetBlockedSteps, ToolGetTaskEvents,
}

// IsPlanTool reports whether name is one of the 13 plan and cross-agent tools
// that ApplyPlan runs (spawn_subagent is not: the workflow runs it).
func IsPlanTool(name string) bool {
	for _, n := range planToolNames {
		if n == name {
			return true
		}
	}
	return false
}

// PlanTools returns the plan tools. The six core tools and the seven
// cross-agent ones are always offered: subscriptions and dependencies also
// work between sibling agents, so an agent that cannot spawn still needs
// them. includeAgents adds spawn_subagent's definition, for agents allowed
// to start children.
func PlanTools(includeAgents bool) []ToolDef {
	defs := []ToolDef{
		{Name: ToolCreatePlan, Description: createPlanDescription, Parameters: json.RawMessage(createPlanSchema)},
		{Name: ToolStartPlan, Description: startPlanDescription, Parameters: json.RawMessage(startPlanSchema)},
		{Name: ToolSetStepStatus, Description: setStepStatusDescription, Parameters: json.RawMessage(setStepStatusSchema)},
		{Name: ToolAddStep, Description: addStepDescription, Parameters: json.RawMessage(addStepSchema)},
		{Name: ToolGetPlanStatus, Description: getPlanStatusDescription, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: ToolCompletePlan, Description: completePlanDescription, Parameters: json.RawMessage(completePlanSchema)},
		{Name: ToolSubscribe, Description: subscribeDescription, Parameters: json.RawMessage(subscribeSchema)},
		{Name: ToolUnsubscribe, Description: unsubscribeDescription, Parameters: json.RawMessage(unsubscribeSchema)},
		{Name: ToolListSubscriptions, Description: listSubscriptionsDescription, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: ToolAddDependentStep, Description: addDependentStepDescription, Parameters: json.RawMessage(addDependentStepSchema)},
		{Name: ToolCompleteStepWithOutput, Description: completeStepWithOutputDescription, Parameters: json.RawMessage(completeStepWithOutputSchema)},
		{Name: ToolGetBlockedSteps, Description: getBlockedStepsDescription, Parameters: json.RawMessage(getBlockedStepsSchema)},
		{Name: ToolGetTaskEvents, Description: getTaskEventsDescription, Parameters: json.RawMessage(getTaskEventsSchema)},
	}
	if includeAgents {
		defs = append(defs,
			ToolDef{Name: ToolSpawnSubagent, Description: spawnSubagentDescription, Parameters: json.RawMessage(spawnSubagentSchema)},
			ToolDef{Name: ToolCancelSubagent, Description: cancelSubagentDescription, Parameters: json.RawMessage(cancelSubagentSchema)})
	}
	return defs
}

const createPlanDescription = `Register a plan for a multi-step task: a title and the ordered steps, each a short sentence. ` +
	`Steps get the ids step_1, step_2, ... in this order. A plan that has not been started can be replaced by calling createPlan again; ` +
	`a started plan must be finished with completePlan first. After creating it, call startPlan.`

const startPlanDescription = `Ask to begin the plan you created. Depending on the settings the user approves it first ` +
	`(you get their answer, possibly with feedback) or it starts at once. Report progress on steps only after it has started.`

const setStepStatusDescription = `Report the state of one step: in_progress when you begin it, completed when it was fully achieved, ` +
	`failed when its goal was not reached (give the reason as error), skipped when it is no longer needed (say why in result). ` +
	`Be honest: a result saying you could not do something is a failure, not a completion, and is refused as completed. ` +
	`Blocked steps wait on other agents and cannot be set.`

const addStepDescription = `Add a step to the current plan, after after_step_id or at the end. ` +
	`Use it when the work turns out to need more than planned. The new step gets the next free id.`

const getPlanStatusDescription = `Show the current or most recent plan: every step with its status, result, error, ` +
	`dependencies and received outputs, and the progress counts.`

const completePlanDescription = `Close the plan: completed when every step is completed, failed or skipped and the goal was reached; ` +
	`failed when it was not; cancelled to drop it (also works before it was started). Add a short summary of the outcome.`

const subscribeDescription = `Have events of other agents' plans delivered to you as messages, e.g. step_completed of a subagent. ` +
	`Subscribe before you spawn the agents you want to follow; events that already happened and match are delivered too. ` +
	`Your own events are never delivered. Returns a subscription id.`

const unsubscribeDescription = `Stop a subscription made with subscribeToTasks.`

const listSubscriptionsDescription = `List your subscriptions with their filters.`

const addDependentStepDescription = `Make a step wait for steps of other agents' plans. Either add a new step (description, optionally after_step_id) ` +
	`or attach the dependencies to an existing step (step_id). The step is blocked until every {agent_id, step_id} in depends_on completes; ` +
	`it then turns pending by itself and their outputs appear in its received_outputs. If a dependency fails, the step fails. ` +
	`provides names this step's own output for agents that wait on it.`

const completeStepWithOutputDescription = `Complete a step and hand a structured result (a JSON object) to the agents waiting on it. ` +
	`Use it for the steps other agents depend on, typically a subagent's last step. The same honesty rule as setStepStatus applies.`

const getBlockedStepsDescription = `List the steps of your plan that wait on other agents, with what they still wait for and what they already received.`

const getTaskEventsDescription = `Read recent plan events of all agents you know of (your own included), newest last. ` +
	`Filter by agent_id and event_types; pass after_event (the last event_id you saw) to read only newer ones.`

const spawnSubagentDescription = `Start a subagent that works on a task on its own, with its own plan. ` +
	`It runs in parallel with you; its events reach you through subscribeToTasks, and you can make your steps wait on its steps with addDependentStep.`

var stepStatusEnum = `["in_progress","completed","failed","skipped"]`

var eventTypesEnum = `["plan_created","plan_started","plan_completed","plan_failed","plan_cancelled","step_added","step_started","step_completed","step_failed","step_skipped","step_blocked","step_unblocked"]`

const refSchema = `{"type":"object","properties":{"agent_id":{"type":"string"},"step_id":{"type":"string"}},"required":["agent_id","step_id"]}`

const createPlanSchema = `{"type":"object","properties":{` +
	`"title":{"type":"string","description":"What the plan achieves."},` +
	`"steps":{"type":"array","minItems":1,"maxItems":100,"items":{"type":"string"},"description":"The steps in order, one short sentence each."}},` +
	`"required":["title","steps"]}`

const startPlanSchema = `{"type":"object","properties":{"message":{"type":"string","description":"A note for the user who approves the plan."}}}`

var setStepStatusSchema = `{"type":"object","properties":{` +
	`"step_id":{"type":"string","description":"The step, e.g. step_1."},` +
	`"status":{"type":"string","enum":` + stepStatusEnum + `},` +
	`"result":{"type":"string","description":"What was done (completed) or why the step was skipped."},` +
	`"error":{"type":"string","description":"Why the step failed."}},` +
	`"required":["step_id","status"]}`

const addStepSchema = `{"type":"object","properties":{` +
	`"description":{"type":"string","description":"What the step does."},` +
	`"after_step_id":{"type":"string","description":"Insert after this step; at the end when left out."}},` +
	`"required":["description"]}`

const completePlanSchema = `{"type":"object","properties":{` +
	`"status":{"type":"string","enum":["completed","failed","cancelled"]},` +
	`"summary":{"type":"string","description":"The outcome in a sentence or two."}},` +
	`"required":["status"]}`

var subscribeSchema = `{"type":"object","properties":{` +
	`"agent_id":{"type":"string","description":"Only this agent's events; leave out or \"*\" for any agent."},` +
	`"event_types":{"type":"array","minItems":1,"items":{"type":"string","enum":` + eventTypesEnum + `}},` +
	`"plan_id":{"type":"string"},"step_id":{"type":"string"}},` +
	`"required":["event_types"]}`

const unsubscribeSchema = `{"type":"object","properties":{"subscription_id":{"type":"string","description":"The id subscribeToTasks returned, e.g. sub_1."}},"required":["subscription_id"]}`

const addDependentStepSchema = `{"type":"object","properties":{` +
	`"description":{"type":"string","description":"A new step to add (leave out step_id)."},` +
	`"step_id":{"type":"string","description":"An existing step to make wait (leave out description)."},` +
	`"after_step_id":{"type":"string","description":"Where to insert the new step; at the end when left out."},` +
	`"depends_on":{"type":"array","minItems":1,"maxItems":16,"items":` + refSchema + `,"description":"The other agents' steps to wait for."},` +
	`"provides":{"type":"string","description":"A name for this step's output, for agents that wait on it."}},` +
	`"required":["depends_on"]}`

const completeStepWithOutputSchema = `{"type":"object","properties":{` +
	`"step_id":{"type":"string"},` +
	`"output":{"type":"object","description":"Structured result for the agents waiting on this step."},` +
	`"result":{"type":"string","description":"What was done, in a sentence."}},` +
	`"required":["step_id","output"]}`

const getBlockedStepsSchema = `{"type":"object","properties":{"plan_id":{"type":"string","description":"Defaults to your current plan."}}}`

var getTaskEventsSchema = `{"type":"object","properties":{` +
	`"agent_id":{"type":"string"},` +
	`"event_types":{"type":"array","items":{"type":"string","enum":` + eventTypesEnum + `}},` +
	`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"At most this many events (default 20), the latest ones."},` +
	`"after_event":{"type":"integer","minimum":0,"description":"Only events with a larger event_id."}}}`

const spawnSubagentSchema = `{"type":"object","properties":{` +
	`"agent_id":{"type":"string","pattern":"^[A-Za-z0-9_-]{1,64}$","description":"A short unique name for the subagent, e.g. implementer."},` +
	`"task":{"type":"string","description":"What the subagent must do, with everything it needs to know."},` +
	`"tools":{"type":"array","items":{"type":"string"},"description":"The tools it may use; all of yours when left out."},` +
	`"model":{"type":"string","description":"The model it runs on; yours when left out."},` +
	`"todo":{"type":"object","description":"Its todo settings (the todo part of a workflow input)."}},` +
	`"required":["agent_id","task"]}`
