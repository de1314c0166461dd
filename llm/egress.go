package llm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// An admin can point a custom provider at any URL, and Knobs then sends
// requests there from inside its own network. Loopback and private (RFC
// 1918) addresses stay allowed, since Ollama, vLLM and llama.cpp on this
// machine or the LAN are what custom providers are mostly for. Link-local
// and cloud metadata addresses are refused: behind them sit the instance's
// credentials (169.254.169.254 and its kin), and no model server lives
// there. The check runs at dial time, on the address DNS gave, so that a
// name which resolves elsewhere at save time and to a metadata address
// later (DNS rebinding) is still refused.

// AllowLinkLocalVariable is the setting that lifts the refusal, named in
// the refusal so that an admin who needs it knows what to set.
const AllowLinkLocalVariable = "KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS"

// metadataHosts are the names clouds give their metadata services. They
// resolve to refused addresses anyway; naming them refuses them before
// any lookup, and through an HTTP proxy, which resolves names itself.
var metadataHosts = map[string]bool{
	"metadata.google.internal":     true,
	"metadata.goog":                true,
	"metadata":                     true,
	"instance-data":                true,
	"instance-data.ec2.internal":   true,
	"metadata.azure.internal":      true,
	"metadata.tencentyun.com":      true,
	"metadata.platformequinix.com": true,
}

// metadataAddrs are metadata services outside the link-local ranges.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
}

// nat64 is the well-known NAT64 prefix, through which an IPv6-only host
// reaches an IPv4 address such as 169.254.169.254.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// UpstreamAddressError is a refusal to connect to a provider's address.
type UpstreamAddressError struct {
	Host string // as the URL or DNS gave it
}

func (e *UpstreamAddressError) Error() string {
	return fmt.Sprintf("Knobs does not connect to %s: it is a link-local or cloud metadata address, where no model server lives but the machine's credentials may; set %s=true to allow it", e.Host, AllowLinkLocalVariable)
}

// refusedAddr reports whether ip is link-local or a cloud metadata
// service, in any of its IPv6 spellings.
func refusedAddr(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || metadataAddrs[ip]
}

// checkUpstreamIP refuses an IP literal that refusedAddr covers; anything
// that is not an IP passes.
func checkUpstreamIP(s string) error {
	ip, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err == nil && refusedAddr(ip) {
		return &UpstreamAddressError{Host: s}
	}
	return nil
}

// checkUpstreamHost refuses a host (name or IP literal, without port)
// that is a metadata name or a refused address, without resolving it.
func checkUpstreamHost(host string) error {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataHosts[name] {
		return &UpstreamAddressError{Host: host}
	}
	return checkUpstreamIP(host)
}

// CheckUpstream says why Knobs would refuse to send requests to the host
// of an http(s) base URL, or returns nil. It resolves the name, with a
// short timeout, so that an admin hears at once about a name pointing at
// a metadata address; a name that does not resolve now passes, and the
// dial-time check still stands.
func CheckUpstream(ctx context.Context, host string) error {
	if err := checkUpstreamHost(host); err != nil {
		return err
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range addrs {
		if refusedAddr(ip) {
			return &UpstreamAddressError{Host: host + " (" + ip.String() + ")"}
		}
	}
	return nil
}

// guardedDialer dials like http.DefaultTransport but refuses refused
// addresses after DNS resolution: Control sees the address being
// connected to.
func guardedDialer() *net.Dialer {
	return &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			return checkUpstreamIP(host)
		},
	}
}

// guard makes t refuse link-local and metadata addresses: names and
// literals before a proxy is chosen (a proxy resolves names itself, out
// of our sight), resolved addresses when dialling.
func guard(t *http.Transport) {
	proxy := t.Proxy
	t.Proxy = func(r *http.Request) (*url.URL, error) {
		if err := checkUpstreamHost(r.URL.Hostname()); err != nil {
			return nil, err
		}
		if proxy == nil {
			return nil, nil
		}
		return proxy(r)
	}
	t.DialContext = guardedDialer().DialContext
}

// noRedirects is every client's CheckRedirect: the 3xx answer itself
// comes back to the caller, which refuses it with redirectError.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// redirectError is the Error of a 3xx answer: Knobs never follows one,
// so that the key goes only to the address the admin set.
func redirectError(status int, h http.Header) *Error {
	where := "elsewhere"
	if loc, err := url.Parse(h.Get("Location")); err == nil && loc.Host != "" {
		where = "to " + loc.Scheme + "://" + loc.Host
	} else if err == nil && loc.Path != "" {
		where = "to the path " + truncate(loc.Path, 100)
	}
	return &Error{Kind: ErrBadResponse, Status: status,
		Message: fmt.Sprintf("the provider answered with a redirect (%d %s) %s; Knobs does not follow redirects, so that the key is sent only to the address set: correct the base URL", status, http.StatusText(status), where)}
}
