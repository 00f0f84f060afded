package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"
)

func usage(in, out int64) api.Usage {
	return api.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
}

func TestUsageLine(t *testing.T) {
	prices := Prices{"gpt-big": {Input: 10, Output: 30}, "openai:gpt-small": {Input: 1, Output: 2}}
	child := api.State{Model: "openai:gpt-small", Usage: usage(1_000_000, 0), TreeUsage: usage(1_000_000, 0)}
	tests := []struct {
		name string
		st   *api.State
		want string
	}{
		{"nothing used yet", &api.State{Model: "openai:gpt-big"}, ""},
		{"priced by its name", &api.State{Model: "openai:gpt-big", Usage: usage(100_000, 10_000), TreeUsage: usage(100_000, 10_000)}, "110.0k tokens · $1.3000"},
		{"by its reference", &api.State{Model: "openai:gpt-small", Usage: usage(500, 500), TreeUsage: usage(500, 500)}, "1.0k tokens · $0.0015"},
		{"a model without a price: tokens only", &api.State{Model: "openai:other", Usage: usage(500, 0), TreeUsage: usage(500, 0)}, "500 tokens"},
		{"before the first call reports the worker's default: tokens only", &api.State{Usage: usage(2_500_000, 0), TreeUsage: usage(2_500_000, 0)}, "2.5M tokens"},
		{"the worker's default as it reported it", &api.State{Model: "gpt-big", Usage: usage(100_000, 10_000), TreeUsage: usage(100_000, 10_000)}, "110.0k tokens · $1.3000"},
		{"a reported name, priced by a reference key", &api.State{Model: "gpt-small", Usage: usage(500, 500), TreeUsage: usage(500, 500)}, "1.0k tokens · $0.0015"},
		{"each agent at its model's price", &api.State{Model: "openai:gpt-big", Usage: usage(100_000, 0), TreeUsage: usage(1_100_000, 0),
			Subagents: map[string]api.State{"a": child}}, "1.1M tokens · $2.0000"},
		{"a child without a price: tokens only", &api.State{Model: "openai:gpt-big", Usage: usage(100_000, 0), TreeUsage: usage(1_100_000, 0),
			Subagents: map[string]api.State{"a": {Model: "x:unknown", Usage: usage(1_000_000, 0), TreeUsage: usage(1_000_000, 0)}}}, "1.1M tokens"},
		{"pruned children at the parent's price", &api.State{Model: "openai:gpt-big", Usage: usage(0, 0), TreeUsage: usage(100_000, 0)}, "100.0k tokens · $1.0000"},
	}
	for _, tt := range tests {
		if got := prices.usageLine(tt.st); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLoadPrices(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p, err := LoadPrices(filepath.Join(dir, "none.json")); p != nil || err != nil {
		t.Errorf("a missing table: %v, %v; want none and no error", p, err)
	}
	if p, err := LoadPrices(write("ok.json", `{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}`)); err != nil || p["gpt-4o-mini"].Output != 0.6 {
		t.Errorf("a table: %v, %v", p, err)
	}
	for name, text := range map[string]string{"broken.json": `{"gpt": 1}`, "negative.json": `{"gpt": {"input": -1}}`} {
		if _, err := LoadPrices(write(name, text)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}
