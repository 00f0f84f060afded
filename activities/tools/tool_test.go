package tools_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
)

func TestHints(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		h                      tools.Hints
		mayDestroy, resendable bool
	}{
		{"MCP defaults", tools.DefaultHints, true, false},
		{"read-only", tools.Hints{ReadOnly: true, Destructive: true}, false, true},
		{"additive", tools.Hints{}, false, false},
		{"idempotent overwrite", tools.Hints{Destructive: true, Idempotent: true}, true, true},
	} {
		if got := tt.h.MayDestroy(); got != tt.mayDestroy {
			t.Errorf("%s: MayDestroy = %v", tt.name, got)
		}
		if got := tt.h.Resendable(); got != tt.resendable {
			t.Errorf("%s: Resendable = %v", tt.name, got)
		}
	}
}

func TestUnsent(t *testing.T) {
	err := fmt.Errorf("call: %w", tools.Unsent(errors.New("connection refused")))
	if !tools.IsRetryable(err) || !tools.IsUnsent(err) {
		t.Errorf("Unsent: retryable %v, unsent %v; want both", tools.IsRetryable(err), tools.IsUnsent(err))
	}
	if tools.IsUnsent(tools.Retryable(errors.New("reset"))) || tools.Unsent(nil) != nil {
		t.Error("Retryable is not Unsent, and Unsent(nil) is nil")
	}
}
