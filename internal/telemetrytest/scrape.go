package telemetrytest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one line of a Prometheus scrape: a histogram is its _bucket
// (with le), _sum and _count samples, as the text format shows it.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

func (s Sample) String() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		kv = append(kv, fmt.Sprintf("%s=%q", k, s.Labels[k]))
	}
	return fmt.Sprintf("%s{%s} %g", s.Name, strings.Join(kv, ","), s.Value)
}

// Scrape is what a /metrics endpoint served, in the text format.
type Scrape []Sample

// Get scrapes url and fails the test when it cannot, or when the answer is
// not the Prometheus text format.
func Get(t testing.TB, url string) Scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: not the Prometheus text format: %v", url, err)
	}
	var out Scrape
	for _, name := range slices.Sorted(maps.Keys(families)) {
		for _, m := range families[name].GetMetric() {
			out = append(out, samples(name, m)...)
		}
	}
	return out
}

func samples(name string, m *dto.Metric) []Sample {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	with := func(k, v string) map[string]string {
		l := maps.Clone(labels)
		l[k] = v
		return l
	}
	switch {
	case m.Counter != nil:
		return []Sample{{name, labels, m.GetCounter().GetValue()}}
	case m.Gauge != nil:
		return []Sample{{name, labels, m.GetGauge().GetValue()}}
	case m.Untyped != nil:
		return []Sample{{name, labels, m.GetUntyped().GetValue()}}
	case m.Histogram != nil:
		h := m.GetHistogram()
		var out []Sample
		for _, b := range h.GetBucket() { // +Inf included
			out = append(out, Sample{name + "_bucket", with("le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)), float64(b.GetCumulativeCount())})
		}
		out = append(out, Sample{name + "_sum", labels, h.GetSampleSum()}, Sample{name + "_count", labels, float64(h.GetSampleCount())})
		return out
	case m.Summary != nil:
		s := m.GetSummary()
		return []Sample{{name + "_sum", labels, s.GetSampleSum()}, {name + "_count", labels, float64(s.GetSampleCount())}}
	}
	return nil
}

// Sum adds the values of the samples called name whose labels include
// labels (each with that value; an empty value matches a label that is
// empty or absent), whatever their other labels.
func (s Scrape) Sum(name string, labels map[string]string) float64 {
	var sum float64
	for _, x := range s {
		if x.Name == name && matches(x.Labels, labels) {
			sum += x.Value
		}
	}
	return sum
}

// Series counts the samples called name whose labels include labels.
func (s Scrape) Series(name string, labels map[string]string) int {
	n := 0
	for _, x := range s {
		if x.Name == name && matches(x.Labels, labels) {
			n++
		}
	}
	return n
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Named returns the samples called name, as text lines, for a failure
// message.
func (s Scrape) Named(name string) string {
	var lines []string
	for _, x := range s {
		if x.Name == name {
			lines = append(lines, x.String())
		}
	}
	return strings.Join(lines, "\n")
}
