package linediff

// Myers' O(ND) difference algorithm ("An O(ND) Difference Algorithm and Its
// Variations", 1986), forward search with the frontier of every step kept
// for the way back: memory grows with D², which maxEdits bounds.

// op is one line of an edit script: kept (in both), removed (from a) or
// added (from b).
type op struct {
	kind byte // ' ', '-' or '+'
	a, b int  // the line's index in a (kept, removed) and in b (kept, added)
}

// script returns an edit script from a to b with the fewest edits, or false
// when that needs more than maxEdits edits or more than maxSteps steps of
// the search.
func script(a, b []int, maxEdits, maxSteps int) ([]op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		// Nothing to search: every line is added, or every one removed
		// (a new file, an emptied one), however many.
		ops := make([]op, 0, n+m)
		for i := range n {
			ops = append(ops, op{'-', i, 0})
		}
		for j := range m {
			ops = append(ops, op{'+', 0, j})
		}
		return ops, true
	}
	maxD := min(maxEdits, n+m)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	// trace[d] is the frontier after step d: v[k] for k in [-d, d], at k+d.
	var trace [][]int32
	steps := 0
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: a line of b added
			} else {
				x = int(v[off+k-1]) + 1 // right: a line of a removed
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
				steps++
			}
			steps++
			v[off+k] = int32(x)
			if x >= n && y >= m {
				trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
				return back(trace, n, m), true
			}
		}
		if steps > maxSteps {
			return nil, false
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	return nil, false
}

// back walks the search's trace from (n, m) to (0, 0) and returns the
// script in order.
func back(trace [][]int32, n, m int) []op {
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // k in [-(d-1), d-1], at k+d-1
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk, sx, sy int // the diagonal before, and where this step's move ended
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
			sx = at(pk)
			sy = sx - pk + 1
		} else {
			pk = k - 1
			sx = at(pk) + 1
			sy = sx - 1 - pk
		}
		for x > sx && y > sy {
			x, y = x-1, y-1
			rev = append(rev, op{' ', x, y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, op{'+', x, y})
		} else {
			x--
			rev = append(rev, op{'-', x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', x, y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
