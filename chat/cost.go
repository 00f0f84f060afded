package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"
)

// What a session has cost: the tokens of its agents' model calls, priced by
// a table the user keeps (prices.json in the state folder, or the file
// TODOFLOW_PRICES names), since prices change and differ by provider and
// contract. No price is built in: a wrong one is worse than none.

// EnvPrices names a price table file other than <state folder>/prices.json.
const EnvPrices = "TODOFLOW_PRICES"

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Prices maps a model to its price: by its reference as a session's input
// names it ("openai:gpt-4o-mini"), or by its name alone ("gpt-4o-mini").
type Prices map[string]Price

// LoadPrices reads a price table; a file that does not exist is an empty
// table, one that cannot be read or makes no sense an error that says why.
func LoadPrices(path string) (Prices, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	var p Prices
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf(`price table %s: %w (want {"MODEL": {"input": DOLLARS, "output": DOLLARS}}, per million tokens)`, path, err)
	}
	for _, name := range slices.Sorted(maps.Keys(p)) {
		if pr := p[name]; pr.Input < 0 || pr.Output < 0 {
			return nil, fmt.Errorf("price table %s: %q has a negative price", path, name)
		}
	}
	return p, nil
}

// of returns the price of a model: a reference as a session's input names
// it, or a name alone (what the state shows for the worker's default, as
// the worker reported it), each matched by a key of either kind. An empty
// one (a session before its first model call) has none.
func (p Prices) of(ref string) (Price, bool) {
	if ref == "" {
		return Price{}, false
	}
	if pr, ok := p[ref]; ok {
		return pr, true
	}
	name := ref
	if _, n, ok := strings.Cut(ref, ":"); ok {
		name = n
	}
	if pr, ok := p[name]; ok {
		return pr, true
	}
	// A key by reference ("openai:gpt-4o-mini") for a name the worker
	// reported: the first in order, so that the same table prices alike.
	for _, key := range slices.Sorted(maps.Keys(p)) {
		if _, n, ok := strings.Cut(key, ":"); ok && n == name {
			return p[key], true
		}
	}
	return Price{}, false
}

// usageLine is the status line's account of what the session used: its
// tree's tokens and, when every agent that used any has a price, their
// cost.
func (p Prices) usageLine(st *api.State) string {
	if st == nil || st.TreeUsage.TotalTokens == 0 {
		return ""
	}
	line := tokens(st.TreeUsage.TotalTokens) + " tokens"
	if cost, ok := p.cost(*st); ok {
		line += fmt.Sprintf(" · $%.4f", cost)
	}
	return line
}

// cost adds up the cost of an agent and of every agent under it, each at
// its own model's price; ok is false when one that used tokens has none.
// What the tree used beyond the agents listed (children pruned from the
// list, a finished child's own children) is priced at the model of the
// agent that lists them, the model they use unless one was chosen.
func (p Prices) cost(st api.State) (float64, bool) {
	total := 0.0
	in, out := st.TreeUsage.PromptTokens, st.TreeUsage.CompletionTokens
	for _, id := range slices.Sorted(maps.Keys(st.Subagents)) {
		sub := st.Subagents[id]
		c, ok := p.cost(sub)
		if !ok {
			return 0, false
		}
		total += c
		in, out = in-sub.TreeUsage.PromptTokens, out-sub.TreeUsage.CompletionTokens
	}
	if in <= 0 && out <= 0 {
		return total, true
	}
	pr, ok := p.of(st.Model)
	if !ok {
		return 0, false
	}
	return total + (float64(max(in, 0))*pr.Input+float64(max(out, 0))*pr.Output)/1e6, true
}

// tokens writes a count of tokens short: 950, 12.3k, 4.1M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
