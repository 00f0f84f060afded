package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"github.com/todoflow/todoflow/todo"
)

// printState is the `state` command's text: the tree of agents, the root's
// todo checklist and, once there is one, its plan checklist; cleaned, as the
// agents wrote most of it (print.go).
func printState(w io.Writer, id string, st api.State) {
	w = cleanWriter{w}
	fmt.Fprint(w, agentTree(id, st))
	if n := workspaceNote(st.Workspace); n != "" {
		fmt.Fprintln(w, n)
	}
	if n := sessionNote(st.Session); n != "" {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintf(w, "\n%s\n", todo.Checklist(st.Todos))
	if st.Plan != nil {
		fmt.Fprintf(w, "\n%s\n", todo.PlanChecklist(st.Plan))
	}
	if st.AwaitingApproval {
		fmt.Fprintf(w, "\n%s\n", approvalHint(id))
	}
	for _, n := range waitNotes(id, st) {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

// agentTree is the `watch` view: one line for the run, then one per
// subagent (state.subagents, by agent id, recursively), each with its
// progress:
//
//	demo-1 (main): blocked, turn 1, 4 model calls, todos 1/3, plan 1/2 (50%)
//	├─ coder: running, turn 1, 2 model calls, todos 0/2
//	│  └─ tester: completed, turn 1, 1 model calls, todos 1/1
//	└─ researcher: paused, turn 1, 3 model calls, todos 0/0, paused: no access
func agentTree(id string, st api.State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n", id, st.AgentID, agentSummary(st))
	writeSubagents(&b, st.Subagents, "")
	return b.String()
}

func writeSubagents(b *strings.Builder, subs map[string]api.State, indent string) {
	ids := text.SortedKeys(subs)
	for i, id := range ids {
		branch, deeper := "├─ ", "│  "
		if i == len(ids)-1 {
			branch, deeper = "└─ ", "   "
		}
		fmt.Fprintf(b, "%s%s%s: %s\n", indent, branch, id, agentSummary(subs[id]))
		writeSubagents(b, subs[id].Subagents, indent+deeper)
	}
}

// agentSummary is one agent's progress: status, turn, model calls, todos
// done/total, plan progress when it has a plan, and why it is paused.
func agentSummary(st api.State) string {
	done, total := todo.CountStatus(st.Todos, todo.Completed), len(st.Todos)
	if l := st.Live; l != nil {
		// A running subagent as its parent knows it: its counters.
		done, total = l.TodosCompleted, l.TodosTotal
	}
	s := fmt.Sprintf("%s, turn %d, %d model calls, todos %d/%d", st.Status, st.Turns, st.ModelCalls, done, total)
	switch {
	case st.Plan != nil:
		p := todo.ComputeProgress(st.Plan.Steps)
		s += fmt.Sprintf(", plan %d/%d (%s%%)", p.Completed, p.Total, todo.FormatPercent(p.Percent))
	case st.Live != nil && st.Live.PlanID != "":
		s += fmt.Sprintf(", plan %d/%d (%s)", st.Live.StepsCompleted, st.Live.StepsTotal, st.Live.PlanStatus)
	}
	if st.Paused {
		s += ", paused: " + text.OneLine(st.PauseReason)
	}
	if me := st.ModelError; me != nil {
		if me.Retryable {
			s += fmt.Sprintf(", model failing since %s (%d attempts, retrying): %s", me.Since.Format(time.RFC3339), me.Attempts, text.OneLine(me.Message))
		} else {
			s += ", last turn failed on the model (starter retry runs it again): " + text.OneLine(me.Message)
		}
	}
	return s
}

// planNotes are the lines `starter plan` adds after the plan checklist: why
// the run is paused, and how to answer a plan that awaits approval.
func planNotes(id string, st api.State) []string {
	return humanNotes(id, st, "Paused: "+text.OneLine(st.PauseReason))
}

// humanNotes say what the run's tree waits for from a human, and how to
// answer it: the root paused (said as paused says it), its plan, and the
// waits of the tree (waitNotes).
func humanNotes(id string, st api.State, paused string) []string {
	var notes []string
	if st.Paused {
		notes = append(notes, paused)
	}
	if st.AwaitingApproval {
		notes = append(notes, approvalHint(id))
	}
	return append(notes, waitNotes(id, st)...)
}

// waitNotes say which subagents of the tree wait for a human, and how to
// answer them at the root.
func waitNotes(id string, st api.State) []string {
	var notes []string
	for _, w := range st.Waiting {
		if w.AgentID == st.AgentID {
			continue // the root's own wait is said with its state
		}
		switch w.Kind {
		case api.WaitPaused:
			notes = append(notes, fmt.Sprintf(`Subagent %s is paused: %s (run "starter resume %s --agent %s TEXT")`, w.AgentID, text.OneLine(w.Reason), id, w.AgentID))
		case api.WaitPlanApproval:
			notes = append(notes, fmt.Sprintf(`Subagent %s's plan awaits approval (run "starter approve %s --agent %s" or "starter reject %s --agent %s --feedback TEXT")`, w.AgentID, id, w.AgentID, id, w.AgentID))
		}
	}
	for _, w := range st.Waiting {
		if w.Kind == api.WaitToolApproval {
			// The root's own call too: its state says nothing else of it.
			notes = append(notes, fmt.Sprintf(`Tool call %s of agent %s awaits approval (run "starter approve %s" to see it whole, then answer with --call %s)`, w.CallID, w.AgentID, id, w.CallID))
		}
	}
	return notes
}

func approvalHint(id string) string {
	return fmt.Sprintf(`Awaiting approval: run "starter approve %s" or "starter reject %s --feedback TEXT"`, id, id)
}

// workspaceNote says where the run's tools run: on the host that holds its
// workspace (and whether that host answers), or on any worker.
func workspaceNote(ws *api.WorkspaceState) string {
	switch {
	case ws == nil:
		return ""
	case ws.Shared:
		return "Workspace: shared, tools run on any worker"
	case ws.UnansweredSince != nil:
		return fmt.Sprintf("Workspace: on host %s, NOT ANSWERING since %s: tool calls fail until a worker with that host queue is back",
			ws.HostQueue, ws.UnansweredSince.Format(time.RFC3339))
	}
	return "Workspace: on host " + ws.HostQueue
}

// sessionNote names the session's folders in the state folder of the
// worker that holds its workspace, for whoever looks for its files: they
// are named by the session's key, not by the workflow id.
func sessionNote(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf("Session folders: sessions/%s (the workspace, unless the run names one) and reports/%[1]s/, in the worker's state folder", key)
}
