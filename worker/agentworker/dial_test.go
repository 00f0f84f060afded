package agentworker

import (
	"context"
	"fmt"
	"strings"
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

func TestCompressionSetting(t *testing.T) {
	tests := []struct {
		value, hostPort string
		want            string // the type's name, "" for nil
		wantErr         bool
	}{
		{"", "127.0.0.1:7233", "*internal.GrpcCompressionNone", false},
		{"", "10.0.0.5:7233", "", false},
		{"auto", "10.0.0.5:7233", "", false},
		{"gzip", "127.0.0.1:7233", "*internal.GrpcCompressionGzip", false},
		{" GZIP ", "127.0.0.1:7233", "*internal.GrpcCompressionGzip", false},
		{"none", "10.0.0.5:7233", "*internal.GrpcCompressionNone", false},
		{"snappy", "10.0.0.5:7233", "", true},
	}
	for _, tt := range tests {
		got, err := compressionSetting(tt.value, tt.hostPort, false)
		if (err != nil) != tt.wantErr {
			t.Errorf("compressionSetting(%q, %q): error %v, want error: %v", tt.value, tt.hostPort, err, tt.wantErr)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), EnvGrpcCompression) {
				t.Errorf("compressionSetting(%q): error %q does not name %s", tt.value, err, EnvGrpcCompression)
			}
			continue
		}
		name := ""
		if got != nil {
			name = fmt.Sprintf("%T", got)
		}
		if name != tt.want {
			t.Errorf("compressionSetting(%q, %q) = %s, want %s", tt.value, tt.hostPort, name, tt.want)
		}
	}
}

// A bad setting is refused before any connection is tried.
func TestDialRefusesABadCompressionSetting(t *testing.T) {
	t.Setenv(EnvGrpcCompression, "fast")
	_, _, err := DialWith(context.Background(), DialOptions{Address: "127.0.0.1:1", Local: true})
	if err == nil || !strings.Contains(err.Error(), EnvGrpcCompression) {
		t.Fatalf("DialWith with %s=fast: error %v, want one naming the variable", EnvGrpcCompression, err)
	}
}
