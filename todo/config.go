package todo

import "fmt"

// Policy is the rule for how many items may be in progress at once.
type Policy string

// In-progress policies, one per seed that has an opinion.
const (
	// ExactlyOne (cubepi, the default): exactly one item is in progress while
	// any item is pending or in progress; zero or two are refused.
	ExactlyOne Policy = "exactly_one"
	// AtMostOne (Gemini CLI): more than one in progress is refused.
	AtMostOne Policy = "at_most_one"
	// Normalize (LLxprt): when several are in progress, the last one keeps
	// the status and the others go back to pending.
	Normalize Policy = "normalize"
	// Any (LangChain): no rule.
	Any Policy = "any"
)

// Plan approval modes for startPlan.
const (
	ApprovalRequired = "required"
	ApprovalAuto     = "auto"
)

// Config is the `todo` part of a workflow input, as a user writes it. Every
// field is optional; Resolve fills the defaults (docs/operations.md, Settings). Pointers tell
// "left out" from "set to the zero value" where the default is not zero.
type Config struct {
	Enabled                    *bool  `json:"enabled,omitempty"`
	InProgressPolicy           Policy `json:"in_progress_policy,omitempty"`
	AllowEmptyOverUnfinished   bool   `json:"allow_empty_over_unfinished,omitempty"`
	FinalizationMaxCorrections *int   `json:"finalization_max_corrections,omitempty"`
	FinalizationEscalation     bool   `json:"finalization_escalation,omitempty"`
	Continuation               *bool  `json:"continuation,omitempty"`
	ContinuationMax            *int   `json:"continuation_max,omitempty"`
	StaleThreshold             *int   `json:"stale_threshold,omitempty"`
	StaleInterval              *int   `json:"stale_interval,omitempty"`
	PlanApproval               string `json:"plan_approval,omitempty"`
	ToolDescription            string `json:"tool_description,omitempty"`
	SystemPrompt               string `json:"system_prompt,omitempty"`
}

// Settings is a Config with every default applied.
type Settings struct {
	Enabled                    bool
	InProgressPolicy           Policy
	AllowEmptyOverUnfinished   bool
	FinalizationMaxCorrections int
	FinalizationEscalation     bool
	Continuation               bool
	ContinuationMax            int
	StaleThreshold             int
	StaleInterval              int
	PlanApproval               string
	ToolDescription            string
	SystemPrompt               string
}

// The defaults, told in docs/operations.md (Settings).
const (
	DefaultFinalizationMaxCorrections = 1
	DefaultContinuationMax            = 2
	DefaultStaleThreshold             = 5
	DefaultStaleInterval              = 5
)

// Resolve checks c and applies the defaults. subagent selects the defaults of
// a child agent (plan approval auto).
func (c Config) Resolve(subagent bool) (Settings, error) {
	s := Settings{
		Enabled:                    true,
		InProgressPolicy:           ExactlyOne,
		AllowEmptyOverUnfinished:   c.AllowEmptyOverUnfinished,
		FinalizationMaxCorrections: DefaultFinalizationMaxCorrections,
		FinalizationEscalation:     c.FinalizationEscalation,
		Continuation:               true,
		ContinuationMax:            DefaultContinuationMax,
		StaleThreshold:             DefaultStaleThreshold,
		StaleInterval:              DefaultStaleInterval,
		PlanApproval:               ApprovalRequired,
		ToolDescription:            c.ToolDescription,
		SystemPrompt:               c.SystemPrompt,
	}
	if subagent {
		s.PlanApproval = ApprovalAuto
	}
	if c.Enabled != nil {
		s.Enabled = *c.Enabled
	}
	switch c.InProgressPolicy {
	case "":
	case ExactlyOne, AtMostOne, Normalize, Any:
		s.InProgressPolicy = c.InProgressPolicy
	default:
		return Settings{}, fmt.Errorf("todo.in_progress_policy %q: want one of exactly_one, at_most_one, normalize, any", c.InProgressPolicy)
	}
	for _, f := range []struct {
		name string
		src  *int
		dst  *int
		min  int
	}{
		{"finalization_max_corrections", c.FinalizationMaxCorrections, &s.FinalizationMaxCorrections, 0},
		{"continuation_max", c.ContinuationMax, &s.ContinuationMax, 0},
		{"stale_threshold", c.StaleThreshold, &s.StaleThreshold, 0},
		{"stale_interval", c.StaleInterval, &s.StaleInterval, 1},
	} {
		if f.src == nil {
			continue
		}
		if *f.src < f.min {
			return Settings{}, fmt.Errorf("todo.%s is %d: want at least %d", f.name, *f.src, f.min)
		}
		*f.dst = *f.src
	}
	if c.Continuation != nil {
		s.Continuation = *c.Continuation
	}
	switch c.PlanApproval {
	case "":
	case ApprovalRequired, ApprovalAuto:
		s.PlanApproval = c.PlanApproval
	default:
		return Settings{}, fmt.Errorf("todo.plan_approval %q: want required or auto", c.PlanApproval)
	}
	return s, nil
}
