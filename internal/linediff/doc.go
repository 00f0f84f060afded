// Package linediff shows what changed between two texts as the hunks of a
// unified diff, for a person to read: what a write_file call did to a file,
// under its line in the terminal chat.
//
// # Bounded
//
// A diff is computed from text a model wrote, so its cost and its size are
// bounded whatever the texts are. The common head and tail are set aside
// first (a change of one line in a large file costs a scan), and Myers'
// O(ND) search runs on what is left, until it has tried MaxEdits edits or
// spent a budget of steps; past either, the middle is reported as "N lines
// replaced by M lines" rather than compared. The output keeps at most
// MaxLines lines and MaxBytes bytes (a line that is too long is cut), and a
// last line says how much was left out.
//
// # Format
//
// Each line of the output starts with one character, as in a unified diff
// without its file header: '@' a hunk's header ("@@ -1,3 +1,4 @@"), ' ' a
// line of context, '-' a line removed, '+' a line added, and '\' a note
// (diff's own "\ No newline at end of file", and this package's notes:
// what was left out, a change too large to compare).
package linediff
