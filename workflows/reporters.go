package workflows

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/todo"
)

// Reporters deliver plan events to the outside, in order per reporter, each
// delivery an activity retried within the reporter's window. A reporter that
// keeps failing loses that event and says so in the state, and never stalls
// the agent: the loop only appends to a queue.
var reportActivity = workflow.ActivityOptions{
	StartToCloseTimeout: 15 * time.Second,
	// ScheduleToCloseTimeout, the retry window of one event, is the
	// reporter's retry_window_s.
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    20 * time.Second,
	},
}

// drainTimeout bounds how long a finishing run waits for its reporters.
const drainTimeout = 5 * time.Minute

// carriedReportBytes is what the reporters' queues may take in a carry, in
// all. A handover does not wait for a reporter (a webhook that answers 503
// for hours would hold the run): the queues cross, the delivery under way
// among them (a webhook's Idempotency-Key lets a receiver drop a second
// copy). The oldest reports that do not fit are counted as failed.
const carriedReportBytes = 128 << 10

// CarriedReporter is one reporter's part of a carry.
type CarriedReporter struct {
	Status api.ReporterStatus `json:"status"`
	Queue  []Report           `json:"queue,omitempty"`
}

// Report is one queued delivery: the event and the plan after it.
type Report struct {
	Event json.RawMessage `json:"event"`
	Plan  json.RawMessage `json:"plan,omitempty"`
}

// reporting is the run's reporters, a component of the run: one delivery
// loop per reporter, whose queues cross in the carry.
type reporting struct {
	agentID string
	session string // the session's key, which names its reports' folder
	list    []*reporter
}

type reporter struct {
	cfg    api.ReporterConfig
	queue  []Report
	busy   bool
	status api.ReporterStatus
}

// newReporting builds the run's reporters, with the queues and counts an
// earlier run carried (none when the reporters changed).
func newReporting(agentID, session string, cfgs []api.ReporterConfig, carried []CarriedReporter) *reporting {
	rs := make([]*reporter, len(cfgs))
	for i, c := range cfgs {
		rs[i] = &reporter{cfg: c, status: api.ReporterStatus{Type: c.Type}}
		if len(carried) == len(cfgs) && carried[i].Status.Type == c.Type {
			rs[i].status, rs[i].queue = carried[i].Status, carried[i].Queue
			rs[i].status.Pending = 0
		}
	}
	return &reporting{agentID: agentID, session: session, list: rs}
}

// carry is the reporters' queues as a carry holds them: each
// reporter's newest reports within its share of carriedReportBytes.
func (rp *reporting) carry() []CarriedReporter {
	if len(rp.list) == 0 {
		return nil
	}
	share := carriedReportBytes / len(rp.list)
	out := make([]CarriedReporter, len(rp.list))
	for i, r := range rp.list {
		keep, used := len(r.queue), 0
		for keep > 0 {
			n := len(r.queue[keep-1].Event) + len(r.queue[keep-1].Plan)
			if used+n > share {
				break
			}
			used += n
			keep--
		}
		st := r.status
		if dropped := keep; dropped > 0 {
			st.Failed += dropped
			st.LastError = fmt.Sprintf("%d event(s) dropped at a handover: the queue passed the %d bytes a continuation carries; last error: %s", dropped, share, st.LastError)
		}
		out[i] = CarriedReporter{Status: st, Queue: r.queue[keep:]}
	}
	return out
}

// report queues ev for every reporter.
func (rp *reporting) report(ev todo.Event, plan json.RawMessage) {
	if len(rp.list) == 0 {
		return
	}
	data, _ := json.Marshal(ev)
	for _, r := range rp.list {
		r.queue = append(r.queue, Report{Event: data, Plan: plan})
	}
}

// start runs one delivery loop per reporter for the life of the run.
func (rp *reporting) start(ctx workflow.Context) {
	info := workflow.GetInfo(ctx)
	for _, r := range rp.list {
		workflow.Go(ctx, func(ctx workflow.Context) {
			opts := withSummary(reportActivity, rp.agentID+": report to "+r.cfg.Type)
			opts.ScheduleToCloseTimeout = r.cfg.RetryWindow()
			actx := workflow.WithActivityOptions(ctx, opts)
			for {
				if err := workflow.Await(ctx, func() bool { return len(r.queue) > 0 }); err != nil {
					return
				}
				item := r.queue[0]
				r.busy = true
				err := workflow.ExecuteActivity(actx, activities.ReportName, activities.ReportInput{
					Reporter:   r.cfg,
					WorkflowID: info.WorkflowExecution.ID,
					Session:    rp.session,
					AgentID:    rp.agentID,
					Event:      item.Event,
					Plan:       item.Plan,
				}).Get(ctx, nil)
				r.queue, r.busy = r.queue[1:], false
				if err != nil {
					r.status.Failed++
					r.status.LastError = api.RootMessage(err)
					workflow.GetLogger(ctx).Warn("plan event not reported", "reporter", r.cfg.Type, "error", err)
				} else {
					r.status.Delivered++
				}
			}
		})
	}
}

// idle reports whether every queued event was handled.
func (rp *reporting) idle() bool {
	for _, r := range rp.list {
		if r.busy || len(r.queue) > 0 {
			return false
		}
	}
	return true
}

// abandon gives up on the events still queued when a finishing run
// has waited drainTimeout for its reporters, and counts them as failed, so
// that the state says what was never delivered.
func (rp *reporting) abandon() {
	for _, r := range rp.list {
		if n := len(r.queue); n > 0 {
			r.status.Failed += n
			r.status.LastError = fmt.Sprintf("%d event(s) not delivered before the run ended; last error: %s", n, r.status.LastError)
			r.queue = nil
		}
	}
}

func (rp *reporting) states() []api.ReporterStatus {
	out := make([]api.ReporterStatus, len(rp.list))
	for i, r := range rp.list {
		out[i] = r.status
		out[i].Pending = len(r.queue)
	}
	return out
}

func withSummary(o workflow.ActivityOptions, summary string) workflow.ActivityOptions {
	o.Summary = summary
	return o
}
