package tools

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The resolved schemas are kept by their text, and no more than maxSchemas
// of them: a server whose schemas change at every listing cannot grow the
// worker's memory.
func TestSchemaCacheIsBounded(t *testing.T) {
	for i := range maxSchemas + 10 {
		params := json.RawMessage(fmt.Sprintf(`{"type":"object","description":"listing %d"}`, i))
		if resolvedSchema(params) == nil {
			t.Fatalf("schema %d did not resolve", i)
		}
	}
	schemas.Lock()
	n := len(schemas.m)
	schemas.Unlock()
	if n > maxSchemas {
		t.Errorf("%d schemas cached, want at most %d", n, maxSchemas)
	}
}
