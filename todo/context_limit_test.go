package todo

import "testing"

func TestContextLimit(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		sent int
		want int
	}{
		{"openai", "This model's maximum context length is 8192 tokens. However, your messages resulted in 16384 tokens. Please reduce the length of the messages.", 20000, 9000},
		{"requested", "maximum context length is 4096 tokens, but you requested 8192 tokens", 10000, 4500},
		{"the limit alone", "context length exceeded: the context window is 50000 tokens", 90000, 45000},
		{"a limit above the estimate", "maximum context length is 128000 tokens", 83000, 74700},
		{"no numbers", "context_length_exceeded", 80000, 60000},
		{"nothing sent", "maximum context length is 10 tokens", 0, 0},
	}
	for _, tt := range tests {
		if got := ContextLimit(tt.msg, tt.sent); got != tt.want {
			t.Errorf("%s: ContextLimit = %d, want %d", tt.name, got, tt.want)
		}
	}
}
