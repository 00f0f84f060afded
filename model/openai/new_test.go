package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		wantErr     string
		wantBaseURL string
	}{
		{"neither key nor base URL", Options{}, "set OPENAI_API_KEY", ""},
		{"key only uses OpenAI", Options{APIKey: "k"}, "", DefaultBaseURL},
		{"local server without key", Options{BaseURL: "http://localhost:11434/v1"}, "", "http://localhost:11434/v1"},
		{"credentials hidden", Options{BaseURL: "http://user:pw@localhost:8000/v1"}, "", "http://user:xxxxx@localhost:8000/v1"},
		{"not a URL", Options{BaseURL: "localhost:8000"}, "invalid base URL", ""},
		{"bad scheme", Options{BaseURL: "ftp://localhost/v1"}, "invalid base URL", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if c.BaseURL() != tt.wantBaseURL {
				t.Errorf("BaseURL = %q, want %q", c.BaseURL(), tt.wantBaseURL)
			}
		})
	}
}

func TestNewFromEnv(t *testing.T) {
	t.Run("nothing set", func(t *testing.T) {
		t.Setenv(EnvAPIKey, "")
		t.Setenv(EnvBaseURL, "")
		if _, err := NewFromEnv(); err == nil || !strings.Contains(err.Error(), EnvAPIKey) {
			t.Fatalf("error = %v, want one naming %s", err, EnvAPIKey)
		}
	})
	t.Run("key and base URL", func(t *testing.T) {
		srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":"ok"}`)})
		t.Setenv(EnvAPIKey, "env-key")
		t.Setenv(EnvBaseURL, srv.URL+"/v1")
		c, err := NewFromEnv()
		if err != nil {
			t.Fatalf("NewFromEnv: %v", err)
		}
		if _, err := c.Complete(context.Background(), model.Request{Model: "m", Call: 1}); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		r := srv.got(t)[0]
		if r.path != "/v1/chat/completions" || r.header.Get("Authorization") != "Bearer env-key" {
			t.Errorf("path %q, Authorization %q", r.path, r.header.Get("Authorization"))
		}
	})
}

// An explicit empty key must win over a key in the environment: a local
// server must not be sent the OpenAI key by accident.
func TestEmptyKeySendsNoAuthorization(t *testing.T) {
	t.Setenv(EnvAPIKey, "sk-from-the-environment")
	srv := newFakeServer(t, reply{body: completion(`{"role":"assistant","content":"ok"}`)})
	c, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), model.Request{Model: "m", Call: 1}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := srv.got(t)[0].header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}
