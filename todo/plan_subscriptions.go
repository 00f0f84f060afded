package todo

// Subscriptions to other agents' events, what the model is told of them
// (TakeNotifications) and what it can ask for (getTaskEvents).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

func (ps *PlanState) subscribe(a planArgs) Result {
	agent, types := a.str("agent_id"), a.strList("event_types")
	if a.err == nil && len(types) == 0 {
		a.err = fmt.Errorf("%q is missing or empty: name the event types to receive, from %s", "event_types", strings.Join(EventTypes, ", "))
	}
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	if bad := unknownEventType(types); bad != nil {
		return *bad
	}
	planID, stepID := a.str("plan_id"), a.str("step_id")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	agent = strings.TrimSpace(agent)
	if agent != "" && agent == ps.AgentID {
		return planError("%q is your own agent id, and your own events are never delivered to you. "+
			"Name another agent, or leave agent_id out to follow every other agent.", agent)
	}
	sub := Subscription{AgentID: agent, EventTypes: appendNew([]string(nil), types...), PlanID: strings.TrimSpace(planID), StepID: strings.TrimSpace(stepID)}
	for _, old := range ps.Subscriptions {
		if sameFilter(old, sub) {
			return planOK(subscribed{old.ID, old, "You already have this subscription (" + old.ID + "); nothing was added."})
		}
	}
	if len(ps.Subscriptions) >= MaxSubscriptions {
		return planError("you have %d subscriptions, the most an agent may have. Unsubscribe from one you no longer need (listSubscriptions shows them), or subscribe to more at once: one subscription takes several event types, and every agent when agent_id is left out.", len(ps.Subscriptions))
	}
	ps.SubscriptionCount++
	sub.ID = "sub_" + strconv.Itoa(ps.SubscriptionCount)
	ps.Subscriptions = append(ps.Subscriptions, sub)
	past := 0
	for _, ev := range ps.Events {
		if ev.AgentID != ps.AgentID && !ps.delivered(ev.EventID) && sub.Matches(ev) {
			past++
		}
	}
	msg := "Subscribed. Matching events of other agents will be delivered to you as messages."
	if past > 0 {
		msg += fmt.Sprintf(" %d earlier event(s) match and will be delivered too.", past)
	}
	return planOK(subscribed{sub.ID, sub, msg})
}

// subscribed answers subscribeToTasks.
type subscribed struct {
	SubscriptionID string       `json:"subscription_id"`
	Subscription   Subscription `json:"subscription"`
	Message        string       `json:"message"`
}

// sameFilter reports whether two subscriptions select the same events.
func sameFilter(a, b Subscription) bool {
	if (a.AgentID == "*" || a.AgentID == "") != (b.AgentID == "*" || b.AgentID == "") {
		return false
	}
	if a.AgentID != "*" && a.AgentID != "" && a.AgentID != b.AgentID {
		return false
	}
	if a.PlanID != b.PlanID || a.StepID != b.StepID || len(a.EventTypes) != len(b.EventTypes) {
		return false
	}
	for _, t := range a.EventTypes {
		if !slices.Contains(b.EventTypes, t) {
			return false
		}
	}
	return true
}

// unknownEventType refuses the first of types that is not an event type.
func unknownEventType(types []string) *Result {
	for _, t := range types {
		if !slices.Contains(EventTypes, t) {
			return refusal("unknown event type %q. The event types are: %s.", t, strings.Join(EventTypes, ", "))
		}
	}
	return nil
}

func (ps *PlanState) subscriptionIDs() string {
	if len(ps.Subscriptions) == 0 {
		return "you have no subscriptions"
	}
	ids := make([]string, len(ps.Subscriptions))
	for i, s := range ps.Subscriptions {
		ids[i] = s.ID
	}
	return "your subscriptions are " + strings.Join(ids, ", ")
}

func (ps *PlanState) unsubscribe(a planArgs) Result {
	id := a.required("subscription_id", "give the id subscribeToTasks returned, e.g. \"sub_1\"")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	for i, s := range ps.Subscriptions {
		if s.ID == id {
			ps.Subscriptions = append(ps.Subscriptions[:i:i], ps.Subscriptions[i+1:]...)
			return planOK(map[string]any{"subscription_id": id, "removed": true, "message": "Subscription " + id + " removed."})
		}
	}
	return planError("unknown subscription_id %q: %s (listSubscriptions shows them).", id, ps.subscriptionIDs())
}

func (ps *PlanState) listSubscriptions(planArgs) Result {
	return planOK(struct {
		Subscriptions []Subscription `json:"subscriptions"`
		Count         int            `json:"count"`
	}{ps.Subscriptions, len(ps.Subscriptions)}) // never nil: ApplyPlan makes it []
}

// ownNotice reports whether ev is an event of this agent that the model must
// hear of although it did not cause it: a step of its plan that a dependency
// unblocked (step_unblocked) or failed (step_failed with data "dependency").
func (ps *PlanState) ownNotice(ev Event) bool {
	if ev.AgentID != ps.AgentID {
		return false
	}
	switch ev.Type {
	case EventStepUnblocked:
		return true
	case EventStepFailed:
		_, ok := eventData(ev)["dependency"]
		return ok
	}
	return false
}

// UnheardOwn reports whether one of the agent's own steps was unblocked or
// failed by a dependency and the model has not been told yet: a turn whose
// model answered meanwhile must not end before it hears of it (its next
// call takes it, TakeNotifications), or the model ends its turn on a step
// it believes still blocked.
func (ps *PlanState) UnheardOwn() bool {
	return slices.ContainsFunc(ps.Events, func(ev Event) bool { return ps.ownNotice(ev) && !ps.delivered(ev.EventID) })
}

// TakeNotifications returns the events not delivered to the model yet, in
// event_id order, and marks them delivered: the events of other agents that
// match a subscription, and this agent's own step_unblocked and dependency
// step_failed events (ownNotice), with or without subscriptions. A new
// subscription thereby receives the matching events that happened before
// it; an event is delivered once, whatever the number of subscriptions it
// matches. Own events that addDependentStep's result already told are
// marked delivered there.
func (ps *PlanState) TakeNotifications() []Event {
	var out []Event
	for _, ev := range ps.Events {
		if ps.delivered(ev.EventID) {
			continue
		}
		if ev.AgentID == ps.AgentID {
			if ps.ownNotice(ev) {
				out = append(out, ev)
			}
			continue
		}
		if slices.ContainsFunc(ps.Subscriptions, func(s Subscription) bool { return s.Matches(ev) }) {
			out = append(out, ev)
		}
	}
	for _, ev := range out {
		ps.markDelivered(ev.EventID)
	}
	return out
}

func (ps *PlanState) getTaskEvents(a planArgs) Result {
	agent, types := a.str("agent_id"), a.strList("event_types")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	if bad := unknownEventType(types); bad != nil {
		return *bad
	}
	limit := a.integer("limit", DefaultTaskEventsLimit)
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	if limit < 1 {
		return planError("limit must be at least 1 (it is %d); leave it out for the default of %d.", limit, DefaultTaskEventsLimit)
	}
	if limit > MaxTaskEventsLimit {
		limit = MaxTaskEventsLimit
	}
	after := a.integer("after_event", 0)
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	if after < 0 {
		return planError("after_event must be 0 or more (it is %d): pass the last event_id you have seen.", after)
	}
	agent = strings.TrimSpace(agent)
	var match []Event
	for _, ev := range ps.Events {
		if ev.EventID <= after {
			continue
		}
		if agent != "" && agent != "*" && ev.AgentID != agent {
			continue
		}
		if len(types) > 0 && !slices.Contains(types, ev.Type) {
			continue
		}
		match = append(match, ev)
	}
	if len(match) > limit {
		match = match[len(match)-limit:]
	}
	if match == nil {
		match = []Event{}
	}
	res := struct {
		Events      []Event `json:"events"`
		Count       int     `json:"count"`
		LastEventID int     `json:"last_event_id,omitempty"`
		Message     string  `json:"message,omitempty"`
	}{Events: match, Count: len(match)}
	if len(match) > 0 {
		res.LastEventID = match[len(match)-1].EventID
		res.Message = "Pass last_event_id as after_event next time to read only newer events."
	} else {
		res.Message = "No matching events."
	}
	return planOK(res)
}
