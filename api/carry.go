package api

import "encoding/json"

// The carry (AgentInput.Carry) is the workflow's own: its parts change with
// the run's components. Two facts of it are read outside the workflow, and
// every protocol's carry has them: who wrote it, and how many turns the
// session had taken when it was written.

// carryProtocol is the protocol a carry says it was written by; false when
// there is no carry. A carry of every protocol has it at the top.
func carryProtocol(carry json.RawMessage) (int, bool) {
	if len(carry) == 0 {
		return 0, false
	}
	var c struct {
		Protocol int `json:"protocol"`
	}
	_ = json.Unmarshal(carry, &c) // what does not decode, the workflow refuses
	return c.Protocol, true
}

// CarriedTurns is how many turns the session had taken before the run
// that in starts: 0 without a carry. Carries of protocol 2 keep the count
// in their session part, those of protocols 0 and 1 at their top.
func (in AgentInput) CarriedTurns() int {
	if len(in.Carry) == 0 {
		return 0
	}
	var c struct {
		Turns   int `json:"turns"`
		Session *struct {
			Turns int `json:"turns"`
		} `json:"session"`
	}
	_ = json.Unmarshal(in.Carry, &c) // a carry that does not decode starts no run
	if c.Session != nil {
		return c.Session.Turns
	}
	return c.Turns
}
