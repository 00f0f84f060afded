package report

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestRefusal(t *testing.T) {
	tests := []struct {
		addr  string
		allow string // TODOFLOW_WEBHOOK_ALLOW_NETS
		want  string // part of the refusal; "" when allowed
	}{
		{"8.8.8.8", "", ""},
		{"172.32.0.1", "", ""},
		{"100.128.0.1", "", ""},
		{"2001:4860:4860::8888", "", ""},
		{"64:ff9b::808:808", "", ""}, // NAT64 to 8.8.8.8

		{"127.0.0.1", "", "loopback"},
		{"127.8.9.10", "", "loopback"},
		{"::1", "", "loopback"},
		{"0.0.0.0", "", `"this network"`},
		{"::", "", "unspecified"},
		{"10.1.2.3", "", "private (RFC 1918)"},
		{"172.16.0.1", "", "private (RFC 1918)"},
		{"172.31.255.255", "", "private (RFC 1918)"},
		{"192.168.1.1", "", "private (RFC 1918)"},
		{"100.64.0.1", "", "carrier-grade NAT"},
		{"100.100.100.200", "", "carrier-grade NAT"}, // a cloud's metadata service
		{"169.254.169.254", "", "link-local (cloud metadata"},
		{"fd00:ec2::254", "", "unique local"},
		{"fe80::1", "", "link-local"},
		{"fe80::1%eth0", "", "link-local"},
		{"fec0::1", "", "site-local"},
		{"224.0.0.1", "", "multicast"},
		{"ff02::1", "", "multicast"},
		{"255.255.255.255", "", "reserved"},
		{"::ffff:127.0.0.1", "", "loopback"},
		{"::ffff:169.254.169.254", "", "link-local"},
		{"::127.0.0.1", "", "IPv4-compatible"},
		{"64:ff9b::a9fe:a9fe", "", "a way to 169.254.169.254, which is link-local"},
		{"64:ff9b:1::a00:1", "", "local-use NAT64"},
		{"2002:7f00:1::1", "", "a way to 127.0.0.1, which is loopback"},

		{"127.0.0.1", "127.0.0.0/8", ""},
		{"127.0.0.1", "127.0.0.1", ""},
		{"::ffff:127.0.0.1", "127.0.0.1", ""},
		{"64:ff9b::7f00:1", "127.0.0.1", ""},
		{"::1", "::1", ""},
		{"10.1.2.3", "10.1.0.0/16", ""},
		{"10.2.0.1", "10.1.0.0/16", "private"},
		{"169.254.169.254", "127.0.0.0/8, 10.0.0.0/8", "link-local"},
		{"::1", "127.0.0.0/8", "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.addr+" allow "+tt.allow, func(t *testing.T) {
			t.Setenv(WebhookAllowNetsEnv, tt.allow)
			allow, err := webhookAllowNets()
			if err != nil {
				t.Fatal(err)
			}
			got := refusal(netip.MustParseAddr(tt.addr), allow)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("refusal(%s) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}

func TestWebhookAllowNets(t *testing.T) {
	tests := []struct {
		value   string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{" , ", nil, ""},
		{"127.0.0.1", []string{"127.0.0.1/32"}, ""},
		{"10.0.0.0/8, ::1\n192.168.7.0/24", []string{"10.0.0.0/8", "::1/128", "192.168.7.0/24"}, ""},
		{"10.1.2.3/8", []string{"10.0.0.0/8"}, ""},
		{"127.0.0.1, localhost", nil, `"localhost" is neither a CIDR prefix`},
		{"10.0.0.0/33", nil, `"10.0.0.0/33"`},
		{"fe80::1%eth0", nil, `"fe80::1%eth0"`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Setenv(WebhookAllowNetsEnv, tt.value)
			got, err := webhookAllowNets()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), WebhookAllowNetsEnv) {
					t.Fatalf("error %v, want one naming %s and containing %q", err, WebhookAllowNetsEnv, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if !slices.Equal(s, tt.want) {
				t.Errorf("webhookAllowNets() = %q, want %q", s, tt.want)
			}
		})
	}
}

// A dial whose context carries no allowed prefixes allows none: the check
// fails closed.
func TestCheckDialAddr(t *testing.T) {
	allowLoopback := withAllowNets(context.Background(), []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	tests := []struct {
		name    string
		ctx     context.Context
		address string
		refused bool
	}{
		{"public", context.Background(), "93.184.215.14:443", false},
		{"loopback, nothing allowed", context.Background(), "127.0.0.1:80", true},
		{"loopback allowed", allowLoopback, "127.0.0.1:80", false},
		{"metadata, loopback allowed", allowLoopback, "169.254.169.254:80", true},
		{"zoned link-local", context.Background(), "[fe80::1%eth0]:80", true},
		{"not an address", context.Background(), "example.com:80", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkDialAddr(tt.ctx, "tcp", tt.address, nil)
			_, isRefusal := errors.AsType[*refusedAddrError](err)
			if tt.refused != isRefusal || (err != nil && !isRefusal) {
				t.Errorf("checkDialAddr(%s) = %v, want refused %v", tt.address, err, tt.refused)
			}
		})
	}
}
