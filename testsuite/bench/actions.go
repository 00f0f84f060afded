package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The server's billable actions: its `action` counter (what Temporal Cloud
// bills), by action_type, read from the dev server's /metrics.

// actions are counts of billable actions by action_type.
type actions map[string]float64

// scrapeActions reads the server's action counter, summed over its other
// labels.
func scrapeActions(ctx context.Context, addr string) (actions, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("server metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("server metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("server metrics: %w", err)
	}
	out := actions{}
	for _, name := range []string{"action", "action_total"} {
		for _, m := range families[name].GetMetric() {
			typ := "?"
			for _, l := range m.GetLabel() {
				if l.GetName() == "action_type" {
					typ = l.GetValue()
				}
			}
			out[typ] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// minus is what a counted since b.
func (a actions) minus(b actions) actions {
	out := actions{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (a actions) total() float64 {
	var n float64
	for _, v := range a {
		n += v
	}
	return n
}

// modelCall is the model call's own actions: its scheduling, its
// heartbeats and any retry of it (the turn has no other activity).
func (a actions) modelCall() float64 {
	return a["command_ScheduleActivityTask"] + a["grpc_RecordActivityTaskHeartbeat"] + a["activity_retry"]
}

// types is every action type of any of as, sorted.
func types(as ...[]actions) []string {
	seen := map[string]bool{}
	for _, list := range as {
		for _, a := range list {
			for k := range a {
				seen[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
