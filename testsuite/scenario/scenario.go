// Package scenario reads scenario files and plays them against a Temporal
// server: a whole agent run driven by a scripted model and scripted human
// actions (CONTRACT.md, Scenario files). The starter's `run --scenario` and
// the end-to-end tests both play scenarios through this package, so what a
// user runs by hand is exactly what the tests check.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/todoflow/todoflow/workflows"
)

// DefaultTimeLimit bounds a scenario run from the workflow's start.
const DefaultTimeLimit = 60 * time.Second

// Scenario is a parsed scenario file.
type Scenario struct {
	Name   string                       `json:"name"`
	Input  workflows.AgentInput         `json:"-"`
	Model  []json.RawMessage            `json:"model"`
	Agents map[string][]json.RawMessage `json:"agents"`
	User   []Action                     `json:"user"`
	Expect []string                     `json:"expect"`
	// TimeLimitS overrides DefaultTimeLimit, in seconds.
	TimeLimitS int `json:"time_limit_s"`

	// Path is the file's absolute path; the scripted model reads it.
	Path string `json:"-"`
}

// Action is one scripted human action, taken when the run's status equals
// When. Exactly one of Update and Signal is set.
type Action struct {
	When   string          `json:"when"`
	Update string          `json:"update"`
	Signal string          `json:"signal"`
	Args   json.RawMessage `json:"args"`
}

func (a Action) name() string {
	if a.Update != "" {
		return a.Update
	}
	return a.Signal
}

// Load reads and checks a scenario file. Its errors name the file and the
// place in it that is wrong.
func Load(path string) (*Scenario, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sc, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	sc.Path = abs
	return sc, nil
}

// Parse decodes and checks a scenario.
func Parse(data []byte) (*Scenario, error) {
	var raw struct {
		Scenario
		Input json.RawMessage `json:"input"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a valid scenario: %w", err)
	}
	sc := raw.Scenario
	if len(raw.Input) > 0 {
		// Unknown input fields are refused here, where a typo would
		// otherwise silently become a default.
		in := json.NewDecoder(bytes.NewReader(raw.Input))
		in.DisallowUnknownFields()
		if err := in.Decode(&sc.Input); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
	}
	if sc.Input.Carry != nil {
		return nil, errors.New("input.carry is set by continue-as-new only")
	}
	if err := sc.Input.Validate(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	for i, r := range sc.Model {
		if err := checkResponse(r); err != nil {
			return nil, fmt.Errorf("model[%d]: %w", i, err)
		}
	}
	for id, rs := range sc.Agents {
		for i, r := range rs {
			if err := checkResponse(r); err != nil {
				return nil, fmt.Errorf("agents.%s[%d]: %w", id, i, err)
			}
		}
	}
	for i, a := range sc.User {
		if err := checkAction(a); err != nil {
			return nil, fmt.Errorf("user[%d]: %w", i, err)
		}
	}
	if sc.TimeLimitS < 0 {
		return nil, fmt.Errorf("time_limit_s is %d: want a positive number of seconds", sc.TimeLimitS)
	}
	return &sc, nil
}

// checkResponse catches the mistakes a scenario author makes most; the
// scripted model checks the rest when it answers.
func checkResponse(r json.RawMessage) error {
	var resp struct {
		Content   *string `json:"content"`
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_calls"`
		DelayMS int `json:"delay_ms"`
	}
	if err := json.Unmarshal(r, &resp); err != nil {
		return fmt.Errorf("want an object with content and/or tool_calls: %w", err)
	}
	for j, c := range resp.ToolCalls {
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("tool_calls[%d]: name is missing", j)
		}
		if a := bytes.TrimSpace(c.Arguments); len(a) > 0 && a[0] != '{' {
			return fmt.Errorf("tool_calls[%d]: arguments must be an object", j)
		}
	}
	if resp.DelayMS < 0 {
		return fmt.Errorf("delay_ms is %d", resp.DelayMS)
	}
	return nil
}

var (
	waits   = map[string]bool{workflows.StatusWaitingUser: true, workflows.StatusAwaitingApproval: true, workflows.StatusPaused: true}
	updates = map[string]bool{workflows.SendMessageUpdate: true, workflows.ApprovePlanUpdate: true, workflows.ApproveToolUpdate: true, workflows.SetContinuationUpdate: true}
	signals = map[string]bool{workflows.UserMessageSignal: true, workflows.ResumeSignal: true, workflows.EndSessionSignal: true}
)

func checkAction(a Action) error {
	if !waits[a.When] {
		return fmt.Errorf("when %q: want waiting_user, awaiting_approval or paused", a.When)
	}
	switch {
	case a.Update != "" && a.Signal != "":
		return errors.New("set update or signal, not both")
	case a.Update != "":
		if !updates[a.Update] {
			return fmt.Errorf("unknown update %q: want send_message, approve_plan, approve_tool or set_continuation", a.Update)
		}
	case a.Signal != "":
		if !signals[a.Signal] {
			return fmt.Errorf("unknown signal %q: want user_message, resume or end_session", a.Signal)
		}
	default:
		return errors.New("an action needs an update or a signal")
	}
	return nil
}

// RunInput is the workflow input the scenario starts: its input, with the
// scripted model of the file unless the input names a model.
func (sc *Scenario) RunInput() workflows.AgentInput {
	in := sc.Input
	if in.Model == "" && sc.Path != "" {
		in.Model = "script:" + sc.Path
	}
	return in
}

// TimeLimit is how long the run may take from its start.
func (sc *Scenario) TimeLimit() time.Duration {
	if sc.TimeLimitS > 0 {
		return time.Duration(sc.TimeLimitS) * time.Second
	}
	return DefaultTimeLimit
}
