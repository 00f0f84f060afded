package todo

import (
	"regexp"
	"strconv"
)

// Provider phrasings of a context overflow: the model's limit, and what the
// refused request came to, both in the provider's tokens. OpenAI says "This
// model's maximum context length is 8192 tokens. However, your messages
// resulted in 9000 tokens"; vLLM and llama.cpp servers say it alike, or
// "requested 9000 tokens".
var (
	limitPattern = regexp.MustCompile(`(?i)(?:maximum context length|context length|context window|context limit)(?: is| of)? (\d+)`)
	usedPattern  = regexp.MustCompile(`(?i)(?:resulted in|requested|you requested|prompt is|prompt has|messages have) (\d+)(?: tokens)?`)
)

// limitMargin keeps a learned limit this share under what the provider
// refused at: the estimate of a request's tokens is rough.
const limitMargin = 0.9

// ContextLimit is the context budget a run keeps after a provider refused
// a request of sent estimated tokens as too long, with the error text msg:
// in the run's own estimate, since that is what it measures its view in.
// When the provider names its limit and the request's size, the limit is
// scaled by how the provider counted that request; with the limit alone
// it is taken as it is; with neither, a fraction of the refused request.
// It is never more than sent: the request that did not fit must not fit.
func ContextLimit(msg string, sent int) int {
	if sent <= 0 {
		return 0
	}
	limit := number(limitPattern, msg)
	used := number(usedPattern, msg)
	var n float64
	switch {
	case limit > 0 && used > limit:
		n = float64(sent) * float64(limit) / float64(used) * limitMargin
	case limit > 0:
		n = float64(limit) * limitMargin
	default:
		n = float64(sent) * 3 / 4
	}
	return min(int(n), sent*9/10) // limitMargin, in integers
}

// number is the first number pattern's group matches in s, or 0.
func number(pattern *regexp.Regexp, s string) int {
	m := pattern.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}
