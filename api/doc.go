// Package api is todoflow's contract: what a client, a script with the
// `temporal` CLI or another Temporal SDK may rely on when it starts and
// drives an AgentWorkflow run. It holds the names (workflow type, task
// queue, updates, signals, queries, search attributes, the activities whose
// heartbeats clients read), the input and the result, the arguments and the
// answers of the messages, and the statuses and kinds of wait. The workflow
// (package workflows) and the clients (client, chat, scenario, starter)
// import it; the clients import no workflow or activity code. The protocol
// itself, how approvals travel in a tree and what the carry holds, is told in
// docs/protocol.md; CHANGELOG.md lists the contract's changes by release.
//
// Every message of a run, with its argument and its answer:
//
//	kind    name               argument                          answer
//	update  send_message       string: the user's message        string: the turn's reply
//	signal  user_message       string: the user's message        -
//	update  approve_plan       ApprovalArgs                      string: what was done
//	signal  resume             string, or ResumeArgs             -
//	update  set_continuation   ContinuationArgs                  bool: the setting now
//	signal  end_session        none                              -
//	update  retry_turn         none                              string: the turn's reply
//	update  approve_tool       ToolApprovalArgs                  string: what was done
//	update  interrupt          none                              string: what was stopped
//	update  turn_reply         TurnReplyArgs                     string: the handed-over turn's reply
//	update  compact_context    none                              CompactResult
//	signal  task_event         internal: plan events of the tree  -
//	query   plan               none                              string: the plan checklist
//	query   state              none                              State
//	query   messages           offset, limit int (optional)      []model.Message, oldest first
//	query   tool_diffs         []string: call ids                map[string]string: call id to diff
//
// send_message, retry_turn and turn_reply may be answered with a failure of
// type ErrTypeTurnGoesOn (detail TurnGoesOn) when their turn was handed over
// to the session's next run: turn_reply with that update id gets its reply.
// The run tree's own signals (tree_join, tree_want, tree_end, tree_hand)
// pass only between agents of one build and are the workflow's
// (package workflows).
//
// The input (AgentInput) is decoded strictly: an unknown field is refused
// with its name, at the start or by the update's validator. Its carry is
// the workflow's own, opaque to everyone else.
package api
