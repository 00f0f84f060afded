package todo

// Head is how many messages open every transcript and are always sent: the
// system prompt and the first user message.
const Head = 2

// Window returns where the tail of an n-message transcript that a model
// call receives begins, with at most max messages after the Head (max 0: no
// window). The window never starts on a tool result: it moves back to the
// assistant message that made the call, so a result is never sent without
// its call (providers reject that), even if the window grows a little.
func Window(n, max int, isToolResult func(i int) bool) int {
	if max <= 0 || n-Head <= max {
		return min(Head, n)
	}
	start := n - max
	for start > Head && isToolResult(start) {
		start--
	}
	return start
}
