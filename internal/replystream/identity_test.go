package replystream

import "testing"

func TestLocate(t *testing.T) {
	defer func(f func() (string, error)) { osHostname = f }(osHostname)
	osHostname = func() (string, error) { return "laptop", nil }
	mine := (&Server{url: "http://127.0.0.1:4100"}).Identity("123@laptop@")
	osHostname = func() (string, error) { return "worker-3", nil }
	theirs := (&Server{url: "http://127.0.0.1:4100"}).Identity("123@worker-3@")
	exposed := (&Server{url: "http://worker-3:7240"}).Identity("123@worker-3@")
	osHostname = func() (string, error) { return "laptop", nil }
	tests := []struct {
		identity, want string
	}{
		{mine, "http://127.0.0.1:4100"},
		{theirs, ""}, // loopback on another machine: not ours to reach
		{exposed, "http://worker-3:7240"},
		{"123@worker-3@", ""},
		{"x stream=file:///etc/passwd host=laptop", ""},
		{"x stream=http:// host=laptop", ""},
		{"x stream=http://localhost:1 host=laptop", "http://localhost:1"},
	}
	for _, tt := range tests {
		if got := Locate(tt.identity); got != tt.want {
			t.Errorf("Locate(%q) = %q, want %q", tt.identity, got, tt.want)
		}
	}
}
