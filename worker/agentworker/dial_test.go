package agentworker

import (
	"testing"

	"go.temporal.io/sdk/client"
)

func TestCompression(t *testing.T) {
	tests := []struct {
		hostPort string
		local    bool
		none     bool
	}{
		{"127.0.0.1:7233", false, true},
		{"127.0.0.2:7233", false, true}, // all of 127/8 is loopback
		{"[::1]:7233", false, true},
		{"localhost:7233", false, true},
		{"localhost", false, true},
		{"10.0.0.5:7233", false, false},
		{"temporal.example:7233", false, false},
		{"my-namespace.tmprl.example:7233", false, false},
		{"localhost.example:7233", false, false},
		{"", false, false},
		// The embedded server is local whatever address it listens on.
		{"0.0.0.0:7233", true, true},
		{"10.0.0.5:7233", true, true},
	}
	for _, tt := range tests {
		got := Compression(tt.hostPort, tt.local)
		_, none := got.(*client.GrpcCompressionNone)
		if none != tt.none || (!none && got != nil) {
			t.Errorf("Compression(%q, %v) = %T, want none: %v (else the SDK's default, nil)", tt.hostPort, tt.local, got, tt.none)
		}
	}
}
