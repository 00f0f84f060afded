package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(100 - i) // 100 down to 1: percentile sorts
	}
	for _, tc := range []struct {
		name string
		xs   []int64
		p    float64
		want int64
	}{
		{"none", nil, 50, 0},
		{"one", []int64{7}, 99, 7},
		{"p50 of an even count is the lower middle", []int64{4, 1, 3, 2}, 50, 2},
		{"p50 of an odd count is the middle", []int64{5, 1, 3}, 50, 3},
		{"p99 of 100", hundred, 99, 99},
		{"p100 is the largest", hundred, 100, 100},
		{"p1 of 100", hundred, 1, 1},
		{"a rank below one is the smallest", []int64{9, 8}, 0.1, 8},
		{"p99 of 3 is the largest", []int64{1, 2, 3}, 99, 3},
	} {
		if got := percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("%s: percentile(%v, %v) = %d, want %d", tc.name, tc.xs, tc.p, got, tc.want)
		}
	}
	// Durations, as the cluster phase gives them; the input is left as it was.
	ds := []time.Duration{3 * time.Second, time.Second, 2 * time.Second}
	if got := percentile(ds, 50); got != 2*time.Second {
		t.Errorf("percentile of durations = %v, want 2s", got)
	}
	if ds[0] != 3*time.Second {
		t.Errorf("percentile sorted its input: %v", ds)
	}
}
