package todo

// ToolCancelSubagent is executed by the workflow (it cancels a child
// workflow); only its ToolDef lives here.
const ToolCancelSubagent = "cancel_subagent"

const cancelSubagentDescription = `Stop one of the subagents you spawned, for example when its work is no longer needed or it is stuck. ` +
	`It is cancelled at once; the steps that wait on it then fail, and its final state is kept. You can only cancel your own subagents.`

const cancelSubagentSchema = `{"type":"object","properties":{` +
	`"agent_id":{"type":"string","description":"The agent_id you gave spawn_subagent."},` +
	`"reason":{"type":"string","description":"Why, for the record: the steps waiting on it fail with this reason."}},` +
	`"required":["agent_id"]}`
