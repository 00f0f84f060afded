package todo

import "slices"

// Broker is the routing table of a run tree, held by its root, whose log
// (a PlanState) holds every event of the tree: who is in the tree
// (Members), who wants whose events (Interests, "*" included) and which
// wants wait for an agent not in the tree yet (Pending). Its decisions are
// pure; the workflow sends what they say (workflows/tree.go draws the path).
// Its zero value is an empty tree.
type Broker struct {
	Members   []Member `json:"members,omitempty"`
	Interests []Want   `json:"interests,omitempty"`
	Pending   []Want   `json:"pending,omitempty"`
}

// Member is an agent of the tree.
type Member struct {
	AgentID    string `json:"agent_id"`
	WorkflowID string `json:"workflow_id"`
	Parent     string `json:"parent"`          // the parent's workflow id
	Ended      string `json:"ended,omitempty"` // how it ended; "" while it runs
}

// Want asks the root for the events of agent Of ("*": every agent but the
// asker): a subscription (Filter set) or a dependency (Filter nil: every
// event, from the plan it binds to, never earlier than MinPlan). Its
// answers go to the workflow WorkflowID.
type Want struct {
	Agent      string        `json:"agent"`
	WorkflowID string        `json:"workflow_id"`
	Of         string        `json:"of"`
	Filter     *Subscription `json:"filter,omitempty"`
	MinPlan    string        `json:"min_plan,omitempty"`
	// Drop withdraws the asker's subscription Filter.ID (unsubscribe):
	// the root forwards none of its events any more.
	Drop bool `json:"drop,omitempty"`
}

// Answer answers a want: the plan a dependency is bound to, the logged
// events the asker lacks, and how the producer ended ("" while it runs).
type Answer struct {
	Bind    *string
	Backlog []Event
	Gone    string
}

// Member is the member id, or nil.
func (b *Broker) Member(id string) *Member {
	i := slices.IndexFunc(b.Members, func(m Member) bool { return m.AgentID == id })
	if i < 0 {
		return nil
	}
	return &b.Members[i]
}

// Join records an agent that started and returns the pending wants for it.
func (b *Broker) Join(m Member) []Want {
	if b.Member(m.AgentID) == nil {
		m.Ended = ""
		b.Members = append(b.Members, m)
	}
	return b.take(func(w Want) bool { return w.Of == m.AgentID })
}

// take removes and returns the pending wants that pass keep.
func (b *Broker) take(keep func(Want) bool) (out []Want) {
	b.Pending = slices.DeleteFunc(b.Pending, func(w Want) bool {
		if keep(w) {
			out = append(out, w)
		}
		return keep(w)
	})
	return out
}

// Serve records the interest of w (unless the asker is the log's own
// agent: its log holds every event) and answers it from the log.
func (b *Broker) Serve(w Want, log *PlanState) Answer {
	had := slices.DeleteFunc(slices.Clone(b.Interests), func(in Want) bool { return in.Agent != w.Agent })
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

func (w Want) matches(ev Event) bool {
	return ev.AgentID != w.Agent && (w.Of == "*" || w.Of == ev.AgentID) && (w.Filter == nil || w.Filter.Matches(ev))
}

// Drop removes agent's interest made by its subscription subID, and
// reports whether there was one.
func (b *Broker) Drop(agent, subID string) bool {
	n := len(b.Interests)
	b.Interests = slices.DeleteFunc(b.Interests, func(in Want) bool {
		return in.Agent == agent && in.Filter != nil && in.Filter.ID == subID
	})
	b.Pending = slices.DeleteFunc(b.Pending, func(w Want) bool {
		return w.Agent == agent && w.Filter != nil && w.Filter.ID == subID
	})
	return len(b.Interests) < n
}

// Deliveries are the interests a new event goes to, one per asker.
func (b *Broker) Deliveries(ev Event) []Want {
	var out []Want
	for _, in := range b.Interests {
		if in.matches(ev) && !slices.ContainsFunc(out, func(o Want) bool { return o.Agent == in.Agent }) {
			out = append(out, in)
		}
	}
	return out
}

// End records, once (first), that agent id ended: it returns the askers to
// tell (one per asker with a want of id's own) and the running agents left
// without their parent (a parent's close cancels its children). The agent
// leaves every table, so nothing is sent to it any more. An agent never
// seen joining is recorded.
func (b *Broker) End(id, how string) (tell []Want, orphans []string, first bool) {
	m := b.Member(id)
	if m == nil {
		b.Members = append(b.Members, Member{AgentID: id})
		m = &b.Members[len(b.Members)-1]
	} else if m.Ended != "" {
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
	for _, o := range b.Members {
		if o.Parent == m.WorkflowID && m.WorkflowID != "" && o.Ended == "" {
			orphans = append(orphans, o.AgentID)
		}
	}
	return tell, orphans, true
}

// MaxEndedMembers is how many ended agents the roster keeps: a session may
// spawn any number of subagents over its life, and the roster crosses every
// handover in the carry. The running ones are bounded by MaxSubagents and
// MaxTreeDepth; of the ended, the latest are kept (an agent's dependency on
// one is answered with how it ended); an older one is known as unknown.
const MaxEndedMembers = 256

// PruneEnded drops the oldest ended members past MaxEndedMembers, and
// returns how many it dropped.
func (b *Broker) PruneEnded() int {
	ended := 0
	for _, m := range b.Members {
		if m.Ended != "" {
			ended++
		}
	}
	drop := ended - MaxEndedMembers
	if drop <= 0 {
		return 0
	}
	n := drop
	b.Members = slices.DeleteFunc(b.Members, func(m Member) bool {
		if n > 0 && m.Ended != "" {
			n--
			return true
		}
		return false
	})
	return drop
}

// MaySpawn reports whether an agent other than asker still runs, and so
// may spawn one not in the tree yet (the root's own turn is the caller's).
func (b *Broker) MaySpawn(asker string) bool {
	return slices.ContainsFunc(b.Members, func(m Member) bool { return m.Ended == "" && m.AgentID != asker })
}

// Settle takes the pending wants decided now: those whose producer is in
// the tree (to serve) and those no one can spawn any more (to refuse).
func (b *Broker) Settle(inTree func(id string) bool, maySpawn func(asker string) bool) (serve, refuse []Want) {
	serve = b.take(func(w Want) bool { return inTree(w.Of) })
	return serve, b.take(func(w Want) bool { return !maySpawn(w.Agent) })
}

// laterPlan is the later of two plan ids ("" is before any).
func laterPlan(p, q string) string {
	if planNumber(q) > planNumber(p) {
		return q
	}
	return p
}
