package agentworker

import "go.temporal.io/sdk/worker"

// autoscalePollers makes the worker's workflow and activity pollers scale
// with the server's feedback (the SDK's poller autoscaling: 5 to start,
// between 1 and 100), unless Options.Worker sets their number or their
// behaviour. With the SDK's fixed two pollers per queue, the first workflow
// tasks of sessions that start together wait behind the tasks of the
// sessions already running, which the same two pollers serve from the
// sticky queue: a hundred sessions opened at once waited seconds for their
// first reply (BENCHMARKS.md, the first phase of the bench).
func autoscalePollers(o *worker.Options) {
	if o.WorkflowTaskPollerBehavior == nil && o.MaxConcurrentWorkflowTaskPollers == 0 {
		o.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	}
	if o.ActivityTaskPollerBehavior == nil && o.MaxConcurrentActivityTaskPollers == 0 {
		o.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	}
}
