package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
)

func TestCountWords(t *testing.T) {
	tests := []struct {
		args, want, wantErr string
	}{
		{`{"text": "to do or not to do"}`, "6 words", ""},
		{`{"text": ""}`, "0 words", ""},
		{`{}`, "", `missing properties: ["text"]`},
		{`{"text": 3}`, "", `invalid argument "text": has type "integer", want "string"`},
	}
	reg := tools.NewRegistry(tools.New(wordCount, countWords))
	tool, ok := reg.Lookup("word_count")
	if !ok {
		t.Fatal("word_count is not registered")
	}
	for _, tt := range tests {
		got, err := tool.Run(context.Background(), tools.Env{}, json.RawMessage(tt.args))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("word_count(%s) = %q, %v; want an error containing %q", tt.args, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("word_count(%s) = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
}
