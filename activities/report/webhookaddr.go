package report

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"unicode"

	"github.com/todoflow/todoflow/internal/text"
)

// WebhookAllowNetsEnv names the worker's environment variable that lets
// webhooks reach addresses they are otherwise refused (see refusedNets): a
// list of CIDR prefixes or single addresses, separated by commas or spaces,
// e.g. "10.20.0.0/16, 127.0.0.1". Unset or empty, none is allowed.
const WebhookAllowNetsEnv = "TODOFLOW_WEBHOOK_ALLOW_NETS"

// refusedNets are the addresses a webhook is not posted to unless
// TODOFLOW_WEBHOOK_ALLOW_NETS covers them: the worker's own machine and the
// networks only it can reach, where a URL from a run's input could read a
// cloud metadata service or an internal API with the worker's standing. Each
// says what it is, after "is", for the error. The first that holds an address
// names it, so a narrow prefix comes before a wider one that holds it.
var refusedNets = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `in 0.0.0.0/8, "this network" (0.0.0.0 reaches the worker's own machine)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (carrier-grade NAT, RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata services answer at 169.254.169.254)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (255.255.255.255 is broadcast)"},
	{netip.MustParsePrefix("::/128"), "unspecified (it reaches the worker's own machine)"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215), which may lead to any private IPv4 address"},
	{netip.MustParsePrefix("fc00::/7"), "unique local, IPv6's private (cloud metadata services answer at fd00:ec2::254)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated; routed as private where still in use)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Prefixes of IPv6 addresses that carry an IPv4 address, which is the one
// reached: NAT64's well-known prefix (RFC 6052), in the last 32 bits, and
// 6to4 (RFC 3056), in the 32 bits after the first 16. (IPv4-mapped
// addresses, ::ffff:a.b.c.d, are unmapped first.)
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// refusedAddrError is a dial the address check stopped.
type refusedAddrError struct {
	addr string
	what string
}

func (e *refusedAddrError) Error() string {
	return fmt.Sprintf("%s is %s: the worker posts webhooks to such an address only if %s covers it",
		e.addr, e.what, WebhookAllowNetsEnv)
}

// refusal says why a webhook may not reach ip ("" when it may), given the
// prefixes the operator allows.
func refusal(ip netip.Addr, allow []netip.Prefix) string {
	if !ip.IsValid() {
		return "not an IP address"
	}
	// A zone (fe80::1%eth0) would make Prefix.Contains false for every
	// prefix, and so let a link-local address through.
	ip = ip.WithZone("").Unmap()
	reached := ip
	if v4, ok := embeddedIPv4(ip); ok {
		reached = v4
	}
	for _, p := range allow {
		if p.Contains(ip) || p.Contains(reached) {
			return ""
		}
	}
	for _, n := range refusedNets {
		if n.prefix.Contains(reached) {
			if reached != ip {
				return fmt.Sprintf("a way to %s, which is %s", reached, n.what)
			}
			return n.what
		}
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address an IPv6 address of NAT64 or 6to4
// leads to.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case !ip.Is6():
		return netip.Addr{}, false
	case nat64Prefix.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// webhookAllowNets reads TODOFLOW_WEBHOOK_ALLOW_NETS. Its errors name the
// entry: addresses are not secrets, and the operator needs to find it.
func webhookAllowNets() ([]netip.Prefix, error) {
	raw := os.Getenv(WebhookAllowNetsEnv)
	var allow []netip.Prefix
	for _, e := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			a, aerr := netip.ParseAddr(e)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("webhook reporter: %s: %q is neither a CIDR prefix (10.0.0.0/8) nor an address (127.0.0.1)",
					WebhookAllowNetsEnv, text.SpaceControls(e))
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		allow = append(allow, p.Masked())
	}
	return allow, nil
}

// allowNetsKey carries a delivery's allowed prefixes to checkDialAddr.
type allowNetsKey struct{}

func withAllowNets(ctx context.Context, allow []netip.Prefix) context.Context {
	return context.WithValue(ctx, allowNetsKey{}, allow)
}

// checkDialAddr is webhookClient's dialer's ControlContext: it runs once the
// name is resolved, for each address tried, before connecting. A dial
// without allowed prefixes in its context allows none, so a missing
// setting refuses rather than lets through.
func checkDialAddr(ctx context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedAddrError{addr: address, what: "not an IP address and port"}
	}
	allow, _ := ctx.Value(allowNetsKey{}).([]netip.Prefix)
	if what := refusal(ap.Addr(), allow); what != "" {
		return &refusedAddrError{addr: ap.Addr().String(), what: what}
	}
	return nil
}
