package sandbox

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// Proxy is the sandbox side of fence's proxies: the loopback ports they
// listen on inside the sandbox, and the (normalised) domain rules.
type Proxy struct {
	HTTPPort       int      `json:"httpPort"`
	SOCKSPort      int      `json:"socksPort"`
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	DeniedDomains  []string `json:"deniedDomains,omitempty"`
	// LocalPorts are host loopback TCP ports relayed into the sandbox at
	// the same numbers, on 127.0.0.1 and ::1.
	LocalPorts []int `json:"localPorts,omitempty"`
	// AllowPrivateAddresses are the private ranges an allowed name may
	// resolve to (network.allowPrivateAddresses).
	AllowPrivateAddresses []netip.Prefix `json:"allowPrivateAddresses,omitempty"`
	// SSH holds the ssh rules, whose allowedHosts the proxy lets ssh reach.
	SSH policy.SSHPolicy `json:"ssh,omitzero"`
	// Upstream is where the proxies forward the hosts no domain rule
	// names (network.defaultAction "proxy"); its credentials never print.
	Upstream *policy.UpstreamProxy `json:"upstream,omitempty"`
	// Forwards expose ports of the sandbox's loopback on the host (-p).
	Forwards []Forward `json:"forwards,omitempty"`
	// Outer, in a run nested in a fence sandbox, are that sandbox's
	// proxies (see OuterProxy), set by the backend.
	Outer *OuterProxy `json:"outer,omitempty"`
	// RefusalSummary asks for one line at exit when the proxies refused
	// anything (network.refusalSummary).
	RefusalSummary bool `json:"refusalSummary,omitempty"`
	// NoNetwork says --no-network emptied the rules, so that a refusal
	// names the flag.
	NoNetwork bool `json:"noNetwork,omitempty"`
}

// Forward exposes Port of the sandbox's loopback at HostAddr on the host.
type Forward struct {
	HostAddr string `json:"hostAddr"`
	Port     int    `json:"port"`
}

// ParseForward reads a -p value, [ADDR:]PORT, where ADDR defaults to
// 127.0.0.1 and the sandbox port is the same number.
func ParseForward(s string) (Forward, error) {
	addr, port := "127.0.0.1", s
	if i := strings.LastIndex(s, ":"); i >= 0 {
		addr, port = strings.Trim(s[:i], "[]"), s[i+1:]
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return Forward{}, fmt.Errorf("-p %q: want [ADDR:]PORT with a port from 1 to 65535", s)
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return Forward{}, fmt.Errorf("-p %q: %q is not an IP address", s, addr)
	}
	return Forward{HostAddr: netip.AddrPortFrom(ip, uint16(n)).String(), Port: n}, nil
}

// ProxyEnv returns env with the usual proxy variables, in the spellings
// common tools read, pointing at the proxies on 127.0.0.1, in place of
// the caller's (which would point where the sandbox cannot go).
func ProxyEnv(env []string, httpPort, socksPort int) []string {
	httpURL := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	socksURL := fmt.Sprintf("socks5h://127.0.0.1:%d", socksPort)
	var add []string
	for name, v := range map[string]string{"HTTP_PROXY": httpURL, "HTTPS_PROXY": httpURL, "ALL_PROXY": socksURL, "NO_PROXY": "localhost,127.0.0.1,::1"} {
		add = append(add, name+"="+v, strings.ToLower(name)+"="+v)
	}
	slices.Sort(add)
	return append(append(withoutProxyEnv(slices.Clone(env)), add...), "NODE_USE_ENV_PROXY=1")
}

// withoutProxyEnv drops the caller's proxy settings, which would point
// at addresses the sandbox cannot reach.
func withoutProxyEnv(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NODE_USE_ENV_PROXY":
			return true
		}
		return false
	})
}
