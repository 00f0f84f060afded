package todo

import "slices"

// The broker of a run tree: the routing table its root holds, as pure
// decisions (the workflow sends what they say; workflows/tree.go draws the
// whole path).
//
// Every agent of the tree sends its own events, wants and end to the root
// only. The root's log (a PlanState) therefore holds every event of the
// tree, and the Broker beside it knows who is in the tree (Members), who
// wants whose events (Interests, "*" included) and which wants wait for an
// agent that is not in the tree yet (Pending). From these it decides:
//   - Serve: a want's answer from the root's log (the binding of a
//     dependency to the producer's plan, the backlog the asker lacks, and
//     how the producer ended when it has);
//   - Deliveries: who gets a new event, once each;
//   - End: who is told that an agent ended; the ended agent leaves every
//     table, so that nothing is sent to it any more;
//   - Join and Settle: the pending wants an agent's arrival, or the end of
//     anyone who could still spawn it, decides.

// Member is an agent of the tree, as the root's roster holds it.
type Member struct {
	AgentID    string `json:"agent_id"`
	WorkflowID string `json:"workflow_id"`
	// Parent is the workflow id of the agent's parent.
	Parent string `json:"parent"`
	// Ended says how the agent ended; "" while it runs.
	Ended string `json:"ended,omitempty"`
}

// Want asks the root for an agent's events: a subscription (Filter set) or
// a dependency (Filter nil: every event of Of, from the plan it binds to).
type Want struct {
	// Agent and WorkflowID are the asker and where its answers go.
	Agent      string `json:"agent"`
	WorkflowID string `json:"workflow_id"`
	// Of is the producer; "*" every agent but the asker.
	Of     string        `json:"of"`
	Filter *Subscription `json:"filter,omitempty"`
	// MinPlan is the producer's latest plan the asker knows of: a
	// dependency is never bound to an earlier one.
	MinPlan string `json:"min_plan,omitempty"`
}

// Answer is the root's answer to a want.
type Answer struct {
	// Bind is, for a dependency, the producer's plan it is bound to.
	Bind *string
	// Backlog are the producer's logged events the asker lacks.
	Backlog []Event
	// Gone is how the producer ended; "" while it runs.
	Gone string
}

// Broker is the root's routing table. Its zero value is an empty tree.
type Broker struct {
	Members   []Member `json:"members,omitempty"`
	Interests []Want   `json:"interests,omitempty"`
	Pending   []Want   `json:"pending,omitempty"`
}

// Member is the member id, or nil.
func (b *Broker) Member(id string) *Member {
	for i := range b.Members {
		if b.Members[i].AgentID == id {
			return &b.Members[i]
		}
	}
	return nil
}

// Join records an agent that started and returns the pending wants for it,
// which the root serves now.
func (b *Broker) Join(m Member) []Want {
	if b.Member(m.AgentID) == nil {
		m.Ended = ""
		b.Members = append(b.Members, m)
	}
	return b.take(func(w Want) bool { return w.Of == m.AgentID })
}

// take removes and returns the pending wants that pass keep.
func (b *Broker) take(keep func(Want) bool) []Want {
	var out []Want
	b.Pending = slices.DeleteFunc(b.Pending, func(w Want) bool {
		if keep(w) {
			out = append(out, w)
			return true
		}
		return false
	})
	return out
}

// Verdict is what the root does with a want.
type Verdict int

const (
	// Serve: the producer is in the tree (or "*"); answer now.
	Serve Verdict = iota
	// Wait: the producer may still be spawned; the want is pending.
	Wait
	// Refuse: no one can spawn the producer any more.
	Refuse
)

// Route decides a want: served when its producer is in the tree, pending
// while someone may still spawn it, refused otherwise.
func (b *Broker) Route(w Want, inTree, maySpawn bool) Verdict {
	switch {
	case w.Of == "*" || inTree:
		return Serve
	case maySpawn:
		b.Pending = append(b.Pending, w)
		return Wait
	}
	return Refuse
}

// Serve records the interest of w (unless the asker is the log's own
// agent, whose log holds every event already) and answers it from the log.
func (b *Broker) Serve(w Want, log *PlanState) Answer {
	var had []Want
	for _, in := range b.Interests {
		if in.Agent == w.Agent {
			had = append(had, in)
		}
	}
	if w.Agent != log.AgentID {
		b.Interests = append(b.Interests, w)
	}
	var ans Answer
	from := ""
	if w.Filter == nil && w.Of != "*" {
		from = laterPlan(w.MinPlan, log.CurrentPlanOf(w.Of))
		ans.Bind = &from
	}
	for _, ev := range log.Events {
		if w.matches(ev) && admitsPlan(from, ev.PlanID) && !slices.ContainsFunc(had, func(in Want) bool { return in.matches(ev) }) {
			ans.Backlog = append(ans.Backlog, ev)
		}
	}
	if m := b.Member(w.Of); m != nil {
		ans.Gone = m.Ended
	}
	return ans
}

// matches reports whether ev is one of the events w asks for.
func (w Want) matches(ev Event) bool {
	switch {
	case ev.AgentID == w.Agent:
		return false
	case w.Of != "*" && w.Of != ev.AgentID:
		return false
	}
	return w.Filter == nil || w.Filter.Matches(ev)
}

// Deliveries are the interests ev goes to: one per asker, in the order
// they asked.
func (b *Broker) Deliveries(ev Event) []Want {
	var out []Want
	for _, in := range b.Interests {
		if in.matches(ev) && !slices.ContainsFunc(out, func(o Want) bool { return o.Agent == in.Agent }) {
			out = append(out, in)
		}
	}
	return out
}

// End records that agent id ended (how), once: first is false when it was
// known to have ended already. It returns the askers to tell (those with a
// want of id's own, one each) and the running agents it leaves without a
// parent, which end with it (a parent's close cancels its children). The
// ended agent leaves every table: no interest of it, in it, or pending
// for it as the asker remains. An agent never seen joining is recorded.
func (b *Broker) End(id, how string) (tell []Want, orphans []string, first bool) {
	m := b.Member(id)
	switch {
	case m == nil:
		b.Members = append(b.Members, Member{AgentID: id})
		m = &b.Members[len(b.Members)-1]
	case m.Ended != "":
		return nil, nil, false
	}
	m.Ended = how
	for _, in := range b.Interests {
		if in.Of == id && !slices.ContainsFunc(tell, func(t Want) bool { return t.Agent == in.Agent }) {
			tell = append(tell, in)
		}
	}
	b.Interests = slices.DeleteFunc(b.Interests, func(in Want) bool { return in.Agent == id || in.Of == id })
	b.take(func(w Want) bool { return w.Agent == id })
	if m.WorkflowID != "" {
		for _, o := range b.Members {
			if o.Parent == m.WorkflowID && o.Ended == "" {
				orphans = append(orphans, o.AgentID)
			}
		}
	}
	return tell, orphans, true
}

// MaySpawn reports whether an agent of the tree other than asker still
// runs, and so may spawn an agent that is not in the tree yet (whether the
// root's own turn may is the workflow's to say).
func (b *Broker) MaySpawn(asker string) bool {
	return slices.ContainsFunc(b.Members, func(m Member) bool { return m.Ended == "" && m.AgentID != asker })
}

// Settle takes the pending wants that are decided now: those whose
// producer is in the tree (to serve) and those no one can spawn any more
// (to refuse); the rest stay pending.
func (b *Broker) Settle(inTree func(id string) bool, maySpawn func(asker string) bool) (serve, refuse []Want) {
	serve = b.take(func(w Want) bool { return inTree(w.Of) })
	refuse = b.take(func(w Want) bool { return !maySpawn(w.Agent) })
	return serve, refuse
}

// laterPlan is the later of two plan ids ("" is before any).
func laterPlan(p, q string) string {
	if planNumber(q) > planNumber(p) {
		return q
	}
	return p
}
