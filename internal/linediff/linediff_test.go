package linediff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		o    Options
		want string
		st   Stats
	}{
		{name: "equal", a: "x\ny\n", b: "x\ny\n", want: "", st: Stats{}},
		{name: "both empty", a: "", b: "", want: ""},
		{
			name: "new file: every line added",
			a:    "", b: "one\ntwo\n",
			want: "@@ -0,0 +1,2 @@\n+one\n+two",
			st:   Stats{Added: 2},
		},
		{
			name: "emptied: every line removed",
			a:    "one\n", b: "",
			want: "@@ -1 +0,0 @@\n-one",
			st:   Stats{Removed: 1},
		},
		{
			name: "one line changed, context around it",
			a:    "1\n2\n3\n4\n5\n6\n7\n8\n9\n", b: "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n",
			want: "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8",
			st:   Stats{Added: 1, Removed: 1},
		},
		{
			name: "changes far apart: two hunks",
			a:    "a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n", b: "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n",
			o:    Options{Context: 1},
			want: "@@ -1,2 +1,2 @@\n-a\n+A\n 1\n@@ -9,2 +9,2 @@\n 8\n-b\n+B",
			st:   Stats{Added: 2, Removed: 2},
		},
		{
			name: "changes close together: one hunk",
			a:    "a\n1\n2\nb\n", b: "A\n1\n2\nB\n",
			o:    Options{Context: 1},
			want: "@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n-b\n+B",
			st:   Stats{Added: 2, Removed: 2},
		},
		{
			name: "a line inserted",
			a:    "x\nz\n", b: "x\ny\nz\n",
			want: "@@ -1,2 +1,3 @@\n x\n+y\n z",
			st:   Stats{Added: 1},
		},
		{
			name: "no newline at the end, then one",
			a:    "x\ny", b: "x\ny\n",
			want: "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y",
			st:   Stats{Added: 1, Removed: 1},
		},
		{
			name: "too many lines: cut, with a note",
			a:    "", b: strings.Repeat("l\n", 10),
			o:    Options{MaxLines: 5},
			want: "@@ -0,0 +1,10 @@\n+l\n+l\n+l\n\\ 7 more lines of the diff not shown (in all +10 -0 lines)",
			st:   Stats{Added: 10},
		},
		{
			name: "a long line is cut where a character begins",
			a:    "", b: "ééé\n",
			o:    Options{MaxLineBytes: 3},
			want: "@@ -0,0 +1 @@\n+é … (4 more bytes)",
			st:   Stats{Added: 1},
		},
		{
			name: "too many changes to compare: replaced",
			a:    "same\n1\n2\n3\nend\n", b: "same\nA\nB\nC\nD\nend\n",
			o:    Options{MaxEdits: 3},
			want: "@@ -2,3 +2,4 @@\n\\ 3 lines replaced by 4 lines (too many changes to compare line by line)",
			st:   Stats{Added: 4, Removed: 3, Replaced: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := Unified(tt.a, tt.b, tt.o)
			if got != tt.want {
				t.Errorf("Unified:\n%s\nwant:\n%s", got, tt.want)
			}
			if st != tt.st {
				t.Errorf("stats %+v, want %+v", st, tt.st)
			}
		})
	}
}

// The output stays within its bounds whatever the texts: many changes,
// long lines.
func TestUnifiedBounded(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "line %d %s\n", i, strings.Repeat("a", i%900))
		fmt.Fprintf(&b, "line %d %s\n", i*(i%2), strings.Repeat("b", i%700))
	}
	o := Options{}.withDefaults()
	got, st := Unified(a.String(), b.String(), Options{})
	if n := strings.Count(got, "\n") + 1; n > o.MaxLines {
		t.Errorf("%d lines, over %d", n, o.MaxLines)
	}
	if len(got) > o.MaxBytes {
		t.Errorf("%d bytes, over %d", len(got), o.MaxBytes)
	}
	if !strings.Contains(got, "not shown") && !st.Replaced {
		t.Errorf("a cut diff says nothing of what was left out:\n%s", got[max(len(got)-300, 0):])
	}
}

// The search finds a shortest script, and the script rebuilds both texts:
// checked against the LCS of random small inputs.
func TestScriptIsShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a, b := randomLines(r), randomLines(r)
		ops, ok := script(a, b, len(a)+len(b), 1<<30)
		if !ok {
			t.Fatalf("no script for %v -> %v", a, b)
		}
		var gotA, gotB []int
		edits := 0
		for _, p := range ops {
			if p.kind != '+' {
				gotA = append(gotA, a[p.a])
			}
			if p.kind != '-' {
				gotB = append(gotB, b[p.b])
			}
			if p.kind == ' ' && a[p.a] != b[p.b] {
				t.Fatalf("%v -> %v: kept lines differ: %+v", a, b, p)
			}
			if p.kind != ' ' {
				edits++
			}
		}
		if fmt.Sprint(gotA) != fmt.Sprint(a) || fmt.Sprint(gotB) != fmt.Sprint(b) {
			t.Fatalf("%v -> %v: script %+v rebuilds %v -> %v", a, b, ops, gotA, gotB)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%v -> %v: %d edits, the shortest has %d", a, b, edits, want)
		}
	}
}

// The search gives up past its bounds, as it is told to.
func TestScriptBounds(t *testing.T) {
	a := []int{1, 2, 3, 4}
	b := []int{5, 6, 7, 8}
	if _, ok := script(a, b, 7, 1<<30); ok {
		t.Error("8 edits found with at most 7")
	}
	if _, ok := script(a, b, 8, 1<<30); !ok {
		t.Error("8 edits not found with 8")
	}
	if _, ok := script(a, b, 8, 2); ok {
		t.Error("found within 2 steps")
	}
	// A side with no lines needs no search, whatever the bounds.
	if ops, ok := script(nil, make([]int, 5000), 1, 1); !ok || len(ops) != 5000 {
		t.Errorf("a new file of 5000 lines: %d ops, %v", len(ops), ok)
	}
}

func randomLines(r *rand.Rand) []int {
	out := make([]int, r.IntN(12))
	for i := range out {
		out[i] = r.IntN(4)
	}
	return out
}

func lcs(a, b []int) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// A change of one line in a large file costs a scan, not a search.
func BenchmarkUnifiedOneLineOfMany(b *testing.B) {
	var s strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&s, "line %d\n", i)
	}
	old := s.String()
	changed := strings.Replace(old, "line 25000\n", "changed\n", 1)
	for b.Loop() {
		Unified(old, changed, Options{})
	}
}
