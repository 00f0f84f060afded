// Package scenario reads scenario files and plays them against a Temporal
// server: a whole agent run driven by a scripted model and scripted human
// actions (docs/testing.md, Scenarios). The starter's `run --scenario` and
// the end-to-end tests both play scenarios through this package, so what a
// user runs by hand is exactly what the tests check.
//
// The file is read twice: here, strictly (an unknown field is a typo, not
// something to ignore), and by the worker's scripted model (model/script),
// which answers the model calls from "model", "agents" and "summary". Parse
// runs the scripted model's parser too, so that a file the worker would
// refuse is refused before the run starts.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model/script"
)

// DefaultTimeLimit bounds a scenario run from the workflow's start.
const DefaultTimeLimit = 60 * time.Second

// MaxTimeLimit is the largest time_limit_s accepted: a day is already far
// more than a played run needs, and the bound keeps the conversion to a
// time.Duration from overflowing into a limit that has passed at once.
const MaxTimeLimit = 24 * time.Hour

// Scenario is a parsed scenario file.
type Scenario struct {
	Name   string                       `json:"name"`
	Input  api.AgentInput               `json:"-"`
	Model  []json.RawMessage            `json:"model"`
	Agents map[string][]json.RawMessage `json:"agents"`
	// Summary is what the scripted model answers every summarising call
	// with (the agent compacting its context), for the root agent and its
	// subagents alike; nil for none, when it answers with
	// script.DefaultSummary. A summary takes no response of Model or
	// Agents, so a scenario plays the same however often its run
	// compacts. A pointer, because "" is a summary of its own: the
	// agent then drops its older messages without one.
	Summary *string `json:"summary,omitempty"`
	// Then answers every model call of the root agent past Model (the
	// scripted model reads it); none for an empty final text.
	Then   json.RawMessage `json:"then,omitempty"`
	User   []Action        `json:"user"`
	Expect []string        `json:"expect"`
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
		return nil, fmt.Errorf("not a valid scenario: %w", decodeError(err))
	}
	// One object per file: a second one (two files pasted together) is a
	// mistake, not something to ignore.
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a valid scenario: more follows the scenario's object, which ends at byte %d", end)
	}
	sc := raw.Scenario
	if len(raw.Input) > 0 {
		// Unknown input fields are refused here, where a typo would
		// otherwise silently become a default.
		in := json.NewDecoder(bytes.NewReader(raw.Input))
		in.DisallowUnknownFields()
		if err := in.Decode(&sc.Input); err != nil {
			return nil, fmt.Errorf("input: %w", decodeError(err))
		}
	}
	if sc.Input.Carry != nil {
		return nil, errors.New("input.carry is set by continue-as-new only")
	}
	if err := sc.Input.Validate(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	// The worker's scripted model reads the responses from the same file:
	// its parser checks them here, so that a scenario it would refuse is
	// refused before the run starts.
	if _, err := script.Parse(data, ""); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(sc.Agents)) {
		if _, err := script.Parse(data, id); err != nil {
			return nil, err
		}
	}
	for i, a := range sc.User {
		if err := checkAction(a); err != nil {
			return nil, fmt.Errorf("user[%d]: %w", i, err)
		}
	}
	if sc.TimeLimitS < 0 || sc.TimeLimitS > int(MaxTimeLimit/time.Second) {
		return nil, fmt.Errorf("time_limit_s is %d: want a positive number of seconds, at most %d", sc.TimeLimitS, int(MaxTimeLimit/time.Second))
	}
	return &sc, nil
}

// decodeError words a decoding error for the author of the file: the field
// and what it holds instead of what, not the Go types encoding/json names.
func decodeError(err error) error {
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	got, want := jsonValue(te.Value), wantedKind(te.Type)
	field := strings.TrimPrefix(te.Field, "Scenario.") // the embedded struct's name is no field
	if field == "" {
		return fmt.Errorf("want %s, not %s", want, got)
	}
	return fmt.Errorf("%s: got %s where %s is wanted", field, got, want)
}

// jsonValue names a JSON value as UnmarshalTypeError describes it ("number",
// "number 1.5", "bool", ...).
func jsonValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	switch v {
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + v
	}
	return "a " + v
}

// wantedKind names the JSON value a Go type is decoded from.
func wantedKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

var (
	waits   = map[string]bool{api.StatusWaitingUser: true, api.StatusAwaitingApproval: true, api.StatusPaused: true}
	updates = map[string]bool{api.SendMessageUpdate: true, api.ApprovePlanUpdate: true, api.ApproveToolUpdate: true,
		api.SetContinuationUpdate: true, api.CompactContextUpdate: true}
	signals = map[string]bool{api.UserMessageSignal: true, api.ResumeSignal: true, api.EndSessionSignal: true}
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
			return fmt.Errorf("unknown update %q: want send_message, approve_plan, approve_tool, set_continuation or compact_context", a.Update)
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
func (sc *Scenario) RunInput() api.AgentInput {
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
